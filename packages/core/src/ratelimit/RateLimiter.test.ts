import { describe, expect, it } from "@effect/vitest"
import { makeRateLimiter } from "./RateLimiter.js"

const T0 = 1_800_000_000_000

/** A limiter on a clock the test moves. */
const limiterAt = (perSecond: number, burst: number, maxBuckets?: number) => {
  const clock = { now: T0 }
  const limiter = makeRateLimiter(
    "api_key",
    { perSecond, burst },
    { now: () => clock.now, ...(maxBuckets === undefined ? {} : { maxBuckets }) }
  )
  return { clock, limiter }
}

describe("the rate limiter", () => {
  it("keeps one bucket per key: one key spent leaves another whole", () => {
    const { clock, limiter } = limiterAt(1, 2)
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([
      undefined,
      undefined,
      1
    ])
    expect([limiter.take("b"), limiter.take("b")]).toEqual([undefined, undefined])
    clock.now += 1000
    expect([limiter.take("a"), limiter.take("a")]).toEqual([undefined, 1])
  })

  it("counts the tokens each key took since the last drain: admitted requests only", () => {
    const { limiter } = limiterAt(1, 3)
    for (let i = 0; i < 5; i++) limiter.take("a")
    limiter.take("b")
    expect(limiter.drainTaken(T0)).toEqual([
      { key: "a", taken: 3 },
      { key: "b", taken: 1 }
    ])
    expect(limiter.drainTaken(T0)).toEqual([])
  })

  it("alone, stays exactly its own bucket when the shared level agrees", () => {
    const { clock, limiter } = limiterAt(1, 3)
    // Two takes half a second apart: the bucket refilled below its burst in between, which
    // the shared bucket, refilled once at the sync, cannot see. Its level is still the truth.
    limiter.take("a")
    clock.now += 500
    limiter.take("a")
    clock.now += 500
    expect(limiter.drainTaken(clock.now)).toEqual([{ key: "a", taken: 2 }])
    // What the shared bucket says with no other instance: 3 refilled (capped), less 2.
    limiter.reconcile("a", { millitokens: 1000, at: clock.now })
    // The bucket itself holds 2 (1.5 after the second take, half a token since): 2 more.
    expect([limiter.take("a"), limiter.take("a"), limiter.take("a")]).toEqual([
      undefined,
      undefined,
      1
    ])
  })

  it("moves by what the other instances took, keeping what it took while the store was asked", () => {
    const { clock, limiter } = limiterAt(1, 5)
    limiter.take("a")
    expect(limiter.drainTaken(T0)).toEqual([{ key: "a", taken: 1 }])
    // Taken during the sync: still counted once the shared level comes back.
    limiter.take("a")
    // Another instance took 3 as well: the shared bucket holds 5 - 1 - 3 = 1 at T0.
    limiter.reconcile("a", { millitokens: 1000, at: T0 })
    // 3 less the 3 the others took: empty, and a token a second from T0.
    expect(limiter.take("a")).toBe(1)
    clock.now += 1000
    expect([limiter.take("a"), limiter.take("a")]).toEqual([undefined, 1])
    // The take during the sync goes in the next one, with the one after.
    expect(limiter.drainTaken(clock.now)).toEqual([{ key: "a", taken: 2 }])
  })

  it("sends the takes of a failed sync with the next one", () => {
    const { limiter } = limiterAt(1, 5)
    limiter.take("a")
    limiter.take("a")
    expect(limiter.drainTaken(T0)).toEqual([{ key: "a", taken: 2 }])
    limiter.take("a")
    limiter.abandon()
    expect(limiter.drainTaken(T0)).toEqual([{ key: "a", taken: 3 }])
  })

  it("owes what the shared bucket owes: the wait covers the debt", () => {
    const { limiter } = limiterAt(1, 2)
    limiter.take("a")
    limiter.drainTaken(T0)
    limiter.reconcile("a", { millitokens: -3000, at: T0 })
    expect(limiter.take("a")).toBe(4)
  })

  it("holds at most its bound of buckets, dropping the one used longest ago with its takes", () => {
    const { limiter } = limiterAt(1, 1, 3)
    for (const key of ["a", "b", "c", "d", "e"]) limiter.take(key)
    expect(limiter.size()).toBe(3)
    expect(limiter.drainTaken(T0).map((t) => t.key)).toEqual(["c", "d", "e"])
    // A key dropped starts again with a full bucket; one still held is still empty.
    expect(limiter.take("a")).toBe(undefined)
    expect(limiter.take("e")).toBe(1)
    // A hundred thousand keys later, still three buckets.
    for (let i = 0; i < 100_000; i++) limiter.take(`k${i}`)
    expect(limiter.size()).toBe(3)
  })

  it("leaves a key dropped since the drain out of the reconcile", () => {
    const { limiter } = limiterAt(1, 1, 1)
    limiter.take("a")
    limiter.drainTaken(T0)
    limiter.take("b")
    limiter.reconcile("a", { millitokens: -10_000, at: T0 })
    expect(limiter.size()).toBe(1)
    expect(limiter.take("a")).toBe(undefined)
  })
})
