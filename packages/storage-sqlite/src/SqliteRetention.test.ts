/**
 * The purge on SQLite files: the retention contract, a pass over thousands of
 * rows counted before and after (core's PurgeFixture), and the purge's lease
 * between several connections to one file. Every purge statement names its
 * index (`INDEXED BY`), so SQLite refuses to prepare it rather than scan.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { RetentionStore } from "@pay/core"
import {
  PURGE_NOW,
  type PurgeDatabase,
  purgeFixture,
  retentionStorageContract
} from "@pay/core/contracts"
import { Context, Effect, Layer, TestClock } from "effect"
import { afterAll } from "vitest"
import { bundledForTests } from "../test/TestBundle.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { SqliteDatabase } from "./SqliteDatabase.js"
import type { SqliteReadWorkerOptions } from "./SqliteReadWorker.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-retention-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let n = 0
const fresh = () => layer({ filename: join(dir, `retention-${n++}.sqlite`) })

retentionStorageContract(`SQLite file (${runtimeDriverName})`, fresh)

const onBun = "Bun" in globalThis
// The read worker's program, bundled as the server ships it (none on Bun: no worker there).
const readWorker: SqliteReadWorkerOptions = {
  script: onBun ? new URL("about:blank") : pathToFileURL(bundledForTests("read-worker-node.ts"))
}
const onWorker = () =>
  runtimeDriver.layer({ filename: join(dir, `retention-${n++}.sqlite`), readWorker })

/** Bulk rows in one transaction, times as milliseconds. */
const database = Effect.map(
  SqliteDatabase,
  (db): PurgeDatabase => ({
    insert: (table, columns, rows) =>
      Effect.sync(() => {
        const statement = db.prepare(
          `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`
        )
        db.transaction(() => {
          for (const row of rows) {
            statement.run(...row.map((v) => (v instanceof Date ? v.getTime() : v)))
          }
        })
      }),
    count: (table) =>
      Effect.sync(() => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)
  })
)

describe(`the purge on a SQLite file (${runtimeDriverName})`, () => {
  it.effect(
    "deletes exactly the rows past their retention, in batches; keeps the audit trail by default",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        yield* purgeFixture(yield* database, {})
      }).pipe(Effect.provide(fresh())),
    60_000
  )

  it.effect(
    "deletes the audit trail past its retention once one is set",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        yield* purgeFixture(yield* database, { auditTrailDays: 365 })
      }).pipe(Effect.provide(fresh())),
    60_000
  )

  it.effect(
    "commits its batches on the engine's connection without waiting for the disk, then waits again",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        const db = yield* SqliteDatabase
        const synchronous = () =>
          (db.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous
        expect(synchronous()).toBe(2)
        yield* purgeFixture(yield* database, {})
        // FULL again for every commit after the purge's.
        expect(synchronous()).toBe(2)
      }).pipe(Effect.provide(fresh())),
    60_000
  )

  it.effect.skipIf(onBun)(
    "deletes the same rows from the read worker's thread, with a connection of its own",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        yield* purgeFixture(yield* database, { auditTrailDays: 365 })
      }).pipe(Effect.provide(onWorker())),
    60_000
  )

  it.scoped("gives the purge's lease to one of several connections to the file at a time", () =>
    Effect.gen(function* () {
      const filename = join(dir, `lease-${n++}.sqlite`)
      // The first migrates; the others open the migrated file.
      const first = yield* Layer.build(layer({ filename }))
      const others = yield* Effect.forEach([1, 2, 3], () => Layer.build(layer({ filename })))
      const stores = [first, ...others].map((c) => Context.get(c, RetentionStore))
      const at = (ms: number) => new Date(PURGE_NOW + ms)
      for (const [round, now] of [0, 10_000, 20_000].entries()) {
        const taken = yield* Effect.all(
          stores.map((s, i) => s.takeLease("purge", `instance-${i}`, at(now), at(now + 5_000))),
          { concurrency: "unbounded" }
        )
        expect(taken.filter(Boolean), `round ${round}`).toHaveLength(1)
        // Held: nobody else, however many times they try, until it runs out.
        const again = yield* Effect.all(
          stores.map((s, i) => s.takeLease("purge", `other-${i}`, at(now + 4_999), at(now + 9_000)))
        )
        expect(again.filter(Boolean)).toHaveLength(0)
      }
    })
  )
})
