import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Exit, Fiber, Scope, TestClock } from "effect"
import { makeSharedReads } from "./SharedReads.js"

/** A read that counts itself, says it started, and waits for `gate` before it answers. */
const gatedRead = <A>(answer: A) =>
  Effect.gen(function* () {
    const gate = yield* Deferred.make<void>()
    const started = yield* Deferred.make<void>()
    const state = { reads: 0, finished: 0 }
    const read = Effect.gen(function* () {
      state.reads++
      yield* Deferred.succeed(started, undefined)
      yield* Deferred.await(gate)
      state.finished++
      return answer
    })
    return { gate, started, state, read }
  })

describe("shared reads", () => {
  it.scoped("reads once for every concurrent caller, again only a TTL after the read ended", () =>
    Effect.gen(function* () {
      const shared = yield* makeSharedReads(5_000)
      const { gate, started, state, read } = yield* gatedRead(42n)
      const callers = yield* Effect.forEach(
        Array.from({ length: 10 }, () => shared("k", read)),
        (c) => Effect.fork(c)
      )
      yield* Deferred.await(started)
      // The read is held: still one, however long it takes.
      yield* TestClock.adjust("10 seconds")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Effect.forEach(callers, Fiber.join)).toEqual(Array(10).fill(42n))
      expect(state.reads).toBe(1)
      yield* TestClock.adjust(4_999)
      yield* shared("k", read)
      expect(state.reads).toBe(1)
      yield* TestClock.adjust(1)
      yield* shared("k", read)
      expect(state.reads).toBe(2)
      // Another key is another read.
      yield* shared("other", read)
      expect(state.reads).toBe(3)
    })
  )

  it.scoped("keeps a failure for the TTL too", () =>
    Effect.gen(function* () {
      const shared = yield* makeSharedReads(5_000)
      let reads = 0
      const failing = Effect.suspend(() => {
        reads++
        return Effect.fail("down" as const)
      })
      expect(yield* Effect.either(shared("f", failing))).toEqual(Either.left("down"))
      expect(yield* Effect.either(shared("f", failing))).toEqual(Either.left("down"))
      expect(reads).toBe(1)
      yield* TestClock.adjust(5_000)
      yield* Effect.either(shared("f", failing))
      expect(reads).toBe(2)
    })
  )

  it.scoped("a caller given up on does not cut the read the others wait for", () =>
    Effect.gen(function* () {
      const shared = yield* makeSharedReads(5_000)
      const { gate, started, state, read } = yield* gatedRead(7n)
      const first = yield* Effect.fork(shared("s", read))
      const second = yield* Effect.fork(shared("s", read))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(second)).toBe(7n)
      expect(state).toEqual({ reads: 1, finished: 1 })
    })
  )

  it.effect("closing the scope stops the reads in flight: none outlives its owner", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const shared = yield* Scope.extend(makeSharedReads(5_000), scope)
      const { gate, started, state, read } = yield* gatedRead(1n)
      const caller = yield* Effect.fork(shared("s", read))
      yield* Deferred.await(started)
      expect(state.reads).toBe(1)
      yield* Scope.close(scope, Exit.void)
      yield* Fiber.interrupt(caller)
      // Let go: a read still running (a daemon's, say) would finish now.
      yield* Deferred.succeed(gate, undefined)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      expect(state.finished).toBe(0)
    })
  )

  it.scoped("starts over when full: the first key is read again", () =>
    Effect.gen(function* () {
      const shared = yield* makeSharedReads(5_000, 2)
      let reads = 0
      const read = Effect.sync(() => ++reads)
      yield* shared("a", read)
      yield* shared("b", read)
      yield* shared("a", read)
      expect(reads).toBe(2)
      yield* shared("c", read)
      yield* shared("a", read)
      expect(reads).toBe(4)
    })
  )
})
