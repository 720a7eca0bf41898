import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fc from "effect/FastCheck"
import { convert, lookup, Prices, parseRate } from "./Pricing.js"

const rate = (text: string) => Either.getOrThrow(parseRate(text))
const one = rate("1")

describe("pricing", () => {
  it("parses decimal rates exactly and refuses the rest", () => {
    expect(rate("1.0825")).toEqual({ numerator: 10825n, denominator: 10000n })
    expect(rate("3000")).toEqual({ numerator: 3000n, denominator: 1n })
    for (const bad of ["0", "0.000", "-1", "1e3", "", "1.", ".5", "abc", "1,5"]) {
      expect(Either.isLeft(parseRate(bad)), bad).toBe(true)
    }
  })

  it("converts a fiat amount to a stablecoin at 1:1, scaling the decimals", () => {
    // $10.50 in USDC (6 decimals)
    expect(convert(1050n, 2, one, 6)).toBe(10_500_000n)
    // ¥1,000 (no minor unit) in a 2-decimal token
    expect(convert(1000n, 0, one, 2)).toBe(100_000n)
    // 1.234 KWD (3 decimals) to a 2-decimal token: rounded up, never short
    expect(convert(1234n, 3, one, 2)).toBe(124n)
  })

  it("converts across currencies with a rate either way round, rounding up", () => {
    const table = { "EUR/USD": rate("1.08"), "ETH/USD": rate("3000") }
    // €10.00 in USDC: 10.80 USDC
    expect(convert(1000n, 2, lookup(table, "EUR", "USD")!, 6)).toBe(10_800_000n)
    // $30.00 in ETH (18 decimals): 0.01 ETH
    expect(convert(3000n, 2, lookup(table, "USD", "ETH")!, 18)).toBe(10n ** 16n)
    // $1.00 at 1/3000 ETH: 333333333333333.33… wei, rounded up
    expect(convert(100n, 2, lookup(table, "USD", "ETH")!, 18)).toBe(333_333_333_333_334n)
    expect(lookup(table, "GBP", "USD")).toBeUndefined()
  })

  it.prop(
    "never asks less than the amount is worth, and at most one minor unit more",
    [
      fc.bigInt({ min: 0n, max: 10n ** 15n }),
      fc.integer({ min: 0, max: 3 }),
      fc.bigInt({ min: 1n, max: 10n ** 12n }),
      fc.bigInt({ min: 1n, max: 10n ** 12n }),
      fc.integer({ min: 0, max: 18 })
    ],
    ([value, fromDecimals, numerator, denominator, tokenDecimals]) => {
      const paid = convert(value, fromDecimals, { numerator, denominator }, tokenDecimals)
      // paid / 10^t >= value * n / (d * 10^f), exactly, and paid - 1 would not be
      const worth = value * numerator * 10n ** BigInt(tokenDecimals)
      const scale = denominator * 10n ** BigInt(fromDecimals)
      expect(paid * scale >= worth).toBe(true)
      expect(paid === 0n || (paid - 1n) * scale < worth).toBe(true)
    }
  )

  it.effect("serves a table through the port", () =>
    Effect.gen(function* () {
      const prices = yield* Prices
      expect(yield* prices.rate("USD", "USD")).toEqual({
        numerator: 1n,
        denominator: 1n,
        readings: []
      })
      expect(yield* prices.rate("USD", "EUR")).toEqual({
        numerator: 100n,
        denominator: 108n,
        readings: []
      })
      expect(yield* prices.rate("USD", "JPY")).toBeUndefined()
    }).pipe(Effect.provide(Prices.fromTable({ "EUR/USD": rate("1.08") })))
  )
})
