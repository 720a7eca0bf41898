/**
 * Group commit on a real SQLite file, with the runtime's driver: concurrent
 * writes share commits, each is answered only once its commit is visible to
 * another connection, a write that throws fails alone, nested transactions
 * work inside, and an interrupted write that has not run never runs.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Fiber } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeGroupCommit } from "./GroupCommit.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import type { SqliteConnection } from "./SqliteDatabase.js"

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
})
