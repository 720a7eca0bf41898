/**
 * Live prices: the `Prices` port on Chainlink-style aggregators
 * (`AggregatorV3Interface`), read with viem through the configured networks.
 * A rate comes only from a round that is positive and fresh and, on a network
 * with a sequencer-uptime feed, read while its sequencer is up and past its
 * grace period; otherwise the pair has no price (the options it would price
 * are left out) unless its feed names the operator's rate table as the
 * fallback. A pair without a feed is priced by the rate table, as
 * `Prices.fromTable` does. Reads are kept a few seconds per feed and shared by
 * concurrent callers, so a burst of checkouts makes one RPC call per feed.
 */
import {
  type FeedReading,
  findCurrency,
  lookup,
  makeSharedReads,
  type PriceQuote,
  Prices,
  parseCaip10,
  type Rate,
  type RateTable
} from "@pay/core"
import { Effect, Either, Layer, Metric, type Scope } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionZeroDataError,
  createPublicClient,
  type PublicClient,
  parseAbi,
  type Transport
} from "viem"
import { describe, isRevert, unavailable } from "./RpcErrors.js"

/** The two reads of `AggregatorV3Interface` the engine makes. */
export const aggregatorV3Abi = parseAbi([
  "function decimals() view returns (uint8)",
  "function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)"
])

/** One pair's feed: 1 BASE = answer / 10^decimals QUOTE. */
export interface PriceFeedConfig {
  /** The aggregator (or its proxy) as a CAIP-10 account, on one of the configured networks. */
  readonly feed: string
  /** A round older than this is refused; default: the heartbeat plus a grace (`defaultMaxAgeSeconds`). */
  readonly maxAgeSeconds?: number
  /** How often the feed updates at the latest; default by kind of pair (`defaultHeartbeatSeconds`). */
  readonly heartbeatSeconds?: number
  /** A refused read is priced from the rate table instead (which must have the pair). */
  readonly fallbackToRate?: boolean
}

/** The feeds part of a setup (`ChainSetup.prices`). */
export interface PriceFeedSettings {
  /** `BASE/QUOTE` (`"ETH/USD"`) to its feed. */
  readonly feeds: Readonly<Record<string, PriceFeedConfig>>
  /** A network's (CAIP-2) L2 sequencer-uptime feed, a CAIP-10 account on that same network. */
  readonly sequencerUptimeFeeds?: Readonly<Record<string, string>>
  /** How long a read is used before the feed is read again (default 5,000 ms). */
  readonly cacheTtlMs?: number
}

export interface ChainlinkPricesConfig extends PriceFeedSettings {
  /** The networks the feeds are read through. */
  readonly networks: ReadonlyArray<{ readonly chainId: string; readonly transport: Transport }>
  /** The operator's rates: pairs without a feed, and the fallback of feeds that allow one. */
  readonly rates?: RateTable
}

export const DEFAULT_PRICE_CACHE_TTL_MS = 5_000
/** Chainlink's recommendation: an L2 sequencer back up settles for an hour before prices count. */
export const SEQUENCER_GRACE_SECONDS = 3_600
/** A round stamped a little ahead of our clock is a clock difference, not a broken feed. */
const FUTURE_SKEW_SECONDS = 60n
const STABLECOINS: ReadonlySet<string> = new Set(["USDC", "USDT", "DAI", "EURC", "PYUSD"])

/**
 * Chainlink's usual heartbeat for a kind of pair: fiat pairs (EUR/USD) and
 * stablecoins (USDC/USD) move little and update daily, the rest (ETH/USD) hourly.
 */
export const defaultHeartbeatSeconds = (pair: string): number => {
  const [base = "", quote = ""] = pair.toUpperCase().split("/")
  const fiat = (code: string) => findCurrency(code) !== undefined
  return (fiat(base) && fiat(quote)) || STABLECOINS.has(base) ? 86_400 : 3_600
}

/**
 * The oldest round accepted by default: the heartbeat plus a tenth of it (at
 * least 5 minutes), since a heartbeat update lands some blocks after it is due.
 */
export const defaultMaxAgeSeconds = (heartbeatSeconds: number): number =>
  heartbeatSeconds + Math.max(Math.ceil(heartbeatSeconds / 10), 300)

/** The metric labels of a refusal; bounded: the configured pairs and these reasons. */
export type RefusalReason =
  | "non_positive"
  | "bad_timestamp"
  | "stale"
  | "carried_over"
  | "network_error"
  | "feed_error"
  | "sequencer_down"
  | "sequencer_grace"

export const priceRefusals = Metric.counter("pay_price_refusals_total", {
  description:
    "Price feed reads refused (stale, non-positive, sequencer down…), by pair and reason",
  incremental: true
})

/** Where an aggregator is read. */
interface Source {
  /** The CAIP-10 account, canonical (checksummed). */
  readonly feed: string
  readonly chainId: string
  readonly address: Address
}

interface Feed extends Source {
  readonly pair: string
  readonly base: string
  readonly quote: string
  readonly maxAgeSeconds: number
  readonly fallbackToRate: boolean
}

interface Round {
  readonly roundId: bigint
  readonly answer: bigint
  readonly startedAt: bigint
  readonly updatedAt: bigint
  readonly answeredInRound: bigint
  readonly decimals: number
}

interface Refusal {
  readonly reason: RefusalReason
  readonly ageSeconds?: number
  readonly detail?: string
}

const PAIR = /^[A-Za-z0-9]{1,16}\/[A-Za-z0-9]{1,16}$/
const positiveWhole = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n > 0

/** A CAIP-10 feed on one of `chains`, or why not (said as the construction's refusal). */
const feedAccount = (what: string, value: string, chains: ReadonlySet<string>): Source => {
  const parsed = parseCaip10(value)
  if (Either.isLeft(parsed)) throw new TypeError(`${what} ${value}: ${parsed.left}`)
  const { chain, address, value: feed } = parsed.right
  if (chain.namespace !== "eip155") throw new TypeError(`${what} ${value} is not on an EVM chain`)
  if (!chains.has(chain.value)) {
    throw new TypeError(
      `${what} ${value} is on ${chain.value}, which is not a configured network (${[...chains].join(", ")})`
    )
  }
  return { feed, chainId: chain.value, address: address as Address }
}

/** The feeds, checked: a wrong one stops the construction with a message naming it. */
const feedsOf = (config: ChainlinkPricesConfig): ReadonlyMap<string, Feed> => {
  const chains = new Set(config.networks.map((n) => n.chainId))
  const feeds = new Map<string, Feed>()
  for (const [given, settings] of Object.entries(config.feeds)) {
    const pair = given.toUpperCase()
    const [base = "", quote = ""] = pair.split("/")
    if (!PAIR.test(given) || base === quote) {
      throw new TypeError(`prices: ${given} must be BASE/QUOTE, two different currencies`)
    }
    if (feeds.has(pair)) throw new TypeError(`prices: ${pair} is given twice`)
    for (const key of ["maxAgeSeconds", "heartbeatSeconds"] as const) {
      if (settings[key] !== undefined && !positiveWhole(settings[key])) {
        throw new TypeError(`prices: ${given}.${key} must be a positive whole number of seconds`)
      }
    }
    const fallbackToRate = settings.fallbackToRate === true
    if (fallbackToRate && lookup(config.rates ?? {}, base, quote) === undefined) {
      throw new TypeError(
        `prices: ${given}.fallbackToRate needs the rate table to have ${pair} (or ${quote}/${base})`
      )
    }
    const heartbeat = settings.heartbeatSeconds ?? defaultHeartbeatSeconds(pair)
    feeds.set(pair, {
      pair,
      base,
      quote,
      ...feedAccount(`prices: ${given}.feed`, settings.feed, chains),
      maxAgeSeconds: settings.maxAgeSeconds ?? defaultMaxAgeSeconds(heartbeat),
      fallbackToRate
    })
  }
  return feeds
}

const ONE: PriceQuote = { numerator: 1n, denominator: 1n, readings: [] }

/** The same fraction with the powers of ten both sides share taken out (exact, and readable). */
const tidy = (numerator: bigint, denominator: bigint): Rate => {
  let n = numerator
  let d = denominator
  while (n % 10n === 0n && d % 10n === 0n) {
    n /= 10n
    d /= 10n
  }
  return { numerator: n, denominator: d }
}

const inverted = (q: PriceQuote): PriceQuote => ({
  numerator: q.denominator,
  denominator: q.numerator,
  readings: q.readings
})

/**
 * The check of a round, given the time in seconds.
 *
 * answeredInRound < roundId is still checked though Chainlink deprecated the
 * field (OCR aggregators set it to roundId, so it never trips on them): on a
 * legacy aggregator it means the answer was carried over from an earlier round
 * that updatedAt may not show, and refusing there costs nothing.
 */
const checkRound = (round: Round, maxAgeSeconds: number, now: bigint): Refusal | undefined => {
  if (round.updatedAt === 0n) return { reason: "bad_timestamp" }
  const ageSeconds = Number(now - round.updatedAt)
  if (round.updatedAt > now + FUTURE_SKEW_SECONDS) return { reason: "bad_timestamp", ageSeconds }
  if (round.answer <= 0n) return { reason: "non_positive", ageSeconds }
  if (ageSeconds > maxAgeSeconds) return { reason: "stale", ageSeconds }
  if (round.answeredInRound < round.roundId) return { reason: "carried_over", ageSeconds }
  return undefined
}

/**
 * The sequencer-uptime feed's round: answer 0 is up, 1 down; startedAt is
 * when it last changed. Feeds on an L2 whose sequencer is down, or was back up
 * less than the grace period ago, may hold prices the L1 has moved past.
 */
const checkSequencer = (round: Round, now: bigint): Refusal | undefined => {
  const ageSeconds = Number(now - round.startedAt)
  if (round.answer !== 0n) return { reason: "sequencer_down", ageSeconds }
  // startedAt 0: the feed has no status yet (Arbitrum's before its first round): not known up.
  if (round.startedAt === 0n) return { reason: "sequencer_grace" }
  if (ageSeconds < SEQUENCER_GRACE_SECONDS) return { reason: "sequencer_grace", ageSeconds }
  return undefined
}

/**
 * The call failed in the feed (a revert, no contract at the address), not in
 * the network: said apart so the operator looks at the address, not the RPC.
 */
const feedAnswered = (error: unknown) =>
  isRevert(error) ||
  (error instanceof BaseError &&
    error.walk((e) => e instanceof ContractFunctionZeroDataError) !== null)

/**
 * Latest rounds, each feed read at most once per TTL however many ask (a
 * failed read too: a down RPC is not asked by every checkout), shared as
 * core's SharedReads shares them. A priced feed's `decimals()` is read with
 * its first round and kept.
 */
const makeRoundReader = (config: ChainlinkPricesConfig) =>
  Effect.gen(function* () {
    const ttlMs = config.cacheTtlMs ?? DEFAULT_PRICE_CACHE_TTL_MS
    const clock = yield* Effect.clock
    const clients = new Map<string, PublicClient>(
      config.networks.map((n) => [n.chainId, createPublicClient({ transport: n.transport })])
    )
    const decimalsKept = new Map<string, number>()
    const shared = yield* makeSharedReads(ttlMs)

    const call = <A>(source: Source, read: (client: PublicClient) => Promise<A>) =>
      Effect.tryPromise({
        try: () => read(clients.get(source.chainId)!),
        catch: (error): Refusal =>
          feedAnswered(error)
            ? { reason: "feed_error", detail: describe(error) }
            : { reason: "network_error", detail: unavailable(source.chainId, error).message }
      })

    const readRound = (source: Source, priced: boolean) => {
      const known = priced ? decimalsKept.get(source.feed) : 0
      const args = { address: source.address, abi: aggregatorV3Abi } as const
      return Effect.all(
        [
          known === undefined
            ? Effect.tap(
                call(source, (client) =>
                  client.readContract({ ...args, functionName: "decimals" })
                ),
                (decimals) => Effect.sync(() => decimalsKept.set(source.feed, decimals))
              )
            : Effect.succeed(known),
          call(source, (client) =>
            client.readContract({ ...args, functionName: "latestRoundData" })
          )
        ],
        { concurrency: 2 }
      ).pipe(
        Effect.map(
          ([decimals, [roundId, answer, startedAt, updatedAt, answeredInRound]]): Round => ({
            roundId,
            answer,
            startedAt,
            updatedAt,
            answeredInRound,
            decimals
          })
        )
      )
    }

    return {
      clock,
      latest: (source: Source, priced: boolean) => shared(source.feed, readRound(source, priced))
    }
  })

const refused = (feed: Feed, refusal: Refusal, fallback: boolean) =>
  Effect.zipRight(
    Metric.increment(
      Metric.tagged(Metric.tagged(priceRefusals, "pair", feed.pair), "reason", refusal.reason)
    ),
    Effect.logWarning(
      fallback
        ? "price feed refused: priced from the rate table instead (fallbackToRate)"
        : "price feed refused: the pair has no price"
    ).pipe(
      Effect.annotateLogs({
        pair: feed.pair,
        feed: feed.feed,
        reason: refusal.reason,
        ageSeconds: refusal.ageSeconds ?? "unknown",
        ...(refusal.detail === undefined ? {} : { detail: refusal.detail })
      })
    )
  )

/**
 * The `Prices` port on the configured feeds; refuses a configuration whose
 * feed is not on a configured network (a defect, as `makeEvmChain` does).
 * Times are Effect's `Clock` of the construction (a `TestClock` in tests).
 */
export const makeChainlinkPrices = (
  config: ChainlinkPricesConfig
): Effect.Effect<Prices["Type"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const feeds = feedsOf(config)
    const chains = new Set(config.networks.map((n) => n.chainId))
    const sequencers = new Map<string, Source>()
    for (const [chainId, value] of Object.entries(config.sequencerUptimeFeeds ?? {})) {
      const what = `sequencerUptimeFeeds.${chainId}`
      const source = feedAccount(what, value, chains)
      if (source.chainId !== chainId) throw new TypeError(`${what} ${value} is not on ${chainId}`)
      sequencers.set(chainId, source)
    }
    const rates = config.rates ?? {}
    const { clock, latest } = yield* makeRoundReader(config)

    /** The feed's rate, BASE to QUOTE, or the table's when refused and allowed; else undefined. */
    const quoteOf = (feed: Feed): Effect.Effect<PriceQuote | undefined> =>
      Effect.gen(function* () {
        const sequencer = sequencers.get(feed.chainId)
        const [up, round] = yield* Effect.all(
          [
            sequencer === undefined
              ? Effect.succeed(undefined)
              : Effect.either(latest(sequencer, false)),
            Effect.either(latest(feed, true))
          ],
          { concurrency: 2 }
        )
        const now = BigInt(Math.floor(clock.unsafeCurrentTimeMillis() / 1000))
        const sequencerRefusal =
          up === undefined
            ? undefined
            : Either.match(up, { onLeft: (r) => r, onRight: (r) => checkSequencer(r, now) })
        const refusal =
          sequencerRefusal ??
          Either.match(round, {
            onLeft: (r) => r,
            onRight: (r) => checkRound(r, feed.maxAgeSeconds, now)
          })
        if (refusal !== undefined || Either.isLeft(round)) {
          const fallback = feed.fallbackToRate ? lookup(rates, feed.base, feed.quote) : undefined
          yield* refused(feed, refusal ?? { reason: "network_error" }, fallback !== undefined)
          return fallback
        }
        const { roundId, answer, updatedAt, decimals } = round.right
        const reading: FeedReading = {
          pair: feed.pair,
          feed: feed.feed,
          roundId,
          answer,
          decimals,
          updatedAt: new Date(Number(updatedAt) * 1000)
        }
        return { ...tidy(answer, 10n ** BigInt(decimals)), readings: [reading] }
      })

    /** `from` to `to` by a feed of the pair either way round; undefined when it has none. */
    const sideOf = (from: string, to: string) => {
      const direct = feeds.get(`${from}/${to}`)
      if (direct !== undefined) return quoteOf(direct)
      const reverse = feeds.get(`${to}/${from}`)
      if (reverse === undefined) return undefined
      return Effect.map(quoteOf(reverse), (q) => (q === undefined ? undefined : inverted(q)))
    }

    const rate = (from: string, to: string): Effect.Effect<PriceQuote | undefined> => {
      if (from === to) return Effect.succeed(ONE)
      const [f, t] = [from.toUpperCase(), to.toUpperCase()]
      const direct = sideOf(f, t)
      if (direct !== undefined) return direct
      const [fromUsd, toUsd] =
        f === "USD" || t === "USD" ? [] : [sideOf(f, "USD"), sideOf(t, "USD")]
      if (fromUsd === undefined || toUsd === undefined) {
        return Effect.succeed(lookup(rates, from, to))
      }
      // Crossed through USD: (from in USD) / (to in USD), from both rounds.
      return Effect.map(Effect.all([fromUsd, toUsd], { concurrency: 2 }), ([a, b]) =>
        a === undefined || b === undefined
          ? undefined
          : {
              ...tidy(a.numerator * b.denominator, a.denominator * b.numerator),
              readings: [...a.readings, ...b.readings]
            }
      )
    }

    return Prices.of({ rate })
  })

/** `makeChainlinkPrices` as the engine's `prices` layer. */
export const chainlinkPricesLayer = (config: ChainlinkPricesConfig): Layer.Layer<Prices> =>
  Layer.scoped(Prices, makeChainlinkPrices(config))
