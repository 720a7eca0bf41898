/**
 * Group commit on a real SQLite file, with the runtime's driver: concurrent
 * writes share commits, each is answered only once its commit is visible to
 * another connection, a write that throws fails alone, nested transactions
 * work inside, and an interrupted write that has not run never runs. On a
 * file, a batch's writes are answered only once the WAL's fsync (off the event
 * loop) has ended, and fail if it fails.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Fiber } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeGroupCommit } from "./GroupCommit.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import type { SqliteConnection } from "./SqliteDatabase.js"
import { makeWalSync } from "./WalSync.js"

let dir: string
let db: SqliteConnection
let reader: SqliteConnection

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pay-group-commit-"))
  const file = join(dir, "g.sqlite")
  db = runtimeDriver.openConnection(file)
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
  reader = runtimeDriver.openConnection(file)
})

afterEach(() => {
  reader.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const countIn = (c: SqliteConnection) =>
  (c.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n

describe(`group commit (${runtimeDriverName})`, () => {
  it("100 concurrent writes share a few commits, and each is answered only once another connection sees it", async () => {
    const writes = makeGroupCommit(db)
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
    const seenWhenAnswered: Array<number> = []
    await Effect.runPromise(
      Effect.all(
        Array.from({ length: 100 }, (_, i) =>
          writes
            .write(() => Number(insert.run(`v${i}`).changes))
            .pipe(
              Effect.tap(() =>
                Effect.sync(() => {
                  const row = reader.prepare("SELECT count(*) AS n FROM t WHERE v = ?").get(`v${i}`)
                  seenWhenAnswered.push((row as { n: number }).n)
                })
              )
            )
        ),
        { concurrency: "unbounded" }
      )
    )
    expect(seenWhenAnswered).toEqual(Array.from({ length: 100 }, () => 1))
    expect(countIn(reader)).toBe(100)
    const { batches, writes: n } = writes.stats()
    expect(n).toBe(100)
    expect(batches).toBeLessThan(10)
  })

  it("a write that throws is rolled back alone and fails with its error; the others of its batch commit", async () => {
    const writes = makeGroupCommit(db)
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
    const exits = await Effect.runPromise(
      Effect.all(
        [
          writes.write(() => insert.run("a")),
          // Half written, then a constraint fails: none of it is kept.
          writes.write(() => {
            insert.run("half")
            insert.run("a")
          }),
          writes.write(() => insert.run("b"))
        ].map(Effect.exit),
        { concurrency: "unbounded" }
      )
    )
    expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
    const failure = exits[1]!
    expect(Exit.isFailure(failure) && String(Cause.squash(failure.cause))).toMatch(/UNIQUE/)
    const values = (reader.prepare("SELECT v FROM t ORDER BY v").all() as Array<{ v: string }>).map(
      (r) => r.v
    )
    expect(values).toEqual(["a", "b"])
    expect(writes.stats().batches).toBe(1)
  })

  it("runs a body's own transaction inside as a nested one, rolled back with it when it throws", async () => {
    const writes = makeGroupCommit(db)
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
    await Effect.runPromise(
      Effect.all(
        [
          writes.write(() => db.transaction(() => insert.run("x"))),
          Effect.exit(
            writes.write(() =>
              db.transaction(() => {
                insert.run("y")
                throw new Error("changed its mind")
              })
            )
          )
        ],
        { concurrency: "unbounded" }
      )
    )
    expect(countIn(reader)).toBe(1)
  })

  it("an interrupted write that has not run yet never runs", async () => {
    const writes = makeGroupCommit(db)
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
    await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(writes.write(() => insert.run("never")))
        while (writes.stats().queued === 0) yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        expect(writes.stats().queued).toBe(0)
        yield* writes.write(() => insert.run("after"))
      })
    )
    const values = (reader.prepare("SELECT v FROM t").all() as Array<{ v: string }>).map((r) => r.v)
    expect(values).toEqual(["after"])
  })

  describe("with the WAL's fsync off the event loop", () => {
    /** A WalSync on the real file whose fsyncs the test lets go of, one by one. */
    const heldSync = (file: string) => {
      const held: Array<{ release: () => void; fail: (e: Error) => void }> = []
      let fsyncs = 0
      const sync = makeWalSync(file, (path) => {
        fsyncs++
        expect(path).toBe(`${file}-wal`)
        return new Promise<void>((resolve, reject) => {
          held.push({ release: resolve, fail: reject })
        })
      })
      return { sync, held, fsyncs: () => fsyncs }
    }
    const synchronousOf = (c: SqliteConnection) =>
      (c.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous

    it("answers a batch's writes only once its fsync has ended, committed before it started", async () => {
      const file = join(dir, "g.sqlite")
      const { sync, held, fsyncs } = heldSync(file)
      const writes = makeGroupCommit(db, { walSync: sync })
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
      const answered: Array<string> = []
      const all = Effect.runPromise(
        Effect.all(
          ["a", "b", "c"].map((v) =>
            writes.write(() => insert.run(v)).pipe(Effect.tap(() => answered.push(v)))
          ),
          { concurrency: "unbounded" }
        )
      )
      while (held.length === 0) await new Promise((r) => setImmediate(r))
      // Committed (another connection sees it), not answered: the fsync has not ended.
      expect(countIn(reader)).toBe(3)
      expect(answered).toEqual([])
      // The connection's other writes keep FULL (2); only the batch's commit was NORMAL (1).
      expect(synchronousOf(db)).toBe(2)
      // A write queued meanwhile commits at once and waits for the next fsync, which starts
      // only after the running one: it covers that commit.
      const late = Effect.runPromise(writes.write(() => insert.run("d")))
      while (writes.stats().writes < 4) await new Promise((r) => setImmediate(r))
      expect(fsyncs()).toBe(1)
      held[0]!.release()
      await all
      expect(answered.sort()).toEqual(["a", "b", "c"])
      while (held.length < 2) await new Promise((r) => setImmediate(r))
      expect(fsyncs()).toBe(2)
      held[1]!.release()
      await late
      expect(countIn(reader)).toBe(4)
    })

    it("fails every write of a batch whose fsync fails, though committed", async () => {
      const file = join(dir, "g.sqlite")
      const { sync, held } = heldSync(file)
      const writes = makeGroupCommit(db, { walSync: sync })
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
      const exits = Effect.runPromise(
        Effect.all(
          ["a", "b"].map((v) => Effect.exit(writes.write(() => insert.run(v)))),
          { concurrency: "unbounded" }
        )
      )
      while (held.length === 0) await new Promise((r) => setImmediate(r))
      held[0]!.fail(new Error("EIO: i/o error, fsync"))
      const outcomes = await exits
      expect(outcomes.map(Exit.isFailure)).toEqual([true, true])
      expect(String(Cause.squash((outcomes[0] as Exit.Failure<unknown, unknown>).cause))).toMatch(
        /EIO/
      )
    })

    it("runs a real fsync of the file's WAL, one for writes that ask together", async () => {
      const file = join(dir, "g.sqlite")
      let fsyncs = 0
      const real = makeWalSync(file)
      const counted = makeWalSync(file, async () => {
        fsyncs++
        await real.afterCommit()
      })
      const writes = makeGroupCommit(db, { walSync: counted, maxBatch: 10 })
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)")
      await Effect.runPromise(
        Effect.all(
          Array.from({ length: 50 }, (_, i) => writes.write(() => insert.run(`v${i}`))),
          { concurrency: "unbounded" }
        )
      )
      expect(countIn(reader)).toBe(50)
      // Five batches, each asking as it commits: the first fsync runs, the other four share
      // the one after it.
      expect(writes.stats().batches).toBe(5)
      expect(fsyncs).toBe(2)
    })
  })
})
