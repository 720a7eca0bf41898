/**
 * Migration 0027 on PostgreSQL, over rows written before it: the options'
 * method CHECK replaced by one that takes `native` (and nothing else new), the
 * transfers recorded before worth 0, no network fee on the fees written
 * before, and the new table and indexes in place. The schema is migrated
 * whole, its rows written by the stores, then 0027 undone and run again.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { engineConfig, payEngineLayer } from "@pay/core"
import { nativeCoinMigration } from "@pay/core/contracts"
import { Context, Effect, Layer } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import nativeCoin from "./migrations/0027_native_coin.js"

/** What 0027 added, taken away again: the schema as 0026 left it. */
const UNDO = [
  "DROP INDEX payments_owed",
  "DROP TABLE returnable_funds",
  "DROP INDEX chain_jobs_claimed_transfer",
  "ALTER TABLE payments DROP COLUMN fee_network",
  "ALTER TABLE chain_transfers DROP COLUMN value",
  `ALTER TABLE payment_options DROP CONSTRAINT payment_options_method_check,
    ADD CONSTRAINT payment_options_method_check CHECK (method IN ('eip3009', 'permit2'))`
]

describe("PostgreSQL native coin, migration 0027", () => {
  it.effect(
    "upgrades rows written before it: options kept, native taken, old transfers worth 0",
    () =>
      Effect.gen(function* () {
        const storage = yield* Layer.build(freshStorage())
        const sql = Context.get(storage, SqlClient.SqlClient)
        const engine = payEngineLayer({
          storage: Layer.succeedContext(storage),
          config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
        })
        const written = yield* nativeCoinMigration.writeRowsBefore.pipe(Effect.provide(engine))

        for (const statement of UNDO) yield* sql.unsafe(statement)
        const refused = yield* Effect.exit(
          sql`UPDATE payment_options SET method = 'native' WHERE id = ${written.options[0]!.id}`
        )
        expect(refused._tag).toBe("Failure")
        // The migration itself: the Migrator would not run it again below later ones.
        yield* sql.withTransaction(nativeCoin).pipe(Effect.provideService(SqlClient.SqlClient, sql))

        const checks = yield* sql<{ readonly name: string; readonly definition: string }>`
        SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'payment_options'::regclass AND contype = 'c'`
        expect(checks.map((c) => c.name)).toEqual(["payment_options_method_check"])
        expect(checks[0]!.definition).toContain("native")
        const other = yield* Effect.exit(sql`UPDATE payment_options SET method = 'other'`)
        expect(other._tag).toBe("Failure")

        yield* nativeCoinMigration.readBackAfter(written).pipe(Effect.provide(engine))
      }).pipe(Effect.scoped)
  )
})
