/**
 * Migration 0022 on SQLite (the case is core's SettlementHeldMigration.ts),
 * and the flag's CHECK.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { settlementHeldMigrationCase } from "@pay/core/contracts"
import { Effect } from "effect"
import { afterAll } from "vitest"
import settlementHeld from "./migrations/0022_settlement_held.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { SqliteDatabase } from "./SqliteDatabase.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-held-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe(`SQLite held settlements, migration 0022 (${runtimeDriverName})`, () => {
  it.effect("marks pending settlements with no active settle job held, and only those", () =>
    Effect.gen(function* () {
      const db = yield* SqliteDatabase
      yield* settlementHeldMigrationCase({
        endSettleJob: (id) =>
          Effect.sync(() =>
            db.prepare("UPDATE chain_jobs SET state = 'done' WHERE payment_id = ?").run(id)
          ),
        migrateAgain: Effect.sync(() => {
          db.exec("ALTER TABLE payments DROP COLUMN settlement_held")
          // The migrator would not run it again below a later one.
          db.transaction(() => settlementHeld(db))
        })
      })
      expect(() => db.exec("UPDATE payments SET settlement_held = 2")).toThrow(
        /CHECK constraint failed/
      )
    }).pipe(Effect.provide(layer({ filename: join(dir, "held.sqlite") })))
  )
})
