/**
 * Live prices against fake aggregators: a viem custom transport answers
 * `eth_call` with ABI-encoded `decimals()` and `latestRoundData()` per feed
 * address and counts the calls; Effect's TestClock is the time.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Caip2, Prices } from "@pay/core"
import { Cause, Effect, Exit, Fiber, HashMap, Logger, Metric, Option, TestClock } from "effect"
import {
  type Address,
  custom,
  decodeFunctionData,
  encodeFunctionResult,
  getAddress,
  type Hex,
  HttpRequestError
} from "viem"
import {
  aggregatorV3Abi,
  type ChainlinkPricesConfig,
  defaultHeartbeatSeconds,
  defaultMaxAgeSeconds,
  makeChainlinkPrices,
  priceRefusals
} from "./ChainlinkPrices.js"
import { type ChainSetup, chainEngineOptions } from "./ChainSetup.js"

const NOW_MS = 1_764_000_000_000
const NOW = BigInt(NOW_MS / 1000)

const address = (byte: string) => getAddress(`0x${byte.repeat(20)}`)
const ETH_USD = address("e1")
const EUR_USD = address("e2")
const USD_JPY = address("e3")
const BASE_ETH_USD = address("b1")
const SEQUENCER = address("5e")

interface FakeRound {
  readonly answer: bigint
  readonly decimals?: number
  readonly ageSeconds?: number
  readonly updatedAt?: bigint
  readonly startedAt?: bigint
  readonly roundId?: bigint
  readonly answeredInRound?: bigint
}

/** Aggregators by address, answering over a custom transport; `down` makes every call fail. */
const fakeFeeds = () => {
  const rounds = new Map<string, FakeRound>()
  const calls = { decimals: 0, latestRoundData: 0 }
  let down = false
  let held: { readonly promise: Promise<void>; readonly release: () => void } | undefined
  const transport = custom(
    {
      request: async ({ method, params }) => {
        if (method !== "eth_call") throw new Error(`unexpected ${method}`)
        const [{ to, data }] = params as [{ to: Address; data: Hex }]
        const { functionName } = decodeFunctionData({ abi: aggregatorV3Abi, data })
        calls[functionName] += 1
        // A tick later, as a real RPC answers: concurrent callers overlap.
        await new Promise((resolve) => setTimeout(resolve, 1))
        await held?.promise
        if (down) {
          throw new HttpRequestError({ url: "http://127.0.0.1:1/rpc", details: "fetch failed" })
        }
        const round = rounds.get(getAddress(to))
        // No contract there: a node answers an empty result.
        if (round === undefined) return "0x"
        if (functionName === "decimals") {
          return encodeFunctionResult({
            abi: aggregatorV3Abi,
            functionName,
            result: round.decimals ?? 8
          })
        }
        const roundId = round.roundId ?? 18_446_744_073_709_562_300n
        const updatedAt = round.updatedAt ?? NOW - BigInt(round.ageSeconds ?? 60)
        return encodeFunctionResult({
          abi: aggregatorV3Abi,
          functionName,
          result: [
            roundId,
            round.answer,
            round.startedAt ?? updatedAt,
            updatedAt,
            round.answeredInRound ?? roundId
          ]
        })
      }
    },
    { retryCount: 0 }
  )
  return {
    rounds,
    calls,
    transport,
    setDown: (value: boolean) => {
      down = value
    },
    /** Answers wait until the returned function is called. */
    hold: () => {
      let release = () => {}
      held = {
        promise: new Promise<void>((resolve) => (release = resolve)),
        release: () => release()
      }
      return held.release
    }
  }
}

type Fake = ReturnType<typeof fakeFeeds>

const configOf = (
  fake: Fake,
  extra: Partial<ChainlinkPricesConfig> = {}
): ChainlinkPricesConfig => ({
  networks: [
    { chainId: "eip155:1", transport: fake.transport },
    { chainId: "eip155:8453", transport: fake.transport }
  ],
  feeds: {
    "ETH/USD": { feed: `eip155:1:${ETH_USD.toLowerCase()}` },
    "EUR/USD": { feed: `eip155:1:${EUR_USD}` },
    "USD/JPY": { feed: `eip155:1:${USD_JPY}` }
  },
  rates: { "GBP/USD": { numerator: 127n, denominator: 100n } },
  ...extra
})

/** The service at NOW, with the warnings it logs. */
const pricesWith = (fake: Fake, extra: Partial<ChainlinkPricesConfig> = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(NOW_MS)
    const prices = yield* makeChainlinkPrices(configOf(fake, extra))
    const warnings: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
    const capture = Logger.make(({ message, annotations }) => {
      warnings.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
    const rate = (from: string, to: string) =>
      prices.rate(from, to).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
    return { rate, warnings }
  })

const refusals = (pair: string, reason: string) =>
  Effect.map(
    Metric.value(priceRefusals.pipe(Metric.tagged("pair", pair), Metric.tagged("reason", reason))),
    (state) => state.count
  )

describe("ChainlinkPrices rates", () => {
  it.scoped("reads a pair's feed directly, as an exact fraction with its round", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_12345678n, roundId: 7n, ageSeconds: 120 })
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("ETH", "USD")).toEqual({
        numerator: 3_000_12345678n,
        denominator: 100_000_000n,
        readings: [
          {
            pair: "ETH/USD",
            feed: `eip155:1:${ETH_USD}`,
            roundId: 7n,
            answer: 3_000_12345678n,
            decimals: 8,
            updatedAt: new Date((NOW_MS / 1000 - 120) * 1000)
          }
        ]
      })
    })
  )

  it.scoped("keeps the fraction exact: an 8-decimal 108000000 is 108/100", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(EUR_USD, { answer: 108_000_000n })
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("EUR", "USD")).toMatchObject({ numerator: 108n, denominator: 100n })
      fake.rounds.set(ETH_USD, { answer: 2_500_123456789012345678n, decimals: 18 })
      expect(yield* rate("ETH", "USD")).toMatchObject({
        numerator: 2_500_123456789012345678n,
        denominator: 10n ** 18n
      })
    })
  )

  it.scoped("inverts a feed of the pair the other way round", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      const { rate } = yield* pricesWith(fake)
      const quote = yield* rate("USD", "ETH")
      expect(quote).toMatchObject({ numerator: 1n, denominator: 3_000n })
      expect(quote?.readings.map((r) => r.pair)).toEqual(["ETH/USD"])
    })
  )

  it.scoped(
    "crosses through USD when both sides have a feed, either way round, with both rounds",
    () =>
      Effect.gen(function* () {
        const fake = fakeFeeds()
        fake.rounds.set(EUR_USD, { answer: 108_000_000n })
        fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
        fake.rounds.set(USD_JPY, { answer: 150_00000000n })
        const { rate } = yield* pricesWith(fake)
        // 1 EUR = 1.08 USD, 1 ETH = 3000 USD: 1 EUR = 1.08 / 3000 ETH.
        const eurEth = yield* rate("EUR", "ETH")
        expect(eurEth).toMatchObject({ numerator: 108n, denominator: 300_000n })
        expect(eurEth?.readings.map((r) => r.pair)).toEqual(["EUR/USD", "ETH/USD"])
        // USD/JPY is the other way round: 1 EUR = 1.08 × 150 JPY.
        expect(yield* rate("EUR", "JPY")).toMatchObject({ numerator: 162n, denominator: 1n })
        expect(yield* rate("JPY", "EUR")).toMatchObject({ numerator: 1n, denominator: 162n })
      })
  )

  it.scoped("prices a currency at 1:1 with itself, reading nothing", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("ETH", "ETH")).toEqual({ numerator: 1n, denominator: 1n, readings: [] })
      expect(fake.calls.latestRoundData).toBe(0)
    })
  )

  it.scoped("prices a pair without a feed from the rate table, as lookup does", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("GBP", "USD")).toEqual({
        numerator: 127n,
        denominator: 100n,
        readings: []
      })
      expect(yield* rate("USD", "GBP")).toEqual({
        numerator: 100n,
        denominator: 127n,
        readings: []
      })
      expect(yield* rate("CHF", "USD")).toBeUndefined()
      expect(fake.calls.latestRoundData).toBe(0)
    })
  )
})

describe("ChainlinkPrices refusals", () => {
  it.scoped("refuses a stale round: no price, one warning, the refusal counted", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ageSeconds: 2 * 3600 })
      const { rate, warnings } = yield* pricesWith(fake)
      const before = yield* refusals("ETH/USD", "stale")
      expect(yield* rate("ETH", "USD")).toBeUndefined()
      expect(yield* refusals("ETH/USD", "stale")).toBe(before + 1)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]?.annotations).toEqual({
        pair: "ETH/USD",
        feed: `eip155:1:${ETH_USD}`,
        reason: "stale",
        ageSeconds: 7200
      })
      expect(String(warnings[0]?.message)).toMatch(/the pair has no price/)
    })
  )

  it.scoped(
    "takes the default age from the kind of pair: a 20-hour-old EUR/USD, not a 2-hour-old ETH/USD",
    () =>
      Effect.gen(function* () {
        const fake = fakeFeeds()
        fake.rounds.set(EUR_USD, { answer: 108_000_000n, ageSeconds: 20 * 3600 })
        fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ageSeconds: 2 * 3600 })
        const { rate } = yield* pricesWith(fake)
        expect(yield* rate("EUR", "USD")).toMatchObject({ numerator: 108n })
        expect(yield* rate("ETH", "USD")).toBeUndefined()
        expect(defaultHeartbeatSeconds("EUR/USD")).toBe(86_400)
        expect(defaultHeartbeatSeconds("USDC/ETH")).toBe(86_400)
        expect(defaultHeartbeatSeconds("ETH/USD")).toBe(3_600)
        expect(defaultMaxAgeSeconds(3_600)).toBe(3_960)
        expect(defaultMaxAgeSeconds(86_400)).toBe(95_040)
        expect(defaultMaxAgeSeconds(60)).toBe(360)
      })
  )

  it.scoped("takes maxAgeSeconds, else the configured heartbeat, over the default", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ageSeconds: 2 * 3600 })
      fake.rounds.set(EUR_USD, { answer: 108_000_000n, ageSeconds: 2 * 3600 })
      const { rate } = yield* pricesWith(fake, {
        feeds: {
          "ETH/USD": { feed: `eip155:1:${ETH_USD}`, maxAgeSeconds: 3 * 3600 },
          "EUR/USD": { feed: `eip155:1:${EUR_USD}`, heartbeatSeconds: 3600 }
        }
      })
      expect(yield* rate("ETH", "USD")).toBeDefined()
      expect(yield* rate("EUR", "USD")).toBeUndefined()
    })
  )

  it.scoped("refuses a zero or negative answer", () =>
    Effect.gen(function* () {
      for (const answer of [0n, -1n]) {
        const fake = fakeFeeds()
        fake.rounds.set(ETH_USD, { answer })
        const { rate, warnings } = yield* pricesWith(fake)
        const before = yield* refusals("ETH/USD", "non_positive")
        expect(yield* rate("ETH", "USD")).toBeUndefined()
        expect(yield* refusals("ETH/USD", "non_positive")).toBe(before + 1)
        expect(warnings.map((w) => w.annotations.reason)).toEqual(["non_positive"])
      }
    })
  )

  it.scoped("refuses a round stamped 0 or ahead of the clock, and one carried over", () =>
    Effect.gen(function* () {
      const cases = [
        [{ updatedAt: 0n }, "bad_timestamp"],
        [{ updatedAt: NOW + 600n }, "bad_timestamp"],
        [{ roundId: 9n, answeredInRound: 8n }, "carried_over"]
      ] as const
      for (const [round, reason] of cases) {
        const fake = fakeFeeds()
        fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ...round })
        const { rate, warnings } = yield* pricesWith(fake)
        expect(yield* rate("ETH", "USD"), reason).toBeUndefined()
        expect(warnings.map((w) => w.annotations.reason)).toEqual([reason])
      }
      // A few seconds ahead is a clock difference, not a broken feed.
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, updatedAt: NOW + 30n })
      expect(yield* (yield* pricesWith(fake)).rate("ETH", "USD")).toBeDefined()
    })
  )

  it.scoped("refuses when the network does not answer, and counts it", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.setDown(true)
      const { rate, warnings } = yield* pricesWith(fake)
      const before = yield* refusals("ETH/USD", "network_error")
      expect(yield* rate("ETH", "USD")).toBeUndefined()
      expect(yield* refusals("ETH/USD", "network_error")).toBe(before + 1)
      expect(warnings[0]?.annotations).toMatchObject({
        reason: "network_error",
        ageSeconds: "unknown"
      })
      expect(String(warnings[0]?.annotations.detail)).toMatch(/127\.0\.0\.1/)
    })
  )

  it.scoped("refuses a feed address with no aggregator, as the feed's error", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      const { rate, warnings } = yield* pricesWith(fake)
      const before = yield* refusals("ETH/USD", "feed_error")
      expect(yield* rate("ETH", "USD")).toBeUndefined()
      expect(yield* refusals("ETH/USD", "feed_error")).toBe(before + 1)
      expect(String(warnings[0]?.annotations.detail)).toMatch(/returned no data/)
    })
  )

  it.scoped("refuses a crossed rate when either side is refused", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(EUR_USD, { answer: 108_000_000n })
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ageSeconds: 2 * 3600 })
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("EUR", "ETH")).toBeUndefined()
    })
  )
})

describe("ChainlinkPrices on an L2 with a sequencer-uptime feed", () => {
  const onBase = (fake: Fake) =>
    pricesWith(fake, {
      feeds: { "ETH/USD": { feed: `eip155:8453:${BASE_ETH_USD}` } },
      sequencerUptimeFeeds: { "eip155:8453": `eip155:8453:${SEQUENCER}` }
    })

  it.scoped("refuses while the sequencer is down, and for the grace hour after it is back", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(BASE_ETH_USD, { answer: 3_000_00000000n })
      fake.rounds.set(SEQUENCER, { answer: 1n, startedAt: NOW - 7200n, decimals: 0 })
      const down = yield* onBase(fake)
      const before = yield* refusals("ETH/USD", "sequencer_down")
      expect(yield* down.rate("ETH", "USD")).toBeUndefined()
      expect(yield* refusals("ETH/USD", "sequencer_down")).toBe(before + 1)

      fake.rounds.set(SEQUENCER, { answer: 0n, startedAt: NOW - 600n, decimals: 0 })
      const grace = yield* onBase(fake)
      expect(yield* grace.rate("ETH", "USD")).toBeUndefined()
      expect(grace.warnings[0]?.annotations).toMatchObject({
        reason: "sequencer_grace",
        ageSeconds: 600
      })

      fake.rounds.set(SEQUENCER, { answer: 0n, startedAt: NOW - 3601n, decimals: 0 })
      const up = yield* onBase(fake)
      expect(yield* up.rate("ETH", "USD")).toMatchObject({ numerator: 3_000n, denominator: 1n })
    })
  )

  it.scoped("leaves feeds on other networks alone", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(EUR_USD, { answer: 108_000_000n })
      fake.rounds.set(SEQUENCER, { answer: 1n, startedAt: NOW - 60n })
      const { rate } = yield* pricesWith(fake, {
        sequencerUptimeFeeds: { "eip155:8453": `eip155:8453:${SEQUENCER}` }
      })
      expect(yield* rate("EUR", "USD")).toBeDefined()
    })
  )
})

describe("ChainlinkPrices fallback to the rate table", () => {
  const rates = { "ETH/USD": { numerator: 2_900n, denominator: 1n } }

  it.scoped("is used for a refused read only when the feed says fallbackToRate, and said so", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n, ageSeconds: 2 * 3600 })
      const allowed = yield* pricesWith(fake, {
        rates,
        feeds: { "ETH/USD": { feed: `eip155:1:${ETH_USD}`, fallbackToRate: true } }
      })
      expect(yield* allowed.rate("ETH", "USD")).toEqual({
        numerator: 2_900n,
        denominator: 1n,
        readings: []
      })
      expect(yield* allowed.rate("USD", "ETH")).toEqual({
        numerator: 1n,
        denominator: 2_900n,
        readings: []
      })
      expect(String(allowed.warnings[0]?.message)).toMatch(/rate table instead \(fallbackToRate\)/)
      expect(allowed.warnings[0]?.annotations.reason).toBe("stale")

      const notAllowed = yield* pricesWith(fake, {
        rates,
        feeds: { "ETH/USD": { feed: `eip155:1:${ETH_USD}` } }
      })
      expect(yield* notAllowed.rate("ETH", "USD")).toBeUndefined()
    })
  )

  it.scoped("is not used while the feed answers", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      const { rate } = yield* pricesWith(fake, {
        rates,
        feeds: { "ETH/USD": { feed: `eip155:1:${ETH_USD}`, fallbackToRate: true } }
      })
      expect((yield* rate("ETH", "USD"))?.readings).toHaveLength(1)
    })
  )
})

describe("ChainlinkPrices reads", () => {
  it.scoped("makes one read for concurrent callers of a pair", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      const { rate } = yield* pricesWith(fake)
      const quotes = yield* Effect.all(
        Array.from({ length: 10 }, () => rate("ETH", "USD")),
        { concurrency: "unbounded" }
      )
      expect(quotes.every((q) => q?.numerator === 3_000n)).toBe(true)
      expect(fake.calls).toEqual({ decimals: 1, latestRoundData: 1 })
    })
  )

  it.scoped("finishes a read for the others when the caller that started it is given up on", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      const { rate } = yield* pricesWith(fake)
      const release = fake.hold()
      const first = yield* Effect.fork(rate("ETH", "USD"))
      while (fake.calls.latestRoundData === 0) {
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      }
      const second = yield* Effect.fork(rate("ETH", "USD"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      release()
      expect(yield* Fiber.join(second)).toMatchObject({ numerator: 3_000n })
      expect(fake.calls.latestRoundData).toBe(1)
    })
  )

  it.scoped("reads the feed again once the TTL has passed, its decimals only once", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      const { rate } = yield* pricesWith(fake)
      yield* rate("ETH", "USD")
      yield* TestClock.adjust("4999 millis")
      yield* rate("USD", "ETH")
      expect(fake.calls).toEqual({ decimals: 1, latestRoundData: 1 })
      yield* TestClock.adjust("1 millis")
      fake.rounds.set(ETH_USD, { answer: 3_100_00000000n })
      expect(yield* rate("ETH", "USD")).toMatchObject({ numerator: 3_100n })
      expect(fake.calls).toEqual({ decimals: 1, latestRoundData: 2 })
    })
  )

  it.scoped("keeps a failed read for the TTL too: a down RPC is not asked by every checkout", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      fake.rounds.set(ETH_USD, { answer: 3_000_00000000n })
      fake.setDown(true)
      const { rate } = yield* pricesWith(fake)
      expect(yield* rate("ETH", "USD")).toBeUndefined()
      fake.setDown(false)
      expect(yield* rate("ETH", "USD")).toBeUndefined()
      yield* TestClock.adjust("5 seconds")
      expect(yield* rate("ETH", "USD")).toBeDefined()
    })
  )
})

describe("ChainlinkPrices in a chain setup", () => {
  const setupWith = (fake: Fake, prices?: ChainSetup["prices"]): ChainSetup => ({
    networks: [
      {
        chainId: "eip155:1" as Caip2,
        name: "Ethereum",
        collectorKey: `0x${"5a".repeat(32)}`,
        confirmations: 1,
        etaSeconds: 15,
        transport: fake.transport,
        tokens: []
      }
    ],
    registryNetworks: [],
    registryTokens: [],
    rates: { "EUR/USD": { numerator: 110n, denominator: 100n } },
    gateway: {},
    ...(prices === undefined ? {} : { prices })
  })
  const rateOf = (setup: ChainSetup, from: string, to: string) =>
    Effect.flatMap(Prices, (prices) => prices.rate(from, to)).pipe(
      Effect.provide(chainEngineOptions(setup).prices)
    )

  it.scoped("prices from the feeds when the setup has some, else from the rate table", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW_MS)
      const fake = fakeFeeds()
      fake.rounds.set(EUR_USD, { answer: 108_000_000n })
      const live = setupWith(fake, { feeds: { "EUR/USD": { feed: `eip155:1:${EUR_USD}` } } })
      expect(yield* rateOf(live, "EUR", "USD")).toMatchObject({ numerator: 108n })
      expect(fake.calls.latestRoundData).toBe(1)
      expect(yield* rateOf(setupWith(fake), "EUR", "USD")).toEqual({
        numerator: 110n,
        denominator: 100n,
        readings: []
      })
      expect(yield* rateOf(setupWith(fake, { feeds: {} }), "EUR", "USD")).toMatchObject({
        numerator: 110n
      })
      expect(fake.calls.latestRoundData).toBe(1)
    })
  )
})

describe("ChainlinkPrices configuration", () => {
  const refusal = (config: ChainlinkPricesConfig) =>
    Effect.map(Effect.exit(makeChainlinkPrices(config)), (exit) =>
      Exit.isFailure(exit)
        ? Option.match(Cause.dieOption(exit.cause), {
            onNone: () => "no defect",
            onSome: (e) => (e as Error).message
          })
        : "built"
    )

  it.scoped("refuses a feed on a network that is not configured, naming it", () =>
    Effect.gen(function* () {
      const fake = fakeFeeds()
      expect(
        yield* refusal(configOf(fake, { feeds: { "ETH/USD": { feed: `eip155:10:${ETH_USD}` } } }))
      ).toBe(
        `prices: ETH/USD.feed eip155:10:${ETH_USD} is on eip155:10, which is not a configured network (eip155:1, eip155:8453)`
      )
      expect(
        yield* refusal(
          configOf(fake, { sequencerUptimeFeeds: { "eip155:8453": `eip155:1:${SEQUENCER}` } })
        )
      ).toBe(`sequencerUptimeFeeds.eip155:8453 eip155:1:${SEQUENCER} is not on eip155:8453`)
    })
  )

  it.scoped(
    "refuses a bad pair, a bad number of seconds and a fallback the table cannot give",
    () =>
      Effect.gen(function* () {
        const fake = fakeFeeds()
        const feed = `eip155:1:${ETH_USD}`
        expect(yield* refusal(configOf(fake, { feeds: { ETHUSD: { feed } } }))).toMatch(
          /ETHUSD must be BASE\/QUOTE/
        )
        expect(
          yield* refusal(configOf(fake, { feeds: { "ETH/USD": { feed, maxAgeSeconds: 1.5 } } }))
        ).toMatch(/ETH\/USD\.maxAgeSeconds must be a positive whole number of seconds/)
        expect(
          yield* refusal(configOf(fake, { feeds: { "ETH/USD": { feed, fallbackToRate: true } } }))
        ).toMatch(/ETH\/USD\.fallbackToRate needs the rate table to have ETH\/USD/)
      })
  )
})
