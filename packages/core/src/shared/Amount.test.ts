import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, ParseResult, Schema } from "effect"
import {
  type Amount,
  AmountInput,
  type AmountUnit,
  amountDisplay,
  amountToWire,
  formatMajor,
  formatUnit,
  MAX_FIAT_MINOR_UNITS,
  MAX_TOKEN_MINOR_UNITS,
  maxMinorUnits,
  parseMinorUnits,
  parseUnit,
  toMajorUnits
} from "./Amount.js"
import type { Caip2, Caip19 } from "./Caip.js"
import { findCurrency } from "./Currency.js"
import { defaultNetworks, defaultTokens, makeTokenRegistry } from "./TokenRegistry.js"

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const UNKNOWN_TOKEN = "eip155:8453/erc20:0x0000000000000000000000000000000000000001" as Caip19
const WHOLE_NUMBER_HINT =
  'must be a whole number of minor units as a string of digits, e.g. "1050" for 10.50'

const registry = makeTokenRegistry(defaultNetworks, defaultTokens)
const usd: AmountUnit = { kind: "fiat", currency: findCurrency("USD")! }
const usdcBase: AmountUnit = { kind: "token", asset: USDC_BASE }

const right = <A>(result: Either.Either<A, string>): A =>
  Either.getOrThrowWith(result, (message) => new Error(`expected Right, got Left: ${message}`))

const left = <A>(result: Either.Either<A, string>): string =>
  Either.match(result, {
    onLeft: (message) => message,
    onRight: (value) => {
      throw new Error(`expected Left, got Right: ${String(value)}`)
    }
  })

const decode = Schema.decodeUnknownEither(AmountInput)

const issues = (input: unknown) =>
  Either.match(decode(input, { errors: "all" }), {
    onLeft: (error) =>
      ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({
        path: i.path.join("."),
        message: i.message
      })),
    onRight: (value) => {
      throw new Error(`expected a failure, got ${String(value.value)}`)
    }
  })

describe("limits", () => {
  it("are WIRE.md's", () => {
    expect(MAX_FIAT_MINOR_UNITS).toBe(1_000_000_000_000_000n)
    expect(MAX_TOKEN_MINOR_UNITS.toString(16)).toBe("f".repeat(64))
    expect(maxMinorUnits(usd)).toBe(MAX_FIAT_MINOR_UNITS)
    expect(maxMinorUnits(usdcBase)).toBe(MAX_TOKEN_MINOR_UNITS)
  })
})

describe("parseUnit", () => {
  it("accepts known ISO 4217 codes", () => {
    expect(right(parseUnit("iso4217/USD"))).toEqual({
      kind: "fiat",
      currency: { code: "USD", name: "US Dollar", decimals: 2 }
    })
    expect(right(parseUnit("iso4217/JPY"))).toEqual({
      kind: "fiat",
      currency: { code: "JPY", name: "Yen", decimals: 0 }
    })
  })

  it.each(["usd", "XXX", "BGN", "", "USD "])("refuses the currency code %j, naming it", (code) => {
    expect(left(parseUnit(`iso4217/${code}`))).toBe(
      `unknown ISO 4217 currency code ${JSON.stringify(code)}`
    )
  })

  it("accepts CAIP-19 assets in their canonical spelling", () => {
    expect(right(parseUnit(`caip19/${USDC_BASE}`))).toEqual({ kind: "token", asset: USDC_BASE })
    expect(right(parseUnit(`caip19/${USDC_BASE.toLowerCase()}`))).toEqual({
      kind: "token",
      asset: USDC_BASE
    })
    expect(right(parseUnit("caip19/eip155:1/slip44:60"))).toEqual({
      kind: "token",
      asset: "eip155:1/slip44:60"
    })
  })

  it("refuses invalid CAIP-19 assets with the CAIP parser's reason", () => {
    expect(left(parseUnit("caip19/eip155:8453"))).toMatch(
      /^invalid asset id after caip19\/: must be a CAIP-19 asset id/
    )
    expect(
      left(parseUnit("caip19/eip155:8453/erc20:0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913"))
    ).toBe("invalid asset id after caip19/: bad address checksum")
    expect(left(parseUnit("caip19/"))).toMatch(/CAIP-19/)
  })

  it.each(["USD", "iso4217:USD", "ISO4217/USD", "caip19:eip155:1/slip44:60", "", " iso4217/USD"])(
    "refuses %j without a known prefix",
    (unit) => {
      expect(left(parseUnit(unit))).toMatch(/^must start with iso4217\/ or caip19\//)
    }
  )

  it("formatUnit gives back the wire spelling", () => {
    for (const unit of ["iso4217/USD", "iso4217/KWD", `caip19/${USDC_BASE}`]) {
      expect(formatUnit(right(parseUnit(unit)))).toBe(unit)
    }
  })
})

describe("parseMinorUnits", () => {
  it.each([
    ["1", 1n],
    ["1050", 1050n],
    ["1000000000000000", MAX_FIAT_MINOR_UNITS]
  ])("accepts %s", (value, expected) => {
    expect(right(parseMinorUnits(value, MAX_FIAT_MINOR_UNITS))).toBe(expected)
  })

  it("accepts up to the token limit", () => {
    const max = String(MAX_TOKEN_MINOR_UNITS)
    expect(right(parseMinorUnits(max, MAX_TOKEN_MINOR_UNITS))).toBe(MAX_TOKEN_MINOR_UNITS)
    expect(left(parseMinorUnits(String(MAX_TOKEN_MINOR_UNITS + 1n), MAX_TOKEN_MINOR_UNITS))).toBe(
      `must be at most ${max}`
    )
  })

  it.each(["1000000000000001", "9999999999999999", "10000000000000000", "9".repeat(100_000)])(
    "refuses %s above the limit",
    (value) => {
      expect(left(parseMinorUnits(value, MAX_FIAT_MINOR_UNITS))).toBe(
        "must be at most 1000000000000000"
      )
    }
  )

  it.each(["0", "00", "-1", "-0", "-1050"])("refuses %j as not positive", (value) => {
    expect(left(parseMinorUnits(value, MAX_FIAT_MINOR_UNITS))).toBe("must be positive")
  })

  it.each(["01", "0010", "0".repeat(50) + 1])("refuses %j with leading zeros", (value) => {
    expect(left(parseMinorUnits(value, MAX_FIAT_MINOR_UNITS))).toBe("must not have leading zeros")
  })

  it.each([
    "",
    "10.50",
    "10.",
    ".5",
    "1e3",
    "1E3",
    "+5",
    " 5",
    "5 ",
    "1_000",
    "1,000",
    "0x10",
    "١٢",
    "Infinity",
    "NaN",
    "ten"
  ])("refuses %j as not a whole number", (value) => {
    expect(left(parseMinorUnits(value, MAX_FIAT_MINOR_UNITS))).toBe(WHOLE_NUMBER_HINT)
  })

  it.prop(
    "round-trips any fiat amount",
    [fc.bigInt({ min: 1n, max: MAX_FIAT_MINOR_UNITS })],
    ([v]) => {
      expect(right(parseMinorUnits(String(v), MAX_FIAT_MINOR_UNITS))).toBe(v)
    }
  )

  it.prop(
    "round-trips any token amount",
    [fc.bigInt({ min: 1n, max: MAX_TOKEN_MINOR_UNITS })],
    ([v]) => {
      expect(right(parseMinorUnits(String(v), MAX_TOKEN_MINOR_UNITS))).toBe(v)
    }
  )

  it.prop(
    "never throws, and accepts only canonical strings",
    [fc.oneof(fc.string(), fc.stringMatching(/^-?[0-9]{0,80}(\.[0-9]*)?$/))],
    ([s]) => {
      const result = parseMinorUnits(s, MAX_TOKEN_MINOR_UNITS)
      if (Either.isRight(result)) expect(String(result.right)).toBe(s)
    }
  )
})

describe("AmountInput", () => {
  it("decodes fiat and token amounts", () => {
    expect(decode({ unit: "iso4217/USD", value: "1050" })).toEqual(
      Either.right({ unit: usd, value: 1050n })
    )
    expect(decode({ unit: `caip19/${USDC_BASE}`, value: String(MAX_TOKEN_MINOR_UNITS) })).toEqual(
      Either.right({ unit: usdcBase, value: MAX_TOKEN_MINOR_UNITS })
    )
  })

  it("encodes back to the wire strings", () => {
    const amount: Amount = { unit: usdcBase, value: 2_500_000n }
    expect(Schema.encodeSync(AmountInput)(amount)).toEqual({
      unit: `caip19/${USDC_BASE}`,
      value: "2500000"
    })
  })

  it("applies the fiat limit to fiat and the token limit to tokens", () => {
    const above = String(MAX_FIAT_MINOR_UNITS + 1n)
    expect(issues({ unit: "iso4217/USD", value: above })).toEqual([
      { path: "value", message: "must be at most 1000000000000000" }
    ])
    expect(Either.isRight(decode({ unit: `caip19/${USDC_BASE}`, value: above }))).toBe(true)
  })

  it("names the offending field", () => {
    expect(issues({ unit: "iso4217/usd", value: "1050" })).toEqual([
      { path: "unit", message: 'unknown ISO 4217 currency code "usd"' }
    ])
    expect(issues({ unit: "iso4217/USD", value: "10.50" })).toEqual([
      { path: "value", message: WHOLE_NUMBER_HINT }
    ])
    expect(issues({ unit: "USD", value: "0" })).toEqual([
      { path: "unit", message: expect.stringMatching(/^must start with iso4217\/ or caip19\//) },
      { path: "value", message: "must be positive" }
    ])
  })

  it("refuses a JSON number for value, saying it must be a string", () => {
    expect(issues({ unit: "iso4217/USD", value: 100 })).toEqual([
      { path: "value", message: WHOLE_NUMBER_HINT }
    ])
    expect(issues(JSON.parse('{"unit": "iso4217/USD", "value": 100}'))).toEqual([
      { path: "value", message: expect.stringMatching(/as a string of digits/) }
    ])
    expect(issues({ unit: 840, value: "100" })).toEqual([
      { path: "unit", message: expect.stringMatching(/must be a string/) }
    ])
  })

  it("reports missing fields and non-objects", () => {
    expect(issues({})).toEqual([
      { path: "unit", message: "is missing" },
      { path: "value", message: "is missing" }
    ])
    expect(issues(null)).toEqual([{ path: "", message: expect.any(String) }])
  })

  it("keeps its paths when nested", () => {
    const Body = Schema.Struct({ amount: AmountInput })
    const result = Schema.decodeUnknownEither(Body)({ amount: { unit: "iso4217/USD", value: "" } })
    expect(
      Either.mapLeft(result, (e) =>
        ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => i.path)
      )
    ).toEqual(Either.left([["amount", "value"]]))
  })

  it.prop("never throws on any input", [fc.anything()], ([input]) => {
    decode(input)
    decode({ unit: input, value: input })
  })

  it.prop("never throws on any strings", [fc.string(), fc.string()], ([unit, value]) => {
    for (const u of [unit, `iso4217/${unit}`, `caip19/${unit}`]) {
      const result = decode({ unit: u, value }, { errors: "all" })
      if (Either.isLeft(result)) {
        for (const issue of ParseResult.ArrayFormatter.formatErrorSync(result.left)) {
          expect(["unit", "value"]).toContain(issue.path.join("."))
        }
      }
    }
  })
})

describe("amountDisplay", () => {
  it("describes fiat by its ISO 4217 code, name and decimals only", () => {
    expect(amountDisplay(usd, registry)).toEqual({
      assetSymbol: "USD",
      assetName: "US Dollar",
      decimals: 2
    })
    expect(amountDisplay(right(parseUnit("iso4217/KWD")), registry)).toEqual({
      assetSymbol: "KWD",
      assetName: "Kuwaiti Dinar",
      decimals: 3
    })
  })

  it("describes a known token with its network", () => {
    expect(amountDisplay(usdcBase, registry)).toEqual({
      assetSymbol: "USDC",
      assetName: "USD Coin",
      decimals: 6,
      networkName: "Base"
    })
  })

  it("names an unconfigured network by its CAIP-2 id", () => {
    const asset = "eip155:7777/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
    const r = makeTokenRegistry(
      [{ chainId: "eip155:1" as Caip2, name: "Ethereum", iconUrl: "https://icons.example/e.png" }],
      [{ asset, symbol: "XYZ", name: "Example", decimals: 18, iconUrl: "https://x.example/i.png" }]
    )
    expect(amountDisplay({ kind: "token", asset }, r)).toEqual({
      assetSymbol: "XYZ",
      assetName: "Example",
      decimals: 18,
      iconUrl: "https://x.example/i.png",
      networkName: "eip155:7777"
    })
  })

  it("is undefined for a token the registry does not know", () => {
    expect(amountDisplay({ kind: "token", asset: UNKNOWN_TOKEN }, registry)).toBeUndefined()
  })
})

describe("amountToWire", () => {
  it("gives unit, value as a string and display", () => {
    expect(amountToWire({ unit: usd, value: 1050n }, registry)).toEqual({
      unit: "iso4217/USD",
      value: "1050",
      display: { assetSymbol: "USD", assetName: "US Dollar", decimals: 2 }
    })
    const wire = amountToWire({ unit: usdcBase, value: MAX_TOKEN_MINOR_UNITS }, registry)
    expect(wire.unit).toBe(`caip19/${USDC_BASE}`)
    expect(wire.value).toBe(String(MAX_TOKEN_MINOR_UNITS))
    expect(wire.display?.assetSymbol).toBe("USDC")
    expect(
      amountToWire({ unit: { kind: "token", asset: UNKNOWN_TOKEN }, value: 1n }, registry).display
    ).toBeUndefined()
  })
})

describe("formatMajor", () => {
  it.each([
    [1050n, 2, "10.50"],
    [1n, 6, "0.000001"],
    [1_000_000n, 6, "1.000000"],
    [5n, 0, "5"],
    [0n, 2, "0.00"],
    [0n, 0, "0"],
    [123n, 3, "0.123"],
    [1234n, 3, "1.234"],
    [-1050n, 2, "-10.50"],
    [-1n, 6, "-0.000001"],
    [MAX_FIAT_MINOR_UNITS, 2, "10000000000000.00"],
    [1n, 77, `0.${"0".repeat(76)}1`]
  ] as const)("formatMajor(%s, %i) is %s", (value, decimals, expected) => {
    expect(formatMajor(value, decimals)).toBe(expected)
  })

  it.each([-1, 1.5, Number.NaN])("refuses %s decimals", (decimals) => {
    expect(() => formatMajor(1n, decimals)).toThrow(RangeError)
  })

  it.prop(
    "removing the point gives back the value",
    [fc.bigInt({ min: 0n, max: MAX_TOKEN_MINOR_UNITS }), fc.integer({ min: 0, max: 77 })],
    ([v, d]) => {
      const s = formatMajor(v, d)
      expect(BigInt(s.replace(".", ""))).toBe(v)
      expect(s.includes(".") ? s.length - s.indexOf(".") - 1 : 0).toBe(d)
      expect(s).toMatch(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/)
    }
  )
})

describe("toMajorUnits", () => {
  it.each([
    [1050n, 2, 10.5],
    [1n, 6, 0.000001],
    [123_45n, 2, 123.45],
    [5n, 0, 5],
    [0n, 6, 0],
    [2n ** 53n, 0, 2 ** 53],
    [MAX_FIAT_MINOR_UNITS, 2, 1e13],
    // 2^53 + 1 is not a double: the exact value rounds to the nearest one, ties to even.
    [2n ** 53n + 1n, 0, 2 ** 53],
    [2n ** 53n + 3n, 0, 2 ** 53 + 4]
  ] as const)("toMajorUnits(%s, %i) is %s", (value, decimals, expected) => {
    expect(toMajorUnits(value, decimals)).toBe(expected)
  })

  it("rounds a sum of 0.1s correctly, unlike adding floats", () => {
    const sum = Array.from({ length: 10 }, () => 10n).reduce((a, b) => a + b)
    expect(toMajorUnits(sum, 2)).toBe(1)
  })

  it.prop(
    "is Number(formatMajor(v, d))",
    [fc.bigInt({ min: 0n, max: MAX_TOKEN_MINOR_UNITS }), fc.integer({ min: 0, max: 77 })],
    ([v, d]) => {
      expect(toMajorUnits(v, d)).toBe(Number(formatMajor(v, d)))
    }
  )

  // Both operands are exact doubles here and IEEE division rounds once, so this is an
  // independent oracle for the correctly rounded result.
  it.prop(
    "is exact up to 2^53",
    [fc.bigInt({ min: 0n, max: 2n ** 53n }), fc.integer({ min: 0, max: 22 })],
    ([v, d]) => {
      expect(toMajorUnits(v, d)).toBe(Number(v) / Number(`1e${d}`))
    }
  )
})
