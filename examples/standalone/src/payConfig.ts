/**
 * `PAY_CONFIG`: the JSON file that names the networks the engine takes
 * payments on (RPC, confirmations, the collecting key, accepted tokens), the
 * rate table and the gateway's policies. Without it, the server runs the
 * sandbox chain. Every field is documented in the README.
 */
import { readFileSync } from "node:fs"
import type {
  ChainSetup,
  EvmNetworkConfig,
  PriceFeedConfig,
  PriceFeedSettings
} from "@pay/chain-evm"
import {
  AmountInput,
  Caip2Schema,
  Caip19Schema,
  ChainWorkSettings,
  chainOfCaip19,
  FeeScheduleSchema,
  GatewaySettings,
  lookup,
  parseCaip10,
  parseRate,
  type RateTable,
  TOKEN_AUTHORIZATIONS,
  type TokenAuthorization
} from "@pay/core"
import { Either, ParseResult, Schema } from "effect"
import { type Hex, http, isHex } from "viem"
import { type EngineSetting, engineWholeNumberField } from "./engineSettings.js"

const PrivateKey = Schema.String.pipe(
  Schema.filter(
    (s) => (isHex(s, { strict: true }) && s.length === 66) || "must be 0x and 64 hex digits"
  )
)

/**
 * The most gas an account's deployment may take: a whole number, as a JSON
 * number or a decimal string (a gas figure read as it is, never rounded by a
 * float). One message for all that is not, rather than one per form tried.
 */
const GAS_CAP_MESSAGE =
  "must be a positive whole number of gas, a number or a decimal string (e.g. 500000)"
const GasCap = Schema.declare(
  (v): v is number | string => typeof v === "number" || typeof v === "string",
  { message: () => GAS_CAP_MESSAGE }
).pipe(
  Schema.filter(
    (v) =>
      (typeof v === "number" ? Number.isSafeInteger(v) && v > 0 : /^[1-9][0-9]{0,29}$/.test(v)) ||
      GAS_CAP_MESSAGE
  )
)

// One message for every value refused, rather than one per literal tried.
const TokenAuthorizationField = Schema.String.pipe(
  Schema.filter(
    (s): s is TokenAuthorization => (TOKEN_AUTHORIZATIONS as ReadonlyArray<string>).includes(s),
    { message: () => `must be one of ${TOKEN_AUTHORIZATIONS.map((a) => `"${a}"`).join(", ")}` }
  )
)

const Token = Schema.Struct({
  asset: Caip19Schema,
  symbol: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(16)),
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  decimals: Schema.Int.pipe(Schema.between(0, 77)),
  iconUrl: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  priceCurrency: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(16)),
  /**
   * How buyers authorize the transfer: the token's own EIP-3009 (USDC, EURC:
   * the default), Uniswap's Permit2 for any other ERC-20 (USDT, DAI), or
   * `native` for the network's own coin (`eip155:1/slip44:60`, ETH), which
   * the buyer's wallet sends itself (`tokenAssetProblem` checks the pair).
   */
  authorization: Schema.optionalWith(TokenAuthorizationField, {
    default: () => "eip3009" as const,
    exact: true
  })
})

/** A price feed's aggregator, a CAIP-10 account (`eip155:1:0x5f4e…`). */
const FeedAccount = Schema.String.pipe(
  Schema.filter((s) => {
    const parsed = parseCaip10(s)
    return Either.isLeft(parsed)
      ? parsed.left
      : parsed.right.chain.namespace === "eip155" || "must be on an EVM (eip155) network"
  })
)

const Network = Schema.Struct({
  chainId: Caip2Schema,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  iconUrl: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  rpcUrl: Schema.String.pipe(
    Schema.filter(
      (s) => (URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)) || "must be an http(s) URL"
    )
  ),
  confirmations: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 1000)), {
    default: () => 1
  }),
  etaSeconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 3600)), {
    default: () => 15
  }),
  /** How often a transaction being watched is looked at. */
  pollIntervalMs: Schema.optionalWith(Schema.Int.pipe(Schema.between(10, 60_000)), {
    default: () => 1000
  }),
  /** A transaction pending this long is replaced at a higher fee. */
  stuckAfterSeconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 3600)), {
    default: () => 60
  }),
  /**
   * A test network (a public testnet, a local chain): its tokens are worth
   * nothing. When every network is one, the engine runs in test mode and its
   * payments say `livemode: false`. Default false: real money.
   */
  testnet: Schema.optionalWith(
    Schema.Boolean.annotations({
      message: () => "must be true or false (a JSON boolean, not a string or a number)"
    }),
    { default: () => false, exact: true }
  ),
  /** The collecting key, or the name of the environment variable holding it (preferred). */
  collectorKey: Schema.optional(PrivateKey),
  collectorKeyEnv: Schema.optional(Schema.String),
  /**
   * The key that deploys buyers' accounts not deployed yet (ERC-6492), or the
   * name of the variable holding it; not the collecting key. None: such
   * accounts cannot pay on the network.
   */
  deployerKey: Schema.optionalWith(PrivateKey, { exact: true }),
  deployerKeyEnv: Schema.optionalWith(Schema.String, { exact: true }),
  /** The most gas one such deployment may take (the engine's default: 500,000). */
  deploymentGasCap: Schema.optionalWith(GasCap, { exact: true }),
  /**
   * The L2's sequencer-uptime feed (CAIP-10 on this network): while the
   * sequencer is down, or for an hour after it is back, this network's price
   * feeds are not used.
   */
  sequencerUptimeFeed: Schema.optionalWith(FeedAccount, { exact: true }),
  tokens: Schema.Array(Token).pipe(Schema.minItems(1))
})

const Rates = Schema.Record({
  key: Schema.String.pipe(
    Schema.filter((s) => /^[A-Za-z0-9]{1,16}\/[A-Za-z0-9]{1,16}$/.test(s) || "must be BASE/QUOTE")
  ),
  value: Schema.String.pipe(
    Schema.filter((s) => Either.isRight(parseRate(s)) || "must be a positive decimal number")
  )
})

const SECONDS_MESSAGE = "must be a positive whole number of seconds"
const Seconds = Schema.Number.annotations({ message: () => SECONDS_MESSAGE }).pipe(
  Schema.filter((n) => (Number.isSafeInteger(n) && n > 0) || SECONDS_MESSAGE)
)

/**
 * Live prices: a pair to its Chainlink-style feed. The pair and the checks
 * that need the rest of the file (the feed's network, the fallback's rate)
 * are checked in `toChainSetup`: a record key the schema refuses is only
 * said to be "unexpected".
 */
const PriceFeeds = Schema.Record({
  key: Schema.String,
  value: Schema.Struct({
    feed: FeedAccount,
    maxAgeSeconds: Schema.optionalWith(Seconds, { exact: true }),
    heartbeatSeconds: Schema.optionalWith(Seconds, { exact: true }),
    fallbackToRate: Schema.optionalWith(
      Schema.Boolean.annotations({
        message: () => "must be true or false (a JSON boolean, not a string or a number)"
      }),
      { exact: true }
    )
  })
})

/**
 * The fields that are engine settings, each with its setting and unit: their
 * defaults and ranges are the engine's (engineSettings.ts). `quoteLockSeconds`
 * is one too, with a floor of its own (below).
 */
export const ENGINE_FIELDS = {
  "jobs.pollMs": { fields: ChainWorkSettings.fields, key: "pollMs", perUnit: 1 },
  "jobs.leaseSeconds": { fields: ChainWorkSettings.fields, key: "leaseMs", perUnit: 1000 },
  "jobs.concurrency": { fields: ChainWorkSettings.fields, key: "concurrency", perUnit: 1 },
  "jobs.backoffCapSeconds": {
    fields: ChainWorkSettings.fields,
    key: "backoffCapMs",
    perUnit: 1000
  },
  "jobs.stuckAfterSeconds": {
    fields: ChainWorkSettings.fields,
    key: "stuckAfterMs",
    perUnit: 1000
  },
  "jobs.stuckAfterFailures": {
    fields: ChainWorkSettings.fields,
    key: "stuckAfterFailures",
    perUnit: 1
  },
  quoteLockSeconds: { fields: GatewaySettings.fields, key: "quoteLockMs", perUnit: 1000 }
} satisfies Readonly<Record<string, EngineSetting>>

// Exact: a JSON file has no undefined, and its branch would only add "Expected undefined" to a refusal.
const job = (field: keyof typeof ENGINE_FIELDS, unit: string) =>
  Schema.optionalWith(engineWholeNumberField(ENGINE_FIELDS[field], unit), { exact: true })

export const PayConfigFile = Schema.Struct({
  networks: Schema.Array(Network).pipe(Schema.minItems(1)),
  rates: Schema.optionalWith(Rates, { default: () => ({}) }),
  prices: Schema.optionalWith(PriceFeeds, { exact: true }),
  /**
   * Left out, the engine's default applies (or PAY_QUOTE_LOCK_SECONDS). The
   * file keeps a range of its own, 10 to 3,600 whole seconds (documented so),
   * narrower than the engine's 100 ms to an hour and PAY_QUOTE_LOCK_SECONDS's
   * 1 s floor: a lock the file sets for the whole deployment must leave a
   * wallet time to pay, while the variable is the operator's override (a
   * test, a short check). The engine's decode checks it too.
   */
  quoteLockSeconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(10, 3600)), {
    exact: true
  }),
  collectData: Schema.optional(
    Schema.Struct({
      always: Schema.optional(Schema.Boolean),
      atLeast: Schema.optional(Schema.Array(AmountInput))
    })
  ),
  fees: Schema.optional(FeeScheduleSchema),
  /**
   * The durable chain work: how often idle instances look for jobs, how long a
   * claim holds. Each left out takes the engine's default; each given is
   * checked by the engine's schema, its range said in the field's unit.
   */
  jobs: Schema.optionalWith(
    Schema.Struct({
      pollMs: job("jobs.pollMs", "milliseconds"),
      leaseSeconds: job("jobs.leaseSeconds", "seconds"),
      concurrency: job("jobs.concurrency", "jobs"),
      backoffCapSeconds: job("jobs.backoffCapSeconds", "seconds"),
      stuckAfterSeconds: job("jobs.stuckAfterSeconds", "seconds"),
      stuckAfterFailures: job("jobs.stuckAfterFailures", "failures")
    }),
    { exact: true }
  )
})
export type PayConfigFile = typeof PayConfigFile.Type

/** A place in the file as a reader writes it: `networks[0].rpcUrl`. */
const placeInFile = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("")

/** What a required field holds, said when it is missing (docs/configuration.md has them all). */
const REQUIRED_FIELDS: Readonly<Record<string, string>> = {
  networks: "at least one network",
  "networks[].chainId": "the network's CAIP-2 id, e.g. eip155:8453",
  "networks[].name": "its name for wallets, 1 to 64 characters",
  "networks[].rpcUrl": "an http:// or https:// URL",
  "networks[].tokens": "at least one token",
  "networks[].tokens[].asset": "the token's CAIP-19 id, on the network's chain",
  "networks[].tokens[].symbol": "1 to 16 characters, e.g. USDC",
  "networks[].tokens[].name": "1 to 64 characters, e.g. USD Coin",
  "networks[].tokens[].decimals": "a whole number from 0 to 77",
  "networks[].tokens[].priceCurrency": "the currency its price follows, e.g. USD"
}

/**
 * What is wrong with a token's asset for its authorization, if anything: a
 * native coin is named `<chain>/slip44:<coin type>` (ETH is 60 on every EVM
 * chain, L2s included; POL 966, BNB 714), and EIP-3009 and Permit2 take an
 * ERC-20 (`<chain>/erc20:0x…`). The asset is on the network's chain already.
 */
const tokenAssetProblem = (
  t: PayConfigFile["networks"][number]["tokens"][number],
  place: string,
  chainId: string
): string | undefined => {
  const namespace = t.asset.slice(t.asset.indexOf("/") + 1, t.asset.lastIndexOf(":"))
  if (t.authorization === "native") {
    return namespace === "slip44"
      ? undefined
      : `PAY_CONFIG: ${place}.asset: a native coin (authorization "native") is named ${chainId}/slip44:<coin type> (ETH: ${chainId}/slip44:60), not ${t.asset}`
  }
  if (namespace === "slip44") {
    return `PAY_CONFIG: ${place}.authorization: ${t.asset} is the network's native coin: give "authorization": "native" ("${t.authorization}" is for ERC-20 tokens)`
  }
  return namespace === "erc20"
    ? undefined
    : `PAY_CONFIG: ${place}.asset: authorization "${t.authorization}" takes an ERC-20, ${chainId}/erc20:0x…, not ${t.asset}`
}

/** Reads and checks the file; every problem is one line naming its place in the file. */
export const readPayConfig = (
  path: string,
  env: NodeJS.ProcessEnv = process.env
): Either.Either<ChainSetup, string> => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (error) {
    return Either.left(`PAY_CONFIG: cannot read ${path} (${(error as Error).message})`)
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    return Either.left(`PAY_CONFIG: ${path} is not JSON (${(error as Error).message})`)
  }
  const decoded = Schema.decodeUnknownEither(PayConfigFile, {
    onExcessProperty: "error",
    errors: "all"
  })(raw)
  if (Either.isLeft(decoded)) {
    // Each problem as its place and what is wrong, all on one line (a start failure's one line).
    const problems = ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => {
      const place = placeInFile(issue.path)
      const allowed = REQUIRED_FIELDS[place.replace(/\[\d+\]/g, "[]")]
      const missing = issue.message === "is missing" && allowed !== undefined
      return `${place === "" ? "the file" : place} ${issue.message}${missing ? ` (${allowed})` : ""}`
    })
    return Either.left(`PAY_CONFIG ${path}: ${problems.join("; ")}`)
  }
  return toChainSetup(decoded.right, env)
}

/**
 * A network's deployer key (or none), checked beside its collecting key: a
 * named variable that holds no key, a cap without a key to spend it, and the
 * collecting key itself (the deployer sends calls the buyer chose, so it must
 * hold nothing but gas money) stop the start.
 */
const deployerKeyOf = (
  n: PayConfigFile["networks"][number],
  i: number,
  collectorKey: Hex,
  env: NodeJS.ProcessEnv
): Either.Either<Hex | undefined, string> => {
  const key = n.deployerKey ?? (n.deployerKeyEnv === undefined ? undefined : env[n.deployerKeyEnv])
  if (key === undefined) {
    if (n.deployerKeyEnv !== undefined) {
      return Either.left(
        `PAY_CONFIG: networks.${i}.deployerKeyEnv names ${n.deployerKeyEnv}, which is not set`
      )
    }
    return n.deploymentGasCap === undefined
      ? Either.right(undefined)
      : Either.left(
          `PAY_CONFIG: networks.${i}.deploymentGasCap is given without deployerKey or deployerKeyEnv: no key would spend it`
        )
  }
  if (!isHex(key, { strict: true }) || key.length !== 66) {
    return Either.left(
      `PAY_CONFIG: networks.${i}: deployerKeyEnv must name a variable that holds 0x and 64 hex digits`
    )
  }
  if (key.toLowerCase() === collectorKey.toLowerCase()) {
    return Either.left(
      `PAY_CONFIG: networks.${i}: the deployer key must not be the collecting key (the deployer sends calls buyers choose: give it a key of its own, holding gas money only)`
    )
  }
  return Either.right(key)
}

/**
 * The price feeds, checked against the rest of the file: each feed on a
 * configured network, each sequencer feed on its own network, a pair given
 * once (case does not matter), and a fallback only to a rate the table has.
 */
const pricesOf = (
  file: PayConfigFile,
  rates: RateTable
): Either.Either<PriceFeedSettings | undefined, string> => {
  const chains = file.networks.map((n) => n.chainId as string)
  const chainOf = (feed: string) => feed.slice(0, feed.lastIndexOf(":"))
  const sequencerUptimeFeeds: Record<string, string> = {}
  for (const [i, n] of file.networks.entries()) {
    if (n.sequencerUptimeFeed === undefined) continue
    if (chainOf(n.sequencerUptimeFeed) !== n.chainId) {
      return Either.left(
        `PAY_CONFIG: networks.${i}.sequencerUptimeFeed is not on ${n.chainId} (the network's own chain)`
      )
    }
    sequencerUptimeFeeds[n.chainId] = n.sequencerUptimeFeed
  }
  if (file.prices === undefined) return Either.right(undefined)
  const feeds: Record<string, PriceFeedConfig> = {}
  for (const [given, feed] of Object.entries(file.prices)) {
    const pair = given.toUpperCase()
    const [base = "", quote = ""] = pair.split("/")
    if (!/^[A-Z0-9]{1,16}\/[A-Z0-9]{1,16}$/.test(pair)) {
      return Either.left(
        `PAY_CONFIG: prices.${given} must be BASE/QUOTE (letters and digits, 1 to 16 each)`
      )
    }
    if (base === quote) {
      return Either.left(`PAY_CONFIG: prices.${given} must be two different currencies`)
    }
    if (feeds[pair] !== undefined) {
      return Either.left(`PAY_CONFIG: prices.${given}: ${pair} is given twice`)
    }
    if (!chains.includes(chainOf(feed.feed))) {
      return Either.left(
        `PAY_CONFIG: prices.${given}.feed is on ${chainOf(feed.feed)}, which is not a network of the file (${chains.join(", ")})`
      )
    }
    if (feed.fallbackToRate === true && lookup(rates, base, quote) === undefined) {
      return Either.left(
        `PAY_CONFIG: prices.${given}.fallbackToRate needs rates to have ${pair} (or ${quote}/${base})`
      )
    }
    feeds[pair] = feed
  }
  return Either.right({
    feeds,
    ...(Object.keys(sequencerUptimeFeeds).length === 0 ? {} : { sequencerUptimeFeeds })
  })
}

export const toChainSetup = (
  file: PayConfigFile,
  env: NodeJS.ProcessEnv
): Either.Either<ChainSetup, string> => {
  const networks: Array<EvmNetworkConfig> = []
  for (const [i, n] of file.networks.entries()) {
    if (!n.chainId.startsWith("eip155:")) {
      return Either.left(
        `PAY_CONFIG: networks.${i}.chainId: only EVM (eip155) networks are supported`
      )
    }
    const key =
      n.collectorKey ?? (n.collectorKeyEnv === undefined ? undefined : env[n.collectorKeyEnv])
    if (key === undefined || !isHex(key, { strict: true }) || key.length !== 66) {
      return Either.left(
        `PAY_CONFIG: networks.${i}: give collectorKey, or collectorKeyEnv naming a variable that holds 0x and 64 hex digits`
      )
    }
    const deployer = deployerKeyOf(n, i, key, env)
    if (Either.isLeft(deployer)) return Either.left(deployer.left)
    let native: number | undefined
    for (const [j, t] of n.tokens.entries()) {
      if (chainOfCaip19(t.asset) !== n.chainId) {
        return Either.left(`PAY_CONFIG: networks.${i}.tokens.${j}.asset is not on ${n.chainId}`)
      }
      const problem = tokenAssetProblem(t, `networks.${i}.tokens.${j}`, n.chainId)
      if (problem !== undefined) return Either.left(problem)
      if (t.authorization === "native") {
        if (native !== undefined) {
          return Either.left(
            `PAY_CONFIG: networks.${i}.tokens.${j}: a network has one native coin, and networks.${i}.tokens.${native} is it already`
          )
        }
        native = j
      }
    }
    networks.push({
      chainId: n.chainId,
      name: n.name,
      iconUrl: n.iconUrl,
      collectorKey: key,
      confirmations: n.confirmations,
      etaSeconds: n.etaSeconds,
      pollingIntervalMs: n.pollIntervalMs,
      stuckAfterMs: n.stuckAfterSeconds * 1000,
      transport: http(n.rpcUrl, { retryCount: 0, timeout: 10_000 }),
      tokens: n.tokens,
      testnet: n.testnet,
      ...(deployer.right === undefined ? {} : { deployerKey: deployer.right }),
      ...(n.deploymentGasCap === undefined ? {} : { deploymentGasCap: BigInt(n.deploymentGasCap) })
    })
  }
  const rates: Record<
    string,
    ReturnType<typeof parseRate> extends Either.Either<infer R, string> ? R : never
  > = {}
  for (const [pair, value] of Object.entries(file.rates)) {
    rates[pair.toUpperCase()] = Either.getOrThrow(parseRate(value))
  }
  const prices = pricesOf(file, rates)
  if (Either.isLeft(prices)) return Either.left(prices.left)
  return Either.right({
    networks,
    registryNetworks: file.networks.map((n) => ({
      chainId: n.chainId,
      name: n.name,
      iconUrl: n.iconUrl
    })),
    registryTokens: file.networks.flatMap((n) => n.tokens),
    rates,
    ...(prices.right === undefined ? {} : { prices: prices.right }),
    ...(file.fees === undefined ? {} : { fees: file.fees }),
    ...(file.jobs === undefined
      ? {}
      : {
          chainWork: {
            ...(file.jobs.pollMs === undefined ? {} : { pollMs: file.jobs.pollMs }),
            ...(file.jobs.leaseSeconds === undefined
              ? {}
              : { leaseMs: file.jobs.leaseSeconds * 1000 }),
            ...(file.jobs.concurrency === undefined ? {} : { concurrency: file.jobs.concurrency }),
            ...(file.jobs.backoffCapSeconds === undefined
              ? {}
              : { backoffCapMs: file.jobs.backoffCapSeconds * 1000 }),
            ...(file.jobs.stuckAfterSeconds === undefined
              ? {}
              : { stuckAfterMs: file.jobs.stuckAfterSeconds * 1000 }),
            ...(file.jobs.stuckAfterFailures === undefined
              ? {}
              : { stuckAfterFailures: file.jobs.stuckAfterFailures })
          }
        }),
    gateway: {
      ...(file.quoteLockSeconds === undefined ? {} : { quoteLockMs: file.quoteLockSeconds * 1000 }),
      ...(file.collectData === undefined
        ? {}
        : {
            collectData: {
              ...(file.collectData.always === undefined ? {} : { always: file.collectData.always }),
              ...(file.collectData.atLeast === undefined
                ? {}
                : { atLeast: file.collectData.atLeast })
            }
          })
    }
  })
}
