import { Effect, Either, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { checkOptions, type PaymentEngineOptions } from "./EngineOptions.js"

/** The least options an engine starts with, and `more`. */
const options = (more: Record<string, unknown>): PaymentEngineOptions =>
  ({ publicUrl: "https://shop.example/pay", storage: Layer.empty, ...more }) as never

describe("the expiry sweep's interval (expirySweepMs)", () => {
  it("defaults to 5 s: decoding the options applies the payments' default", () => {
    const checked = Either.getOrThrow(checkOptions(options({})))
    expect(checked.config.payments.expirySweepMs).toBe(5_000)
  })

  it("takes whole milliseconds from 100 to 3,600,000, passed on to the engine's config", () => {
    for (const ms of [100, 500, 5_000, 3_600_000]) {
      const checked = Either.getOrThrow(checkOptions(options({ expirySweepMs: ms })))
      expect(checked.config.payments.expirySweepMs, String(ms)).toBe(ms)
    }
  })

  it("refuses anything else, naming the option and its range", () => {
    for (const wrong of [0, 99, 3_600_001, 250.5, -5_000, Number.NaN, Infinity, "500", null]) {
      const checked = checkOptions(options({ expirySweepMs: wrong }))
      expect(Either.isLeft(checked), String(wrong)).toBe(true)
      if (Either.isLeft(checked)) {
        expect(checked.left.issues, String(wrong)).toEqual([
          {
            option: "expirySweepMs",
            message: "must be a whole number of milliseconds from 100 to 3600000"
          }
        ])
        expect(checked.left.message).toContain(
          "expirySweepMs: must be a whole number of milliseconds from 100 to 3600000"
        )
      }
    }
  })

  it("is named beside the other wrong options, in the one error", () => {
    const checked = checkOptions(
      options({ expirySweepMs: 10, chainWork: { pollMs: 0 }, maxLongPollMs: -1 })
    )
    expect(Either.isLeft(checked)).toBe(true)
    if (Either.isLeft(checked)) {
      expect(checked.left.issues.map((i) => i.option).sort()).toEqual([
        "chainWork.pollMs",
        "expirySweepMs",
        "maxLongPollMs"
      ])
    }
  })
})

describe("the pages (pages)", () => {
  it("takes an Effect of routes, and is optional", () => {
    expect(Either.isRight(checkOptions(options({ pages: Effect.succeed([]) })))).toBe(true)
    expect(Either.isRight(checkOptions(options({})))).toBe(true)
  })

  it("refuses anything else, naming the option and what it takes", () => {
    for (const wrong of [[], {}, "checkout", () => Effect.succeed([]), null]) {
      const checked = checkOptions(options({ pages: wrong }))
      expect(Either.isLeft(checked), String(wrong)).toBe(true)
      if (Either.isLeft(checked)) {
        expect(checked.left.issues, String(wrong)).toEqual([
          {
            option: "pages",
            message: "must be an Effect of routes, e.g. @pay/checkout's checkoutPages"
          }
        ])
      }
    }
  })
})
