import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, ParseResult, Schema } from "effect"
import { formatMajor } from "../shared/Amount.js"
import {
  computeFees,
  decodeFeeSchedule,
  type FeeRule,
  FeeScheduleSchema,
  feeRuleFor,
  settlementAmount,
  ZERO_FEE_RULE
} from "./Fees.js"

const MAX_AMOUNT = 2n ** 256n - 1n
const rule = (fixed: string, percentage: string): FeeRule => ({ fixed, percentage })

/** A decimal string's exact value as numerator / 10^scale (test-side parsing, no floats). */
const exact = (text: string): { numerator: bigint; denominator: bigint } => {
  const [integer = "", fraction = ""] = text.split(".")
  return { numerator: BigInt(integer + fraction), denominator: 10n ** BigInt(fraction.length) }
}

// Amounts: anywhere up to 2^256 - 1, with small ones often enough to hit the cap.
const amountArb = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX_AMOUNT }),
  fc.bigInt({ min: 0n, max: 10n ** 8n }),
  fc.bigInt({ min: 0n, max: 100n })
)
const decimalsArb = fc.integer({ min: 0, max: 36 })
/** A decimal string of `maxInteger`-ish size with 0..maxScale fractional digits. */
const decimalArb = (maxScale: number, maxValue: (scale: number) => bigint) =>
  fc
    .integer({ min: 0, max: maxScale })
    .chain((scale) =>
      fc.bigInt({ min: 0n, max: maxValue(scale) }).map((n) => formatMajor(n, scale))
    )
const percentageArb = decimalArb(6, (scale) => 100n * 10n ** BigInt(scale))
const fixedArb = fc.oneof(
  decimalArb(36, (scale) => 10n ** BigInt(scale + 3)),
  decimalArb(36, (scale) => 10n ** BigInt(scale + 30) - 1n)
)
const ruleArb = fc.record({ fixed: fixedArb, percentage: percentageArb })

/** The percentage part alone (no fixed part, never capped since percentage <= 100). */
const percentagePart = (percentage: string, amount: bigint): bigint =>
  computeFees(rule("0", percentage), amount, 6).total

describe("computeFees", () => {
  it("takes a fixed part in major units and a percentage, exactly", () => {
    // 100 USDC, 0.30 + 1.5 %: 0.30 + 1.50 USDC
    expect(computeFees(rule("0.30", "1.5"), 100_000_000n, 6)).toEqual({
      fixed: 300_000n,
      percentage: "1.5",
      total: 1_800_000n
    })
    expect(computeFees(ZERO_FEE_RULE, 123n, 6)).toEqual({ fixed: 0n, percentage: "0", total: 0n })
  })

  it("rounds the percentage part of one minor unit half up", () => {
    expect(computeFees(rule("0", "1"), 1n, 6).total).toBe(0n)
    expect(computeFees(rule("0", "50"), 1n, 6).total).toBe(1n)
    expect(computeFees(rule("0", "49.999999"), 1n, 6).total).toBe(0n)
    expect(computeFees(rule("0", "50.000001"), 1n, 6).total).toBe(1n)
    // 3 × 50 % = 1.5 -> 2; 5 × 10 % = 0.5 -> 1; 15 × 10 % = 1.5 -> 2
    expect(percentagePart("50", 3n)).toBe(2n)
    expect(percentagePart("10", 5n)).toBe(1n)
    expect(percentagePart("10", 15n)).toBe(2n)
  })

  it("is exact on the largest token amounts", () => {
    const fees = computeFees(rule("0", "0.4"), MAX_AMOUNT, 18)
    // (2^256 - 1) × 4 / 1000 = 463168356949264781694283940034751631413079938662562256157830336031652518559.74 -> …560
    expect(fees.total).toBe(
      463168356949264781694283940034751631413079938662562256157830336031652518560n
    )
    expect(fees.total * 1000n - MAX_AMOUNT * 4n).toBe(260n)
    expect(settlementAmount(MAX_AMOUNT, fees)).toBe(MAX_AMOUNT - fees.total)
    expect(computeFees(rule("1000000", "100"), MAX_AMOUNT, 36).total).toBe(MAX_AMOUNT)
  })

  it("rounds a percentage that does not divide to the nearest minor unit", () => {
    // 33.333333 % of 100 USDC = 33.333333 USDC exactly
    expect(percentagePart("33.333333", 100_000_000n)).toBe(33_333_333n)
    // 33.333333 % of 1 USDC = 333333.33 minor units -> 333333
    expect(percentagePart("33.333333", 1_000_000n)).toBe(333_333n)
    // 33.333333 % of 2 minor units = 0.66666666 -> 1
    expect(percentagePart("33.333333", 2n)).toBe(1n)
    // 0.000001 % of 10^8 + 50 % of a unit: 1.0000005 -> 1
    expect(percentagePart("0.000001", 100_000_050n)).toBe(1n)
  })

  it("rounds a fixed part finer than the token down", () => {
    // 0.0000019 USDC (6 decimals) = 1.9 minor units -> 1
    expect(computeFees(rule("0.0000019", "0"), 10n ** 9n, 6).fixed).toBe(1n)
    expect(computeFees(rule("0.0000009", "0"), 10n ** 9n, 6).fixed).toBe(0n)
    // a token with no decimals: 2.99 -> 2
    expect(computeFees(rule("2.99", "0"), 100n, 0)).toEqual({
      fixed: 2n,
      percentage: "0",
      total: 2n
    })
    // 36 fractional digits on an 18-decimal token
    expect(computeFees(rule(`0.${"9".repeat(36)}`, "0"), 10n ** 20n, 18).fixed).toBe(
      10n ** 18n - 1n
    )
  })

  it("caps the fees at the amount paid", () => {
    // 0.30 USDC fixed on a 0.10 USDC payment
    const fees = computeFees(rule("0.30", "1"), 100_000n, 6)
    expect(fees).toEqual({ fixed: 100_000n, percentage: "1", total: 100_000n })
    expect(settlementAmount(100_000n, fees)).toBe(0n)
    // fixed below the amount, but fixed + percentage above it
    expect(computeFees(rule("0.09", "50"), 100_000n, 6)).toEqual({
      fixed: 90_000n,
      percentage: "50",
      total: 100_000n
    })
  })

  it("takes everything at 100 %", () => {
    expect(computeFees(rule("0", "100"), 12_345n, 6).total).toBe(12_345n)
    expect(computeFees(rule("0", "100.000000"), 1n, 0).total).toBe(1n)
  })

  it("takes nothing of nothing", () => {
    expect(computeFees(rule("5", "2.5"), 0n, 6)).toEqual({
      fixed: 0n,
      percentage: "2.5",
      total: 0n
    })
  })

  it("treats a negative amount, bad decimals or a bad rule as a defect", () => {
    expect(() => computeFees(ZERO_FEE_RULE, -1n, 6)).toThrow(RangeError)
    expect(() => computeFees(ZERO_FEE_RULE, 1n, -1)).toThrow(RangeError)
    expect(() => computeFees(ZERO_FEE_RULE, 1n, 1.5)).toThrow(RangeError)
    expect(() => computeFees(rule("-1", "0"), 1n, 6)).toThrow(/fixed/)
    expect(() => computeFees(rule("0", "100.5"), 1n, 6)).toThrow(/percentage/)
    expect(() => computeFees(rule("0", "1e2"), 1n, 6)).toThrow(/percentage/)
  })

  it.prop(
    "keeps 0 <= total <= amount and settlement + total = amount",
    [ruleArb, amountArb, decimalsArb],
    ([feeRule, amount, decimals]) => {
      const fees = computeFees(feeRule, amount, decimals)
      expect(fees.total >= 0n && fees.total <= amount).toBe(true)
      expect(fees.fixed >= 0n && fees.fixed <= fees.total).toBe(true)
      expect(settlementAmount(amount, fees) + fees.total).toBe(amount)
      expect(settlementAmount(amount, fees) >= 0n).toBe(true)
      expect(fees.percentage).toBe(feeRule.percentage)
    }
  )

  it.prop(
    "gives a percentage part within half a minor unit of the exact value, ties up",
    [percentageArb, amountArb],
    ([percentage, amount]) => {
      const part = percentagePart(percentage, amount)
      // exact = amount × n / (100 d); -1/2 < part - exact <= 1/2, cross-multiplied by 200 d
      const { numerator, denominator } = exact(percentage)
      const scaled = 100n * denominator
      const twiceError = 2n * (part * scaled - amount * numerator)
      expect(twiceError > -scaled && twiceError <= scaled).toBe(true)
    }
  )

  it.prop(
    "rounds exact ties up",
    [
      fc.integer({ min: 0, max: 7 }),
      fc.integer({ min: 0, max: 8 }),
      fc.bigInt({ min: 0n, max: 10n ** 60n })
    ],
    ([i, j, k]) => {
      // percentage = 100 / (2^(i+1) × 5^j) (at most 6 fractional digits), amount = 2^i × 5^j × (2k + 1):
      // the exact part is (2k + 1) / 2, a tie, which must become k + 1.
      const divisor = 2n ** BigInt(i + 1) * 5n ** BigInt(j)
      const percentage = formatMajor((100n * 10n ** 6n) / divisor, 6)
      const amount = (divisor / 2n) * (2n * k + 1n)
      expect(percentagePart(percentage, amount)).toBe(k + 1n)
    }
  )

  it.prop(
    "never gives a larger amount a smaller percentage part",
    [percentageArb, amountArb, amountArb],
    ([percentage, a, b]) => {
      const [low, high] = a <= b ? [a, b] : [b, a]
      expect(percentagePart(percentage, low) <= percentagePart(percentage, high)).toBe(true)
    }
  )

  it.prop(
    "adds the fixed part, rounded down, to the percentage part when not capped",
    [ruleArb, amountArb, decimalsArb],
    ([feeRule, amount, decimals]) => {
      const fees = computeFees(feeRule, amount, decimals)
      const part = percentagePart(feeRule.percentage, amount)
      const fixed = exact(feeRule.fixed)
      const configured = fixed.numerator * 10n ** BigInt(decimals)
      // fees.fixed = floor(configured / denominator) unless capped
      const floorOk = (value: bigint) =>
        value * fixed.denominator <= configured && configured < (value + 1n) * fixed.denominator
      const uncappedFixed = configured / fixed.denominator
      if (uncappedFixed + part <= amount) {
        expect(floorOk(fees.fixed)).toBe(true)
        expect(fees.total).toBe(fees.fixed + part)
      } else {
        expect(fees.total).toBe(amount)
        expect(fees.fixed).toBe(uncappedFixed < amount ? uncappedFixed : amount)
      }
    }
  )

  it.prop(
    "keeps a fixed part that fits in the amount, capping only the total",
    [
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      percentageArb,
      decimalsArb
    ],
    ([amount, seed, percentage, decimals]) => {
      const fixed = seed % (amount + 1n)
      const fees = computeFees(rule(formatMajor(fixed, decimals), percentage), amount, decimals)
      const sum = fixed + percentagePart(percentage, amount)
      expect(fees).toEqual({ fixed, percentage, total: sum < amount ? sum : amount })
    }
  )
})

const PARTNER = "ptnr_0000000000000000000A"
const OTHER_PARTNER = "ptnr_0000000000000000000B"
const MERCHANT = "mrch_0000000000000000000A"
const OTHER_MERCHANT = "mrch_0000000000000000000B"

const decodeStrict = Schema.decodeUnknownEither(FeeScheduleSchema, {
  errors: "all",
  onExcessProperty: "error"
})
const errorOf = (input: unknown): string => {
  const result = decodeFeeSchedule(input)
  if (Either.isRight(result)) throw new Error(`decoded: ${JSON.stringify(input)}`)
  return result.left.message
}

describe("fee schedule", () => {
  it("decodes a good schedule, filling absent fields with 0", () => {
    const input = {
      default: { fixed: "0.30", percentage: "1.5" },
      partners: { [PARTNER]: { percentage: "0.4" } },
      merchants: { [MERCHANT]: {} }
    }
    const expected = {
      default: { fixed: "0.30", percentage: "1.5" },
      partners: { [PARTNER]: { fixed: "0", percentage: "0.4" } },
      merchants: { [MERCHANT]: { fixed: "0", percentage: "0" } }
    }
    expect(decodeFeeSchedule(input)).toEqual(Either.right(expected))
    expect(decodeStrict(input)).toEqual(Either.right(expected))
    expect(decodeFeeSchedule({})).toEqual(Either.right({}))
    // from JSON, with the limits reached
    const json = `{"default":{"fixed":"${"9".repeat(30)}.${"9".repeat(36)}","percentage":"100.000000"}}`
    expect(Either.isRight(decodeFeeSchedule(JSON.parse(json)))).toBe(true)
    // and back
    expect(Schema.encodeSync(FeeScheduleSchema)(expected)).toEqual(expected)
  })

  it("names each bad field in the message", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ default: { fixed: "-1" } }, "default.fixed: must be a non-negative decimal number"],
      [{ default: { fixed: "1e3" } }, "default.fixed: must be a non-negative decimal number"],
      [{ default: { fixed: " 1" } }, "default.fixed: must be a non-negative decimal number"],
      [{ default: { fixed: "1." } }, "default.fixed: must be a non-negative decimal number"],
      [
        { default: { fixed: 0.3 } },
        'default.fixed: must be a string holding a decimal number, e.g. "0.30"'
      ],
      [{ default: { fixed: "1".repeat(31) } }, "default.fixed: must have at most 30 digits before"],
      [
        { default: { fixed: `0.${"1".repeat(37)}` } },
        "default.fixed: must have at most 36 digits after"
      ],
      [{ default: { percentage: "100.000001" } }, "default.percentage: must be at most 100"],
      [
        { default: { percentage: "0.0000001" } },
        "default.percentage: must have at most 6 digits after"
      ],
      [
        { default: { percentage: "+1" } },
        "default.percentage: must be a non-negative decimal number"
      ],
      [{ default: { percentage: "1".repeat(10_000) } }, "default.percentage: must have at most 30"],
      [{ default: { percent: "1" } }, "default.percent: is not a known field"],
      [{ partners: { [PARTNER]: { percentage: "x" } } }, `partners.${PARTNER}.percentage: must be`],
      [
        { partners: { mrch_0000000000000000000A: {} } },
        "partners.mrch_0000000000000000000A: must be a partner id"
      ],
      [{ partners: [] }, "partners: must be an object of fee rules by partner id"],
      [{ merchants: { [MERCHANT]: { fixed: "a" } } }, `merchants.${MERCHANT}.fixed: must be`],
      [{ merchants: { shop: {} } }, "merchants.shop: must be a merchant id of the form mrch_"],
      [{ merchants: "x" }, "merchants: must be an object of fee rules by merchant id"],
      [
        JSON.parse('{"merchants":{"__proto__":{"fixed":"1"}}}'),
        "merchants.__proto__: must be a merchant id"
      ],
      [{ fees: {} }, "fees: is not a known field"]
    ]
    for (const [input, message] of cases) {
      expect(errorOf(input), JSON.stringify(input)).toContain(message)
    }
  })

  it("reports every bad field at once", () => {
    const message = errorOf({
      default: { fixed: "x", percentage: "101" },
      merchants: { shop: {}, [MERCHANT]: { percentage: "-1" } }
    })
    for (const field of [
      "default.fixed",
      "default.percentage",
      "merchants.shop",
      `merchants.${MERCHANT}.percentage`
    ]) {
      expect(message).toContain(`${field}:`)
    }
  })

  it("refuses unknown fields when asked to, and ignores them otherwise", () => {
    const input = { default: { fixed: "1", extra: true }, other: 1 }
    const strict = decodeStrict(input)
    expect(Either.isLeft(strict)).toBe(true)
    if (Either.isLeft(strict)) {
      const paths = ParseResult.ArrayFormatter.formatErrorSync(strict.left).map((i) =>
        i.path.join(".")
      )
      expect(paths).toEqual(expect.arrayContaining(["default.extra", "other"]))
    }
    expect(Schema.decodeUnknownEither(FeeScheduleSchema)(input)).toEqual(
      Either.right({ default: { fixed: "1", percentage: "0" } })
    )
  })

  it("picks the merchant's rule, else the partner's, else the default, else none", () => {
    const merchantRule = rule("0.1", "1")
    const partnerRule = rule("0.2", "2")
    const defaultRule = rule("0.3", "3")
    const schedule = {
      default: defaultRule,
      partners: { [PARTNER]: partnerRule },
      merchants: { [MERCHANT]: merchantRule }
    }
    expect(feeRuleFor(schedule, PARTNER, MERCHANT)).toBe(merchantRule)
    expect(feeRuleFor(schedule, OTHER_PARTNER, MERCHANT)).toBe(merchantRule)
    expect(feeRuleFor(schedule, PARTNER, OTHER_MERCHANT)).toBe(partnerRule)
    expect(feeRuleFor(schedule, OTHER_PARTNER, OTHER_MERCHANT)).toBe(defaultRule)
    expect(feeRuleFor({ partners: schedule.partners }, OTHER_PARTNER, MERCHANT)).toEqual(
      ZERO_FEE_RULE
    )
    expect(feeRuleFor({}, PARTNER, MERCHANT)).toEqual(ZERO_FEE_RULE)
    expect(feeRuleFor(undefined, PARTNER, MERCHANT)).toEqual(ZERO_FEE_RULE)
    // only own keys count
    expect(feeRuleFor({ merchants: {} }, PARTNER, "constructor")).toEqual(ZERO_FEE_RULE)
  })
})
