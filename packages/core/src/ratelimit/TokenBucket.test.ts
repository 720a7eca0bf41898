import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  type BucketLevel,
  fullBucket,
  isFull,
  refill,
  secondsUntilToken,
  type TokenBucketSettings,
  take
} from "./TokenBucket.js"

const T0 = 1_800_000_000_000

/** Requests at the given times (ms after T0), in order: which were admitted, and the waits. */
const requests = (settings: TokenBucketSettings, times: ReadonlyArray<number>) => {
  let level: BucketLevel = fullBucket(settings, T0)
  return times.map((t) => {
    const outcome = take(level, settings, T0 + t)
    level = outcome.level
    return outcome.admitted ? "ok" : outcome.retryAfterSeconds
  })
}

describe("the token bucket", () => {
  it("admits a burst at once, then refuses with the wait for the next token", () => {
    expect(requests({ perSecond: 2, burst: 3 }, [0, 0, 0, 0, 1])).toEqual(["ok", "ok", "ok", 1, 1])
  })

  it("refills at the rate, to its burst and no further", () => {
    const settings = { perSecond: 2, burst: 3 }
    // Emptied at 0; a token every 500 ms.
    expect(requests(settings, [0, 0, 0, 499, 500, 500, 1000])).toEqual([
      "ok",
      "ok",
      "ok",
      1,
      "ok",
      1,
      "ok"
    ])
    // An hour idle holds the burst, not 7200 tokens.
    expect(refill({ millitokens: 0, at: T0 }, settings, T0 + 3_600_000)).toEqual({
      millitokens: 3000,
      at: T0 + 3_600_000
    })
  })

  it("refills nothing when the clock goes back", () => {
    const level = { millitokens: 500, at: T0 }
    expect(refill(level, { perSecond: 10, burst: 10 }, T0 - 5000)).toBe(level)
  })

  it("rounds Retry-After up to whole seconds, never 0", () => {
    // A fast rate: the next token is a millisecond away, said as 1 s.
    expect(secondsUntilToken(999, { perSecond: 1000, burst: 1 })).toBe(1)
    expect(secondsUntilToken(0, { perSecond: 1000, burst: 1 })).toBe(1)
    // One a second, empty: 1 s; 0.001 token short: still 1 s.
    expect(secondsUntilToken(0, { perSecond: 1, burst: 1 })).toBe(1)
    expect(secondsUntilToken(999, { perSecond: 1, burst: 1 })).toBe(1)
    // Owing 2.5 tokens (another instance took them) at one a second: 3.5 s, said as 4.
    expect(secondsUntilToken(-2500, { perSecond: 1, burst: 1 })).toBe(4)
    // Exactly 2 s: 2, not 3.
    expect(secondsUntilToken(-1000, { perSecond: 1, burst: 1 })).toBe(2)
    // 3 a second, empty: 334 ms, said as 1.
    expect(requests({ perSecond: 3, burst: 1 }, [0, 0])).toEqual(["ok", 1])
  })

  it("tells a full bucket", () => {
    const settings = { perSecond: 2, burst: 3 }
    expect(isFull(fullBucket(settings, T0), settings, T0)).toBe(true)
    expect(isFull({ millitokens: 2000, at: T0 }, settings, T0 + 499)).toBe(false)
    expect(isFull({ millitokens: 2000, at: T0 }, settings, T0 + 500)).toBe(true)
  })

  it.prop(
    "admits at most burst + rate × elapsed over any requests, and every one a bucket holds a token for",
    [
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 1, max: 50 }),
      fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 300 })
    ],
    ([perSecond, burst, gaps]) => {
      const settings = { perSecond, burst }
      let t = 0
      const times = gaps.map((gap) => (t += gap))
      const outcomes = requests(settings, times)
      const admitted = outcomes.filter((o) => o === "ok").length
      const elapsed = times.at(-1)! - times[0]!
      expect(admitted).toBeLessThanOrEqual(burst + Math.floor((perSecond * elapsed) / 1000))
      // A refusal's wait is whole seconds, at least 1, and no longer than one token takes.
      for (const o of outcomes) {
        if (o !== "ok") {
          expect(Number.isInteger(o) && o >= 1).toBe(true)
          expect(o).toBeLessThanOrEqual(Math.max(1, Math.ceil(1 / perSecond)))
        }
      }
      // The first `burst` requests at the same instant are all admitted.
      expect(requests(settings, Array(burst).fill(0)).every((o) => o === "ok")).toBe(true)
    }
  )
})
