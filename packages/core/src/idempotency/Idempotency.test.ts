import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Deferred, Duration, Effect, Fiber, TestClock } from "effect"
import { IdempotencyConflict } from "../shared/Errors.js"
import { CLAIM_LEASE, fingerprint, REPLAY_WINDOW_MS, runIdempotent } from "./Idempotency.js"
import type { IdempotencyCompletion } from "./IdempotencyStore.js"
import { IdempotencyStore } from "./IdempotencyStore.js"

const scope = { partnerId: "ptnr_1", route: "POST /v1/merchants", key: "k" }
const reply = (body: string) => Effect.succeed({ status: 201, body })

describe("runIdempotent", () => {
  it("fingerprints JSON bodies regardless of key order", () => {
    const a = fingerprint({
      method: "POST",
      route: "r",
      merchantId: undefined,
      body: { a: 1, b: [1, { c: 2, d: 3 }] }
    })
    const b = fingerprint({
      method: "POST",
      route: "r",
      merchantId: undefined,
      body: { b: [1, { d: 3, c: 2 }], a: 1 }
    })
    const c = fingerprint({
      method: "POST",
      route: "r",
      merchantId: "mrch_x",
      body: { a: 1, b: [1, { c: 2, d: 3 }] }
    })
    expect(a).toBe(b)
    expect(a).not.toBe(c)
  })

  it.effect("runs the work once and replays its response", () =>
    Effect.gen(function* () {
      let runs = 0
      const once = runIdempotent({
        scope,
        fingerprint: "fp",
        work: (complete) =>
          Effect.gen(function* () {
            runs++
            const response = { status: 201, body: `run ${runs}` }
            yield* (yield* IdempotencyStore).complete(complete(response))
            return response
          })
      })
      expect(yield* once).toEqual({ status: 201, body: "run 1" })
      expect(yield* once).toEqual({ status: 201, body: "run 1" })
      expect(runs).toBe(1)
      const other = yield* Effect.flip(
        runIdempotent({ scope, fingerprint: "other", work: () => reply("x") })
      )
      expect(other).toEqual(new IdempotencyConflict({ reason: "different_request" }))
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("makes a concurrent request wait for the first, then answer 409 after the bound", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        runIdempotent({
          scope,
          fingerprint: "fp",
          work: () => Effect.zipRight(Deferred.await(gate), reply("first"))
        })
      )
      yield* TestClock.adjust(Duration.millis(1))
      const second = yield* Effect.fork(
        Effect.flip(runIdempotent({ scope, fingerprint: "fp", work: () => reply("second") }))
      )
      yield* TestClock.adjust(Duration.seconds(6))
      expect(yield* Fiber.join(second)).toEqual(new IdempotencyConflict({ reason: "in_progress" }))
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(first)).body).toBe("first")
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("frees the key when the work fails, so the request can be retried", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.flip(
        runIdempotent({ scope, fingerprint: "fp", work: () => Effect.fail("refused" as const) })
      )
      expect(failed).toBe("refused")
      const retried = yield* runIdempotent({
        scope,
        fingerprint: "other",
        work: () => reply("retry")
      })
      expect(retried.body).toBe("retry")
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("keeps a failure that is an answer, and replays it", () =>
    Effect.gen(function* () {
      const run = runIdempotent({
        scope,
        fingerprint: "fp",
        work: () => Effect.fail("conflict" as const),
        recordFailure: () => ({ status: 409, body: "conflict" })
      })
      expect(yield* run).toEqual({ status: 409, body: "conflict" })
      expect(
        yield* runIdempotent({ scope, fingerprint: "fp", work: () => reply("never") })
      ).toEqual({
        status: 409,
        body: "conflict"
      })
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("replays a key within its window and takes it as a new request past it", () =>
    Effect.gen(function* () {
      let runs = 0
      const run = (fp: string) =>
        runIdempotent({
          scope,
          fingerprint: fp,
          work: (complete) =>
            Effect.gen(function* () {
              runs++
              const response = { status: 201, body: `run ${runs}` }
              yield* (yield* IdempotencyStore).complete(complete(response))
              return response
            })
        })
      expect((yield* run("fp")).body).toBe("run 1")
      // The last moment of the window: a replay, another request a conflict.
      yield* TestClock.adjust(Duration.millis(REPLAY_WINDOW_MS))
      expect((yield* run("fp")).body).toBe("run 1")
      expect(yield* Effect.flip(run("other"))).toEqual(
        new IdempotencyConflict({ reason: "different_request" })
      )
      // Past it the record is still kept (the purge's retention is longer), but not replayed:
      // the same key is a new request, whichever.
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* run("other")).body).toBe("run 2")
      expect((yield* run("other")).body).toBe("run 2")
      expect(runs).toBe(2)
    }).pipe(Effect.provide(MemoryStorage))
  )

  /** Work that records its response through the store, as the real stores do in their writes. */
  const recordedWork =
    (body: string, before: Effect.Effect<void> = Effect.void) =>
    (complete: (r: { status: number; body: string }) => IdempotencyCompletion) =>
      Effect.gen(function* () {
        yield* before
        const response = { status: 201, body }
        yield* (yield* IdempotencyStore).complete(complete(response))
        return response
      })

  it.effect("renews the claim while slow work runs, so it is never taken over", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slow = yield* Effect.fork(
        runIdempotent({
          scope,
          fingerprint: "fp",
          work: recordedWork("slow", Deferred.await(gate))
        })
      )
      yield* TestClock.adjust(Duration.times(CLAIM_LEASE, 4))
      const waiter = yield* Effect.fork(
        Effect.flip(runIdempotent({ scope, fingerprint: "fp", work: recordedWork("taken") }))
      )
      yield* TestClock.adjust(Duration.seconds(6))
      expect(yield* Fiber.join(waiter)).toEqual(new IdempotencyConflict({ reason: "in_progress" }))
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(slow)).body).toBe("slow")
      expect(
        (yield* runIdempotent({ scope, fingerprint: "fp", work: recordedWork("x") })).body
      ).toBe("slow")
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("takes over the key of a request that died, once its lease has run out", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const start = yield* TestClock.currentTimeMillis
      // A claim nobody renews: its process is gone.
      yield* store.claim(scope, "fp", "dead", new Date(start), new Date(0))
      const retry = yield* Effect.fork(
        runIdempotent({ scope, fingerprint: "fp", work: recordedWork("retried") })
      )
      yield* TestClock.adjust(Duration.sum(CLAIM_LEASE, Duration.millis(100)))
      expect((yield* Fiber.join(retry)).body).toBe("retried")
    }).pipe(Effect.provide(MemoryStorage))
  )

  it.effect("a stalled request whose key was taken over answers 409 and writes nothing", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const gate = yield* Deferred.make<void>()
      const stalled = yield* Effect.fork(
        Effect.flip(
          runIdempotent({
            scope,
            fingerprint: "fp",
            work: recordedWork("stalled", Deferred.await(gate))
          })
        )
      )
      yield* TestClock.adjust(Duration.millis(1))
      // Another instance judged it dead (say its clock ran ahead) and took the key.
      const now = yield* TestClock.currentTimeMillis
      expect(
        (yield* store.claim(scope, "fp", "taker", new Date(now), new Date(now + 1)))._tag
      ).toBe("Claimed")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(stalled)).toEqual(new IdempotencyConflict({ reason: "in_progress" }))
      // The key is still the taker's: not released, not completed by the stalled request.
      expect(yield* store.renew(scope, "taker", new Date(now))).toBe(true)
      yield* store.complete({ scope, token: "taker", response: { status: 201, body: "taker" } })
      expect(
        (yield* runIdempotent({ scope, fingerprint: "fp", work: recordedWork("x") })).body
      ).toBe("taker")
    }).pipe(Effect.provide(MemoryStorage))
  )
})
