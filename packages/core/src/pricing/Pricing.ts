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

/**
 * One round of an on-chain price feed (a Chainlink-style aggregator), as a
 * quote was computed from it: stored with each option priced from it, so a
 * payment can say which round its price came from.
 */
export interface FeedReading {
  /** The pair the feed prices, as configured: `ETH/USD` (1 ETH = answer USD). */
  readonly pair: string
  /** The aggregator, as a CAIP-10 account: `eip155:1:0x5f4e…`. */
  readonly feed: string
  readonly roundId: bigint
  /** The feed's answer, in units of 10^-decimals. */
  readonly answer: bigint
  readonly decimals: number
  /** When the round was last updated, as the feed reports it. */
  readonly updatedAt: Date
}

/** A rate, with where it came from. */
export interface PriceQuote extends Rate {
  /**
   * The feed rounds the rate was computed from (two for a rate crossed
   * through a third currency); none when it came from the operator's rate
   * table, or is a currency's 1:1 with itself.
   */
  readonly readings: ReadonlyArray<FeedReading>
}

export class Prices extends Context.Tag("@pay/core/Prices")<
  Prices,
  {
    /**
     * How many units of `to` one unit of `from` is worth; undefined when
     * unknown, or when the source refuses to price it now (a stale feed):
     * the options it would price are left out, never priced wrong.
     */
    readonly rate: (from: string, to: string) => Effect.Effect<PriceQuote | undefined>
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

export const lookup = (table: RateTable, from: string, to: string): PriceQuote | undefined => {
  if (from === to) return { numerator: 1n, denominator: 1n, readings: [] }
  const direct = table[`${from}/${to}`]
  if (direct !== undefined) return { ...direct, readings: [] }
  const reverse = table[`${to}/${from}`]
  return reverse === undefined ? undefined : { ...invert(reverse), readings: [] }
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
