/**
 * Listings and statistics on the read worker (SqliteReadWorker.ts), on a real SQLite file:
 * the payment storage contract through it, the same answers as on the engine's connection,
 * its own connection (it does not see a write the engine's connection has not committed),
 * a worker that cannot start failing the reads rather than hanging them, and the WAL's
 * checkpoints on its thread, not the engine's. Node only: the
 * worker's program here is better-sqlite3's (`npm run start:bun` keeps the reads on its
 * thread).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { type PaymentPageQuery, PaymentStore } from "@pay/core"
import { paymentStorageContract, statisticsFixture } from "@pay/core/contracts"
import { Effect, Exit } from "effect"
import { afterAll } from "vitest"
import { bundledForTests } from "../test/TestBundle.js"
import { layer } from "./node.js"
import { SqliteDatabase } from "./SqliteDatabase.js"
import type { SqliteReadWorkerOptions } from "./SqliteReadWorker.js"

const onBun = "Bun" in globalThis
const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-read-worker-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const freshFile = () => join(dir, `reads-${n++}.sqlite`)

// The worker's program bundled, as the standalone server ships it: each test's worker starts in
// a fraction of a second.
// (None on Bun, where the suite is skipped.)
const readWorker: SqliteReadWorkerOptions = {
  script: onBun ? new URL("about:blank") : pathToFileURL(bundledForTests("read-worker-node.ts"))
}
const onWorker = () => layer({ filename: freshFile(), readWorker })

describe.skipIf(onBun)("SQLite reads on a worker thread", () => {
  paymentStorageContract("SQLite file, listings on a read worker", onWorker)

  it.effect(
    "answer as the engine's connection does, the same values and types",
    () =>
      Effect.gen(function* () {
        const filename = freshFile()
        // Seeded and read on the engine's connection, then read again through a worker.
        const onThread = yield* Effect.gen(function* () {
          const fixture = yield* statisticsFixture
          const store = yield* PaymentStore
          const reads = []
          for (const filter of fixture.filters) {
            const query: PaymentPageQuery = {
              filter,
              sortBy: "amount",
              direction: "desc",
              limit: 5
            }
            reads.push({ query, page: yield* store.list(query), stats: yield* store.stats(filter) })
          }
          return reads
        }).pipe(Effect.provide(layer({ filename })))
        expect(onThread.length).toBeGreaterThan(0)
        yield* Effect.gen(function* () {
          const store = yield* PaymentStore
          for (const read of onThread) {
            expect(yield* store.list(read.query)).toStrictEqual(read.page)
            expect(yield* store.stats(read.query.filter)).toStrictEqual(read.stats)
          }
        }).pipe(Effect.provide(layer({ filename, readWorker })))
      }),
    60_000
  )

  it.effect(
    "read on their own connection: a write not yet committed on the engine's is not seen",
    () =>
      Effect.gen(function* () {
        const fixture = yield* statisticsFixture
        const store = yield* PaymentStore
        const db = yield* SqliteDatabase
        const query: PaymentPageQuery = {
          filter: fixture.base,
          sortBy: "date",
          direction: "desc",
          limit: 100
        }
        const before = yield* store.list(query)
        expect(before.length).toBeGreaterThan(0)
        db.exec("BEGIN IMMEDIATE")
        db.prepare("UPDATE payments SET reference_id = 'uncommitted' WHERE id = ?").run(
          before[0]!.id
        )
        const during = yield* store
          .list(query)
          .pipe(Effect.ensuring(Effect.sync(() => db.exec("ROLLBACK"))))
        expect(during).toStrictEqual(before)
      }).pipe(Effect.provide(onWorker())),
    60_000
  )

  it.effect(
    "fail when the worker cannot start, rather than wait",
    () =>
      Effect.gen(function* () {
        const fixture = yield* statisticsFixture
        const store = yield* PaymentStore
        const exit = yield* Effect.exit(store.stats(fixture.base))
        expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(/SQLite read worker/)
      }).pipe(
        Effect.provide(
          layer({
            filename: freshFile(),
            readWorker: { script: new URL("./no-such-worker.mjs", import.meta.url) }
          })
        )
      ),
    60_000
  )

  it.live(
    "checkpoint the WAL on the worker's thread; the engine's connection then never does",
    () => {
      const filename = freshFile()
      return Effect.gen(function* () {
        const db = yield* SqliteDatabase
        const autocheckpoint = () =>
          (db.prepare("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number })
            .wal_autocheckpoint
        expect(autocheckpoint()).toBe(0)
        // Sizes only (stat opens nothing): a descriptor this process opened and closed on
        // the database's files would drop SQLite's POSIX locks on them.
        const sizeOf = (path: string) => statSync(path).size
        db.exec("CREATE TABLE ballast (b BLOB NOT NULL)")
        const insert = db.prepare("INSERT INTO ballast (b) VALUES (randomblob(4000))")
        const before = sizeOf(filename)
        // One commit of 1,500 pages: with SQLite's default it would checkpoint them itself.
        db.transaction(() => {
          for (let i = 0; i < 1500; i++) insert.run()
        })
        expect(sizeOf(`${filename}-wal`)).toBeGreaterThan(1500 * 4000)
        // In the database only once a checkpoint has copied them: the worker's, within a second.
        const deadline = Date.now() + 20_000
        while (sizeOf(filename) < before + 1500 * 4000 && Date.now() < deadline) {
          yield* Effect.sleep("50 millis")
        }
        expect(sizeOf(filename)).toBeGreaterThan(before + 1500 * 4000)
      }).pipe(Effect.provide(layer({ filename, readWorker })))
    },
    60_000
  )

  it.effect("leave checkpoints to SQLite on the engine's connection without a worker", () =>
    Effect.gen(function* () {
      const db = yield* SqliteDatabase
      expect(db.prepare("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 1000 })
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )
})
