import { describe, expect, it } from "@effect/vitest"
import { currencies, findCurrency } from "./Currency.js"

describe("Currency", () => {
  it.each([
    ["USD", 2],
    ["EUR", 2],
    ["JPY", 0],
    ["KRW", 0],
    ["VND", 0],
    ["ISK", 0],
    ["XOF", 0],
    ["XAF", 0],
    ["BHD", 3],
    ["KWD", 3],
    ["JOD", 3],
    ["OMR", 3],
    ["TND", 3],
    ["LYD", 3],
    ["IQD", 3],
    ["CLF", 4],
    ["UYW", 4],
    ["HUF", 2],
    ["IDR", 2]
  ] as const)("%s has %i decimals", (code, decimals) => {
    expect(findCurrency(code)?.decimals).toBe(decimals)
  })

  it("uses the ISO 4217 names", () => {
    expect(findCurrency("USD")?.name).toBe("US Dollar")
    expect(findCurrency("EUR")?.name).toBe("Euro")
    expect(findCurrency("GBP")?.name).toBe("Pound Sterling")
    expect(findCurrency("JPY")?.name).toBe("Yen")
  })

  it("holds only active codes with a minor unit", () => {
    expect(currencies.size).toBeGreaterThanOrEqual(150)
    expect(currencies.size).toBeLessThanOrEqual(180)
    for (const code of ["XAU", "XAG", "XDR", "XTS", "XXX", "HRK", "ANG", "SLL", "ZWL", "BGN"]) {
      expect(findCurrency(code)).toBeUndefined()
    }
    for (const code of ["XCG", "ZWG", "SLE", "VED"]) {
      expect(findCurrency(code)).toBeDefined()
    }
  })

  it("keys every entry by its own three-letter upper-case code", () => {
    for (const [key, currency] of currencies) {
      expect(currency.code).toMatch(/^[A-Z]{3}$/)
      expect(key).toBe(currency.code)
      expect(currency.name).not.toBe("")
      expect([0, 2, 3, 4]).toContain(currency.decimals)
    }
  })

  it("is case-sensitive", () => {
    expect(findCurrency("usd")).toBeUndefined()
    expect(findCurrency("Usd")).toBeUndefined()
    expect(findCurrency(" USD")).toBeUndefined()
  })
})
