/**
 * Amounts as exact integers in minor units (cents, token base units), parsed once from the wire's
 * `{unit, value}` strings. Bigints keep token amounts up to 2^256 - 1 exact; conversion to a
 * JSON number happens only at the edge, for statistics (WIRE.md section 3).
 */
import { Either, ParseResult, Schema } from "effect"
import { type Caip19, Caip19Schema, parseCaip19 } from "./Caip.js"
import { type FiatCurrency, findCurrency } from "./Currency.js"
import { networkOfToken, type TokenRegistryShape } from "./TokenRegistry.js"

export type AmountUnit =
  | { readonly kind: "fiat"; readonly currency: FiatCurrency }
  | { readonly kind: "token"; readonly asset: Caip19 }

export interface Amount {
  readonly unit: AmountUnit
  readonly value: bigint
}

export const MAX_FIAT_MINOR_UNITS = 10n ** 15n
export const MAX_TOKEN_MINOR_UNITS = 2n ** 256n - 1n

export const maxMinorUnits = (unit: AmountUnit): bigint =>
  unit.kind === "fiat" ? MAX_FIAT_MINOR_UNITS : MAX_TOKEN_MINOR_UNITS

const FIAT_PREFIX = "iso4217/"
const TOKEN_PREFIX = "caip19/"

export const parseUnit = (unit: string): Either.Either<AmountUnit, string> => {
  if (unit.startsWith(FIAT_PREFIX)) {
    const code = unit.slice(FIAT_PREFIX.length)
    const currency = findCurrency(code)
    return currency === undefined
      ? Either.left(`unknown ISO 4217 currency code ${JSON.stringify(code)}`)
      : Either.right({ kind: "fiat", currency })
  }
  if (unit.startsWith(TOKEN_PREFIX)) {
    return parseCaip19(unit.slice(TOKEN_PREFIX.length)).pipe(
      Either.map((parsed) => ({ kind: "token", asset: parsed.value }) as const),
      Either.mapLeft((message) => `invalid asset id after caip19/: ${message}`)
    )
  }
  return Either.left(
    'must start with iso4217/ or caip19/, e.g. "iso4217/USD" or "caip19/eip155:8453/erc20:0x…"'
  )
}

export const formatUnit = (unit: AmountUnit): string =>
  unit.kind === "fiat" ? `${FIAT_PREFIX}${unit.currency.code}` : `${TOKEN_PREFIX}${unit.asset}`

const WHOLE_NUMBER_HINT =
  'must be a whole number of minor units as a string of digits, e.g. "1050" for 10.50'
const DIGITS = /^[0-9]+$/

// One spelling per amount, so stored and echoed values compare as strings.
export const parseMinorUnits = (value: string, max: bigint): Either.Either<bigint, string> => {
  if (/^-[0-9]+$/.test(value)) return Either.left("must be positive")
  if (!DIGITS.test(value)) return Either.left(WHOLE_NUMBER_HINT)
  if (/^0+$/.test(value)) return Either.left("must be positive")
  if (value.startsWith("0")) return Either.left("must not have leading zeros")
  // Compare lengths first so a megabyte of digits is refused without building a huge bigint.
  if (value.length > String(max).length || BigInt(value) > max) {
    return Either.left(`must be at most ${max}`)
  }
  return Either.right(BigInt(value))
}

const AmountUnitSchema = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("fiat"),
    currency: Schema.Struct({ code: Schema.String, name: Schema.String, decimals: Schema.Number })
  }),
  Schema.Struct({ kind: Schema.Literal("token"), asset: Schema.typeSchema(Caip19Schema) })
)

export const AmountSchema: Schema.Schema<Amount> = Schema.Struct({
  unit: AmountUnitSchema,
  value: Schema.BigIntFromSelf
})

const AmountFields = Schema.Struct({
  unit: Schema.String.annotations({
    message: () => 'must be a string like "iso4217/USD" or "caip19/eip155:8453/erc20:0x…"'
  }),
  // Numbers lose precision past 2^53, so only strings are accepted, even for small amounts.
  value: Schema.String.annotations({
    message: () => WHOLE_NUMBER_HINT
  })
}).annotations({
  // Said when the amount is not an object at all (`"amount": "10.50"`); a wrong field inside is
  // named on its own (`amount.value`).
  message: () =>
    'must be an object like {"unit": "iso4217/USD", "value": "1050"}, the value a whole number of minor units as a string of digits ("1050" for 10.50)'
})

/** The wire's `{unit, value}`, decoded to an exact `Amount`; failures point at `unit` or `value`. */
export const AmountInput: Schema.Schema<Amount, typeof AmountFields.Encoded> =
  Schema.transformOrFail(AmountFields, AmountSchema, {
    strict: true,
    decode: (input, _, ast) => {
      const unit = parseUnit(input.unit)
      // Without a valid unit the value is still checked, against the loosest limit.
      const max = Either.isRight(unit) ? maxMinorUnits(unit.right) : MAX_TOKEN_MINOR_UNITS
      const value = parseMinorUnits(input.value, max)
      const issue = (field: "unit" | "value", message: string) =>
        new ParseResult.Pointer(field, input, new ParseResult.Type(ast, input[field], message))
      if (Either.isLeft(unit)) {
        const unitIssue = issue("unit", unit.left)
        return ParseResult.fail(
          Either.isLeft(value)
            ? new ParseResult.Composite(ast, input, [unitIssue, issue("value", value.left)])
            : unitIssue
        )
      }
      if (Either.isLeft(value)) return ParseResult.fail(issue("value", value.left))
      return ParseResult.succeed({ unit: unit.right, value: value.right })
    },
    encode: (amount) =>
      ParseResult.succeed({ unit: formatUnit(amount.unit), value: String(amount.value) })
  }).annotations({ identifier: "AmountInput", title: "Amount" })

export interface FiatDisplay {
  readonly assetSymbol: string
  readonly assetName: string
  readonly decimals: number
}

/** A logo that is not known is left out, not null: the reference types each as a string. */
export interface TokenDisplay extends FiatDisplay {
  readonly iconUrl?: string
  readonly networkName: string
  readonly networkIconUrl?: string
}

export type AmountDisplay = FiatDisplay | TokenDisplay

/**
 * The SPEC's `display` object. `undefined` for a token the registry does not know: any guessed
 * decimals would show a wrong amount, so the caller decides what to do instead.
 */
export const amountDisplay = (
  unit: AmountUnit,
  registry: TokenRegistryShape
): AmountDisplay | undefined => {
  if (unit.kind === "fiat") {
    const { code, name, decimals } = unit.currency
    return { assetSymbol: code, assetName: name, decimals }
  }
  const token = registry.token(unit.asset)
  if (token === undefined) return undefined
  const network = networkOfToken(registry, token)
  return {
    assetSymbol: token.symbol,
    assetName: token.name,
    decimals: token.decimals,
    ...(token.iconUrl === null ? {} : { iconUrl: token.iconUrl }),
    networkName: network.name,
    ...(network.iconUrl === null ? {} : { networkIconUrl: network.iconUrl })
  }
}

export interface AmountWire {
  readonly unit: string
  readonly value: string
  readonly display: AmountDisplay | undefined
}

export const amountToWire = (amount: Amount, registry: TokenRegistryShape): AmountWire => ({
  unit: formatUnit(amount.unit),
  value: String(amount.value),
  display: amountDisplay(amount.unit, registry)
})

const checkDecimals = (decimals: number): void => {
  if (!Number.isInteger(decimals) || decimals < 0) {
    throw new RangeError(`decimals must be a non-negative integer, got ${decimals}`)
  }
}

/** The exact decimal string in major units, all decimals kept: 1050n, 2 -> "10.50". */
export const formatMajor = (value: bigint, decimals: number): string => {
  checkDecimals(decimals)
  const sign = value < 0n ? "-" : ""
  const digits = (value < 0n ? -value : value).toString()
  if (decimals === 0) return `${sign}${digits}`
  const padded = digits.padStart(decimals + 1, "0")
  const cut = padded.length - decimals
  return `${sign}${padded.slice(0, cut)}.${padded.slice(cut)}`
}

// Parsing the exact decimal string rounds once, correctly; dividing floats would round twice.
export const toMajorUnits = (value: bigint, decimals: number): number =>
  Number(formatMajor(value, decimals))
