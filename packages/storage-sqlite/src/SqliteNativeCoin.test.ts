/**
 * Migration 0026 on SQLite: a database made before it upgrades in place.
 * `payment_options` is rebuilt to take `native` (SQLite cannot alter a CHECK):
 * its rows, indexes and foreign key are kept whole; the transfers recorded
 * before read back with a value of 0; fees written before have no network
 * part. The rows are the stores' own, written at the current schema and copied
 * into a file migrated up to 0025 (the columns both have).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { engineConfig, payEngineLayer } from "@pay/core"
import { nativeCoinMigration } from "@pay/core/contracts"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { applyMigrations, migrations } from "./Migrations.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"

const { layer, migrateFile, openConnection } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-native-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const engineOn = (filename: string) =>
  payEngineLayer({
    storage: layer({ filename }),
    config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
  })

/** The tables the rows live in, parents first (their foreign keys). */
const COPIED = [
  "partners",
  "merchants",
  "payments",
  "payment_options",
  "chain_jobs",
  "chain_transfers"
]

describe(`SQLite native coin, migration 0026 (${runtimeDriverName})`, () => {
  it.effect(
    "upgrades a database: options kept whole with their indexes, native taken, old transfers worth 0",
    () =>
      Effect.gen(function* () {
        const current = join(dir, "current.sqlite")
        const written = yield* nativeCoinMigration.writeRowsBefore.pipe(
          Effect.provide(engineOn(current))
        )

        // The same rows in a file as 0025 left it.
        const old = join(dir, "old.sqlite")
        const db = openConnection(old)
        applyMigrations(db, migrations.slice(0, 25))
        db.exec(`ATTACH DATABASE '${current}' AS cur`)
        const columnsOf = (schema: string, table: string) =>
          (
            db.prepare(`PRAGMA ${schema}.table_info(${table})`).all() as Array<{ name: string }>
          ).map((c) => c.name)
        for (const table of COPIED) {
          const theirs = new Set(columnsOf("cur", table))
          const columns = columnsOf("main", table)
            .filter((c) => theirs.has(c))
            .join(", ")
          db.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM cur.${table}`)
        }
        db.exec("DETACH DATABASE cur")
        const indexesOf = () =>
          db
            .prepare(
              `SELECT type, name, sql FROM sqlite_schema
                WHERE tbl_name = 'payment_options' AND type IN ('index', 'trigger')
                ORDER BY name`
            )
            .all()
        const optionRows = () => db.prepare("SELECT * FROM payment_options ORDER BY id").all()
        const indexes = indexesOf()
        const rows = optionRows()
        expect(rows).toHaveLength(2)
        expect(indexes.map((i) => (i as { name: string }).name)).toEqual(
          expect.arrayContaining(["payment_options_by_expiry", "payment_options_by_payment_expiry"])
        )
        expect(() =>
          db.exec(
            `UPDATE payment_options SET method = 'native' WHERE id = '${written.options[0]!.id}'`
          )
        ).toThrow(/CHECK constraint failed/)
        db.close()

        // 0026 first, then whatever came after it.
        expect(yield* migrateFile(old)).toEqual(migrations.slice(25).map((m) => [m.id, m.name]))

        // Kept whole: the upgraded file's indexes are a fresh file's (later migrations, as
        // 0029's purge index, change them alike).
        const schemaOf = (connection: ReturnType<typeof openConnection>) =>
          connection
            .prepare(
              `SELECT type, name, sql FROM sqlite_schema
              WHERE tbl_name = 'payment_options' AND type IN ('index', 'trigger') ORDER BY name`
            )
            .all()
        const fresh = openConnection(current)
        const freshIndexes = schemaOf(fresh)
        fresh.close()
        const after = openConnection(old)
        expect(schemaOf(after)).toEqual(freshIndexes)
        // Every column as it was; 0029 adds `kept` (0 until the purge finds the paid option).
        const upgraded = after.prepare("SELECT * FROM payment_options ORDER BY id").all() as Array<
          Record<string, unknown>
        >
        expect(upgraded.map(({ kept: _kept, ...row }) => row)).toEqual(rows)
        expect(upgraded.map((row) => row.kept)).toEqual(rows.map(() => 0))
        expect(after.prepare("PRAGMA foreign_key_check").all()).toEqual([])
        const references = after
          .prepare("PRAGMA foreign_key_list(payment_options)")
          .all() as Array<{
          table: string
        }>
        expect(references.map((r) => r.table)).toEqual(["payments"])
        expect(
          after.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '%_new'").all()
        ).toEqual([])
        // Any other method is refused as before; an option's payment must exist.
        expect(() => after.exec("UPDATE payment_options SET method = 'other'")).toThrow(
          /CHECK constraint failed/
        )
        expect(() => after.exec("UPDATE payment_options SET payment_id = 'pay_missing'")).toThrow(
          /FOREIGN KEY constraint failed/
        )
        after.close()

        // Read back by the stores: every option as written, the transfer worth 0, and a native
        // option stored beside them.
        yield* nativeCoinMigration.readBackAfter(written).pipe(Effect.provide(engineOn(old)))
      })
  )
})
