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

  it("counts what each key took since the last drain, and only admitted requests", () => {
    const { limiter } = limiterAt(1, 3)
    for (let i = 0; i < 5; i++) limiter.take("a")
    limiter.take("b")
    // With the levels now: a is empty, b has 2 of 3 left.
    expect(limiter.drainTaken(T0)).toEqual([
      { key: "a", taken: 3, millitokens: 0 },
      { key: "b", taken: 1, millitokens: 2000 }
    ])
    expect(limiter.drainTaken(T0)).toEqual([])
  })

  it("takes the shared level, less what it took while the store was asked", () => {
    const { clock, limiter } = limiterAt(1, 5)
    limiter.take("a")
    limiter.drainTaken(T0)
    // Taken during the sync: counted against the shared level when it comes back.
    limiter.take("a")
    // Another instance took 3 as well: the shared bucket holds 5 - 1 - 3 = 1 at T0.
    limiter.reconcile("a", { millitokens: 1000, at: T0 })
    // 1 less the take since the drain: empty, and a token a second from T0.
    expect(limiter.take("a")).toBe(1)
    clock.now += 1000
    expect([limiter.take("a"), limiter.take("a")]).toEqual([undefined, 1])
    // The take during the sync goes in the next one.
    expect(limiter.drainTaken(clock.now)).toEqual([{ key: "a", taken: 2, millitokens: 0 }])
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
