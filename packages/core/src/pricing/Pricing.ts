/**
 * Prices: how much of a token pays a fiat amount. A token is priced in a
 * currency (USDC in USD, EURC in EUR, ETH in ETH); converting between two
 * currencies uses a rate from the `Prices` port. Default: each currency at 1:1
 * with itself and the rate table of the configuration. All arithmetic is on
 * exact fractions of bigints, and the buyer's amount is rounded up, so the
 * merchant never receives less than asked.
 */
import { Context, Effect, Either, Layer } from "effect"

/** An exact positive fraction. */
export interface Rate {
  readonly numerator: bigint
  readonly denominator: bigint
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,30}))?$/

/** A decimal string (`"1.0825"`) as an exact fraction; zero and negatives are refused. */
export const parseRate = (text: string): Either.Either<Rate, string> => {
  const match = DECIMAL.exec(text)
  if (match === null) return Either.left("must be a positive decimal number such as 1.0825")
  const fraction = match[2] ?? ""
  const numerator = BigInt(`${match[1]}${fraction}`)
  if (numerator === 0n) return Either.left("must be greater than zero")
  return Either.right({ numerator, denominator: 10n ** BigInt(fraction.length) })
}

const invert = (rate: Rate): Rate => ({
  numerator: rate.denominator,
  denominator: rate.numerator
})

/** `1 base = rate quote`, as configured (`"EUR/USD": "1.08"`). */
export interface RateTable {
  readonly [pair: string]: Rate
}

export class Prices extends Context.Tag("@pay/core/Prices")<
  Prices,
  {
    /** How many units of `to` one unit of `from` is worth; undefined when unknown. */
    readonly rate: (from: string, to: string) => Effect.Effect<Rate | undefined>
  }
>() {
  /** Prices from a fixed table: each currency at 1:1 with itself, a pair either way round. */
  static fromTable(table: RateTable): Layer.Layer<Prices> {
    return Layer.succeed(
      Prices,
      Prices.of({ rate: (from, to) => Effect.succeed(lookup(table, from, to)) })
    )
  }
}

export const lookup = (table: RateTable, from: string, to: string): Rate | undefined => {
  if (from === to) return { numerator: 1n, denominator: 1n }
  const direct = table[`${from}/${to}`]
  if (direct !== undefined) return direct
  const reverse = table[`${to}/${from}`]
  return reverse === undefined ? undefined : invert(reverse)
}

/** Ceiling division of non-negative bigints. */
const divideUp = (a: bigint, b: bigint): bigint => (a + b - 1n) / b

/**
 * The token amount (in its minor units) worth `value` minor units of a
 * currency with `fromDecimals` digits, at `rate` (1 from = rate token-currency
 * units), for a token of `tokenDecimals`: rounded up.
 */
export const convert = (
  value: bigint,
  fromDecimals: number,
  rate: Rate,
  tokenDecimals: number
): bigint =>
  divideUp(
    value * rate.numerator * 10n ** BigInt(tokenDecimals),
    rate.denominator * 10n ** BigInt(fromDecimals)
  )
