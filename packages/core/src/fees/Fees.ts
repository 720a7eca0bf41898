/**
 * Fees: what the engine keeps of each succeeded payment before the rest is
 * settled to the merchant. A rule is a fixed part, in major units of the token
 * paid, plus a percentage of the amount; the schedule picks the merchant's
 * rule, else its partner's, else the default, else no fees.
 *
 * All arithmetic is exact, on bigints in minor units of the token paid:
 *
 * - The fixed part is `fixed × 10^decimals`. A `fixed` with more fractional
 *   digits than the token has decimals is rounded DOWN to the minor unit, so a
 *   fee never exceeds what was configured ("0.0000005" of a 6-decimal token is 0).
 * - The percentage part is `amount × percentage / 100`, rounded HALF UP to the
 *   nearest minor unit: 0.5 becomes 1, 0.4999… becomes 0.
 * - The total is the fixed part plus the percentage part, capped at the amount
 *   paid, so the merchant's settlement (`amount − total`) is never negative.
 *   When capped, `fixed` is reported as at most the amount and `total` is the amount.
 */
import { Context, Either, ParseResult, Schema } from "effect"
import { PartnerId } from "../identity/Partner.js"
import { MerchantId } from "../merchants/Merchant.js"
import type { PaymentFees } from "../payments/Payment.js"
import { InvalidInput } from "../shared/Errors.js"

/**
 * One fee rule, as configured. `fixed` is a decimal string in major units of
 * the token paid ("0.30" is 0.30 USDC); `percentage` a decimal string percent
 * ("0.4" is 0.4 %).
 */
export interface FeeRule {
  readonly fixed: string
  readonly percentage: string
}

export const ZERO_FEE_RULE: FeeRule = { fixed: "0", percentage: "0" }

/** Fee rules by scope: a merchant's rule wins over its partner's, which wins over `default`. */
export interface FeeSchedule {
  readonly default?: FeeRule
  readonly partners?: Readonly<Record<string, FeeRule>>
  readonly merchants?: Readonly<Record<string, FeeRule>>
}

/** The engine's fee schedule (its `fees` option); empty: no fees. */
export class FeesConfig extends Context.Tag("@pay/core/FeesConfig")<FeesConfig, FeeSchedule>() {}

const own = (
  rules: Readonly<Record<string, FeeRule>> | undefined,
  id: string
): FeeRule | undefined => (rules !== undefined && Object.hasOwn(rules, id) ? rules[id] : undefined)

/** The rule for a merchant: its own, else its partner's, else the default, else zero fees. */
export const feeRuleFor = (
  schedule: FeeSchedule | undefined,
  partnerId: string,
  merchantId: string
): FeeRule =>
  own(schedule?.merchants, merchantId) ??
  own(schedule?.partners, partnerId) ??
  schedule?.default ??
  ZERO_FEE_RULE

// ---------------------------------------------------------------------------
// Decimal strings

const MAX_INTEGER_DIGITS = 30
export const MAX_FIXED_FRACTION_DIGITS = 36
export const MAX_PERCENTAGE_FRACTION_DIGITS = 6

/** An exact non-negative decimal: `numerator / 10^scale`. */
interface Decimal {
  readonly numerator: bigint
  readonly scale: number
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/

const parseDecimal = (
  text: string,
  maxFractionDigits: number,
  example: string
): Either.Either<Decimal, string> => {
  // The length bound first, so a megabyte of digits is refused before any regex or bigint.
  if (text.length > MAX_INTEGER_DIGITS + 1 + maxFractionDigits) {
    return Either.left(
      `must have at most ${MAX_INTEGER_DIGITS} digits before the decimal point and ${maxFractionDigits} after it`
    )
  }
  const match = DECIMAL.exec(text)
  if (match === null) {
    return Either.left(
      `must be a non-negative decimal number such as "${example}", without sign, exponent or spaces`
    )
  }
  const integer = match[1] ?? ""
  const fraction = match[2] ?? ""
  if (integer.length > MAX_INTEGER_DIGITS) {
    return Either.left(`must have at most ${MAX_INTEGER_DIGITS} digits before the decimal point`)
  }
  if (fraction.length > maxFractionDigits) {
    return Either.left(`must have at most ${maxFractionDigits} digits after the decimal point`)
  }
  return Either.right({ numerator: BigInt(integer + fraction), scale: fraction.length })
}

const parseFixed = (text: string): Either.Either<Decimal, string> =>
  parseDecimal(text, MAX_FIXED_FRACTION_DIGITS, "0.30")

const parsePercentage = (text: string): Either.Either<Decimal, string> =>
  Either.flatMap(parseDecimal(text, MAX_PERCENTAGE_FRACTION_DIGITS, "1.5"), (rate) =>
    rate.numerator > 100n * 10n ** BigInt(rate.scale)
      ? Either.left("must be at most 100 (a percent: 1.5 means 1.5 %)")
      : Either.right(rate)
  )

// ---------------------------------------------------------------------------
// The configuration file

const decimalString = (parse: (text: string) => Either.Either<unknown, string>, example: string) =>
  Schema.String.annotations({
    // Numbers lose precision past 2^53, so only strings are accepted, even for small fees.
    message: () => `must be a string holding a decimal number, e.g. "${example}"`
  }).pipe(
    Schema.filter((text) => Either.match(parse(text), { onLeft: (m) => m, onRight: () => true }))
  )

/** A fee rule of the configuration; an absent field is "0". */
export const FeeRuleSchema: Schema.Schema<
  FeeRule,
  { readonly fixed?: string; readonly percentage?: string }
> = Schema.Struct({
  fixed: Schema.optionalWith(decimalString(parseFixed, "0.30"), {
    exact: true,
    default: () => "0"
  }),
  percentage: Schema.optionalWith(decimalString(parsePercentage, "1.5"), {
    exact: true,
    default: () => "0"
  })
}).annotations({ identifier: "FeeRule" })

/**
 * Fee rules by id, each key checked against `isId`. A hand-written record rather than
 * `Schema.Record`: that one would assign a `"__proto__"` key (which `JSON.parse` keeps as
 * an own key) to the prototype, dropping the rule without a word.
 */
const rulesById = (isId: (key: string) => boolean, keyMessage: string, what: string) =>
  Schema.transformOrFail(
    Schema.Object.annotations({ message: () => `must be an object of fee rules by ${what} id` }),
    Schema.Record({ key: Schema.String, value: Schema.typeSchema(FeeRuleSchema) }),
    {
      decode: (input, options, ast) => {
        if (Array.isArray(input)) {
          return ParseResult.fail(
            new ParseResult.Type(ast, input, `must be an object of fee rules by ${what} id`)
          )
        }
        const issues: Array<ParseResult.ParseIssue> = []
        const output: Record<string, FeeRule> = {}
        const source = input as Readonly<Record<string, unknown>>
        for (const key of Object.keys(source)) {
          if (!isId(key)) {
            issues.push(
              new ParseResult.Pointer(key, input, new ParseResult.Type(ast, key, keyMessage))
            )
            continue
          }
          const rule = ParseResult.decodeUnknownEither(FeeRuleSchema)(source[key], options)
          if (Either.isLeft(rule)) issues.push(new ParseResult.Pointer(key, input, rule.left))
          else output[key] = rule.right
          if (issues.length > 0 && options?.errors !== "all") break
        }
        const [first, ...rest] = issues
        if (first === undefined) return ParseResult.succeed(output)
        return ParseResult.fail(
          rest.length === 0 ? first : new ParseResult.Composite(ast, input, [first, ...rest])
        )
      },
      encode: (rules, options) =>
        ParseResult.encodeEither(Schema.Record({ key: Schema.String, value: FeeRuleSchema }))(
          rules,
          options
        )
    }
  )

const isPartnerId = Schema.is(PartnerId)
const isMerchantId = Schema.is(MerchantId)

/**
 * The fee schedule of the configuration file (JSON):
 * `{ "default": {...}, "partners": { "ptnr_…": {...} }, "merchants": { "mrch_…": {...} } }`.
 * Decode with `onExcessProperty: "error"` (as `decodeFeeSchedule` does) to refuse unknown fields.
 */
export const FeeScheduleSchema = Schema.Struct({
  default: Schema.optionalWith(FeeRuleSchema, { exact: true }),
  partners: Schema.optionalWith(
    rulesById(isPartnerId, "must be a partner id of the form ptnr_<letters and digits>", "partner"),
    { exact: true }
  ),
  merchants: Schema.optionalWith(
    rulesById(
      isMerchantId,
      "must be a merchant id of the form mrch_<letters and digits>",
      "merchant"
    ),
    { exact: true }
  )
}).annotations({ identifier: "FeeSchedule" })

const decodeSchedule = Schema.decodeUnknownEither(FeeScheduleSchema, {
  errors: "all",
  onExcessProperty: "error"
})

/**
 * A fee schedule from parsed JSON, unknown fields refused; every offending field is an
 * issue named by its dotted path (`merchants.mrch_….percentage`).
 */
export const decodeFeeSchedule = (input: unknown): Either.Either<FeeSchedule, InvalidInput> =>
  Either.mapLeft(decodeSchedule(input), (error) => {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      field: issue.path.length === 0 ? "fees" : issue.path.map(String).join("."),
      message: issue._tag === "Unexpected" ? "is not a known field" : issue.message
    }))
    return new InvalidInput({
      message: issues.map((issue) => `${issue.field}: ${issue.message}`).join("; "),
      issues
    })
  })

// ---------------------------------------------------------------------------
// Computing the fees

/** The largest decimals a token can have (ERC-20 `decimals` is a uint8). */
const MAX_DECIMALS = 255

const orDie = (field: string, parsed: Either.Either<Decimal, string>): Decimal =>
  Either.getOrElse(parsed, (message) => {
    throw new RangeError(`fee rule ${field} ${message}`)
  })

/**
 * The fees on `amount` minor units of a token of `decimals`, by `rule`; see the module
 * comment for the rounding. An invalid rule, a negative amount or impossible decimals are
 * defects: they throw a RangeError.
 */
export const computeFees = (rule: FeeRule, amount: bigint, decimals: number): PaymentFees => {
  if (amount < 0n) throw new RangeError(`amount must not be negative, got ${amount}`)
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new RangeError(`decimals must be an integer from 0 to ${MAX_DECIMALS}, got ${decimals}`)
  }
  const fixed = orDie("fixed", parseFixed(rule.fixed))
  const rate = orDie("percentage", parsePercentage(rule.percentage))

  // fixed × 10^decimals, rounded down.
  const fixedPart = (fixed.numerator * 10n ** BigInt(decimals)) / 10n ** BigInt(fixed.scale)
  // amount × rate / 100, half up: floor(x + 1/2) with x = amount × numerator / denominator.
  // The denominator is 100 × 10^scale, even, so half of it is exact.
  const denominator = 100n * 10n ** BigInt(rate.scale)
  const percentagePart = (amount * rate.numerator + denominator / 2n) / denominator

  const total = fixedPart + percentagePart
  return total <= amount
    ? { fixed: fixedPart, percentage: rule.percentage, total }
    : {
        fixed: fixedPart < amount ? fixedPart : amount,
        percentage: rule.percentage,
        total: amount
      }
}

/** What the merchant receives: the amount paid less the fees (never negative). */
export const settlementAmount = (amount: bigint, fees: PaymentFees): bigint => amount - fees.total
