/** Migration 0022 on PostgreSQL (the case is core's SettlementHeldMigration.ts). */
import { SqlClient } from "@effect/sql"
import { describe, it } from "@effect/vitest"
import { settlementHeldMigrationCase } from "@pay/core/contracts"
import { Effect } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import settlementHeld from "./migrations/0022_settlement_held.js"

describe("PostgreSQL held settlements, migration 0022", () => {
  it.effect("marks pending settlements with no active settle job held, and only those", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* settlementHeldMigrationCase({
        endSettleJob: (id) => sql`UPDATE chain_jobs SET state = 'done' WHERE payment_id = ${id}`,
        migrateAgain: Effect.gen(function* () {
          yield* sql`ALTER TABLE payments DROP COLUMN settlement_held`
          // The Migrator would not run it again below a later one.
          yield* sql.withTransaction(settlementHeld)
        })
      })
    }).pipe(Effect.provide(freshStorage()))
  )
})
