import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeEvmChain } from "@pay/chain-evm"
import { livemodeOf, NATIVE_COIN_ADDRESS } from "@pay/core"
import { Effect, Either } from "effect"
import type { Hex } from "viem"
import { privateKeyToAddress } from "viem/accounts"
import { afterAll, describe, expect, it } from "vitest"
import { readPayConfig } from "./payConfig.js"

const dir = mkdtempSync(join(tmpdir(), "pay-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const network = (chainId: string, extra: Record<string, unknown> = {}) => ({
  chainId,
  name: chainId,
  rpcUrl: "https://rpc.example",
  collectorKey: `0x${"5a".repeat(32)}`,
  tokens: [
    {
      asset: `${chainId}/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      priceCurrency: "USD"
    }
  ],
  ...extra
})

let n = 0
const read = (networks: ReadonlyArray<unknown>) => {
  const path = join(dir, `pay-config-${n++}.json`)
  writeFileSync(path, JSON.stringify({ networks }))
  return { path, result: readPayConfig(path, {}) }
}

/** The engine's mode with the file's networks. */
const modeOf = (networks: ReadonlyArray<unknown>) => {
  const { result } = read(networks)
  const setup = Either.getOrThrow(result)
  return livemodeOf(Effect.runSync(makeEvmChain(setup.networks)).networks)
}

describe("PAY_CONFIG networks' testnet", () => {
  it("is false when absent, and as given when a boolean", () => {
    const { result } = read([
      network("eip155:8453"),
      network("eip155:84532", { testnet: true }),
      network("eip155:1", { testnet: false })
    ])
    expect(Either.getOrThrow(result).networks.map((n) => n.testnet)).toEqual([false, true, false])
  })

  it("makes the engine live unless every network is a testnet", () => {
    expect(modeOf([network("eip155:8453")])).toBe(true)
    expect(modeOf([network("eip155:84532", { testnet: true })])).toBe(false)
    expect(
      modeOf([
        network("eip155:84532", { testnet: true }),
        network("eip155:11155111", { testnet: true })
      ])
    ).toBe(false)
    expect(
      modeOf([
        network("eip155:84532", { testnet: true }),
        network("eip155:8453", { testnet: false })
      ])
    ).toBe(true)
    expect(modeOf([network("eip155:84532", { testnet: true }), network("eip155:8453")])).toBe(true)
  })

  it("refuses anything but true or false, naming the network, in one line", () => {
    for (const wrong of ["true", "yes", 1, 0, null, {}, []]) {
      const { path, result } = read([
        network("eip155:8453"),
        network("eip155:84532", { testnet: wrong })
      ])
      expect(result, JSON.stringify(wrong)).toEqual(
        Either.left(
          `PAY_CONFIG ${path}: networks[1].testnet must be true or false (a JSON boolean, not a string or a number)`
        )
      )
    }
  })
})

describe("PAY_CONFIG jobs", () => {
  const readJobs = (jobs: unknown) => {
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(path, JSON.stringify({ networks: [network("eip155:8453")], jobs }))
    return { path, result: readPayConfig(path, {}) }
  }

  it("gives the chain work its back-off cap and stuck bounds, in the engine's units", () => {
    const { result } = readJobs({
      pollMs: 200,
      leaseSeconds: 20,
      concurrency: 8,
      backoffCapSeconds: 90,
      stuckAfterSeconds: 1_200,
      stuckAfterFailures: 12
    })
    expect(Either.getOrThrow(result).chainWork).toEqual({
      pollMs: 200,
      leaseMs: 20_000,
      concurrency: 8,
      backoffCapMs: 90_000,
      stuckAfterMs: 1_200_000,
      stuckAfterFailures: 12
    })
    // Left out, the engine's defaults apply (chainwork/ChainWorkConfig.ts).
    expect(Either.getOrThrow(readJobs({ pollMs: 200 }).result).chainWork).toEqual({ pollMs: 200 })
  })

  it("refuses bounds out of range, naming them", () => {
    for (const [field, value] of [
      ["backoffCapSeconds", 0],
      ["backoffCapSeconds", 3_601],
      ["stuckAfterSeconds", 0],
      ["stuckAfterFailures", 0],
      ["stuckAfterFailures", 1.5]
    ] as const) {
      const { result } = readJobs({ [field]: value })
      expect(Either.isLeft(result), `${field}: ${value}`).toBe(true)
      expect(Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)).toMatch(
        new RegExp(`jobs\\.${field}`)
      )
    }
  })

  it("says a refused field in the file's unit with the engine's range, and a second of a field in seconds is whole", () => {
    const cases = [
      [{ leaseSeconds: 0 }, "jobs.leaseSeconds must be a whole number of seconds from 1 to 600"],
      [{ leaseSeconds: 1.5 }, "jobs.leaseSeconds must be a whole number of seconds from 1 to 600"],
      [{ pollMs: 5 }, "jobs.pollMs must be a whole number of milliseconds from 10 to 60000"],
      [
        { stuckAfterSeconds: 604_801 },
        "jobs.stuckAfterSeconds must be a whole number of seconds from 1 to 604800"
      ]
    ] as const
    for (const [jobs, says] of cases) {
      const { path, result } = readJobs(jobs)
      expect(Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)).toBe(
        `PAY_CONFIG ${path}: ${says}`
      )
    }
  })
})

describe("PAY_CONFIG quoteLockSeconds", () => {
  it("is left to the engine's default when the file has none, and given in milliseconds when it has", () => {
    const { result } = read([network("eip155:8453")])
    expect(Either.getOrThrow(result).gateway).toEqual({})
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(
      path,
      JSON.stringify({ networks: [network("eip155:8453")], quoteLockSeconds: 45 })
    )
    expect(Either.getOrThrow(readPayConfig(path, {})).gateway).toEqual({ quoteLockMs: 45_000 })
  })
})

describe("PAY_CONFIG networks' deployer", () => {
  const deployerKey = `0x${"6b".repeat(32)}`
  const readWith = (extra: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(path, JSON.stringify({ networks: [network("eip155:8453", extra)] }))
    return { path, result: readPayConfig(path, env) }
  }
  const refusal = (result: Either.Either<unknown, string>) =>
    Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)

  it("is none by default: the network deploys no accounts", () => {
    const { result } = readWith({})
    const [config] = Either.getOrThrow(result).networks
    expect(config?.deployerKey).toBeUndefined()
    expect(config?.deploymentGasCap).toBeUndefined()
    expect(
      Effect.runSync(makeEvmChain(Either.getOrThrow(result).networks)).networks[0]?.deployer
    ).toBeUndefined()
  })

  it("is the key given, or the one its variable holds, with the gas cap as a number or a decimal string", () => {
    const inline = Either.getOrThrow(readWith({ deployerKey, deploymentGasCap: 400_000 }).result)
    expect(inline.networks[0]).toMatchObject({ deployerKey, deploymentGasCap: 400_000n })
    const chain = Effect.runSync(makeEvmChain(inline.networks))
    expect(chain.networks[0]?.deployer).toBe(privateKeyToAddress(deployerKey as Hex))
    expect(chain.networks[0]?.deploymentGasCap).toBe(400_000n)

    const named = readWith(
      { deployerKeyEnv: "PAY_BASE_DEPLOYER_KEY", deploymentGasCap: "600000" },
      { PAY_BASE_DEPLOYER_KEY: deployerKey }
    )
    expect(Either.getOrThrow(named.result).networks[0]).toMatchObject({
      deployerKey,
      deploymentGasCap: 600_000n
    })
  })

  it("refuses the collecting key as the deployer's, in any case", () => {
    const same = `0x${"5A".repeat(32)}`
    const { result } = readWith({ deployerKey: same })
    expect(refusal(result)).toBe(
      "PAY_CONFIG: networks.0: the deployer key must not be the collecting key (the deployer sends calls buyers choose: give it a key of its own, holding gas money only)"
    )
  })

  it("refuses a variable that is not set or holds no key, and a cap without a key", () => {
    expect(refusal(readWith({ deployerKeyEnv: "PAY_NOPE" }).result)).toBe(
      "PAY_CONFIG: networks.0.deployerKeyEnv names PAY_NOPE, which is not set"
    )
    expect(refusal(readWith({ deployerKeyEnv: "PAY_BAD" }, { PAY_BAD: "0x1234" }).result)).toMatch(
      /deployerKeyEnv must name a variable that holds 0x and 64 hex digits/
    )
    expect(refusal(readWith({ deploymentGasCap: 500_000 }).result)).toMatch(
      /networks\.0\.deploymentGasCap is given without deployerKey or deployerKeyEnv/
    )
    expect(refusal(readWith({ deployerKey: "0x12" }).result)).toMatch(
      /networks\[0\]\.deployerKey must be 0x and 64 hex digits/
    )
  })

  it("refuses a gas cap that is not a positive whole number, in one message", () => {
    for (const wrong of [
      0,
      -1,
      1.5,
      2 ** 60,
      "0",
      "-5",
      "1e6",
      "500,000",
      " 500000",
      "",
      true,
      null
    ]) {
      const { path, result } = readWith({ deployerKey, deploymentGasCap: wrong })
      expect(refusal(result), JSON.stringify(wrong)).toBe(
        `PAY_CONFIG ${path}: networks[0].deploymentGasCap must be a positive whole number of gas, a number or a decimal string (e.g. 500000)`
      )
    }
  })
})

describe("PAY_CONFIG prices", () => {
  const ETH_USD = "eip155:1:0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419"
  const SEQUENCER = "eip155:8453:0xBCF85224fc0756B9Fa45aA7892530B47e10b6433"
  const readPrices = (
    prices: unknown,
    { rates = {}, base = {} }: { rates?: unknown; base?: Record<string, unknown> } = {}
  ) => {
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(
      path,
      JSON.stringify({
        networks: [network("eip155:1"), network("eip155:8453", base)],
        rates,
        ...(prices === undefined ? {} : { prices })
      })
    )
    return { path, result: readPayConfig(path, {}) }
  }
  const refusal = (result: Either.Either<unknown, string>) =>
    Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)

  it("gives the setup its feeds, pairs in capitals, and each network's sequencer feed", () => {
    const { result } = readPrices(
      {
        "eth/usd": { feed: ETH_USD, maxAgeSeconds: 3600 },
        "EUR/USD": {
          feed: "eip155:8453:0xc91D87E81faB8f93699ECf7Ee9B44D11e1D53F0F",
          heartbeatSeconds: 86_400,
          fallbackToRate: true
        }
      },
      { rates: { "USD/EUR": "0.92" }, base: { sequencerUptimeFeed: SEQUENCER } }
    )
    expect(Either.getOrThrow(result).prices).toEqual({
      feeds: {
        "ETH/USD": { feed: ETH_USD, maxAgeSeconds: 3600 },
        "EUR/USD": {
          feed: "eip155:8453:0xc91D87E81faB8f93699ECf7Ee9B44D11e1D53F0F",
          heartbeatSeconds: 86_400,
          fallbackToRate: true
        }
      },
      sequencerUptimeFeeds: { "eip155:8453": SEQUENCER }
    })
  })

  it("has none without a prices section: the rate table prices alone", () => {
    expect(Either.getOrThrow(readPrices(undefined).result).prices).toBeUndefined()
  })

  it("refuses a pair that is not BASE/QUOTE, naming it", () => {
    for (const wrong of ["ETHUSD", "ETH/USD/EUR", "ETH-X/USD", "/USD"]) {
      expect(refusal(readPrices({ [wrong]: { feed: ETH_USD } }).result)).toBe(
        `PAY_CONFIG: prices.${wrong} must be BASE/QUOTE (letters and digits, 1 to 16 each)`
      )
    }
    expect(refusal(readPrices({ "ETH/eth": { feed: ETH_USD } }).result)).toBe(
      "PAY_CONFIG: prices.ETH/eth must be two different currencies"
    )
    expect(
      refusal(readPrices({ "ETH/USD": { feed: ETH_USD }, "eth/usd": { feed: ETH_USD } }).result)
    ).toBe("PAY_CONFIG: prices.eth/usd: ETH/USD is given twice")
  })

  it("refuses a feed that is not a CAIP-10 account, or not on a network of the file", () => {
    const { path, result } = readPrices({
      "ETH/USD": { feed: "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419" }
    })
    expect(refusal(result)).toBe(
      `PAY_CONFIG ${path}: prices.ETH/USD.feed must be a CAIP-10 account id like eip155:8453:0xabc…`
    )
    expect(refusal(readPrices({ "ETH/USD": { feed: "eip155:1:0x1234" } }).result)).toMatch(
      /prices\.ETH\/USD\.feed 0x1234 is not a valid EVM address/
    )
    expect(
      refusal(
        readPrices({ "ETH/USD": { feed: "eip155:10:0x13e3Ee699D1909E989722E753853AE30b17e08c5" } })
          .result
      )
    ).toBe(
      "PAY_CONFIG: prices.ETH/USD.feed is on eip155:10, which is not a network of the file (eip155:1, eip155:8453)"
    )
    const missing = readPrices({ "ETH/USD": { maxAgeSeconds: 60 } })
    expect(refusal(missing.result)).toBe(
      `PAY_CONFIG ${missing.path}: prices.ETH/USD.feed is missing`
    )
  })

  it("refuses seconds that are not positive whole numbers, naming the field", () => {
    for (const field of ["maxAgeSeconds", "heartbeatSeconds"]) {
      for (const wrong of [0, -60, 1.5, "3600", null]) {
        const { path, result } = readPrices({ "ETH/USD": { feed: ETH_USD, [field]: wrong } })
        expect(refusal(result), `${field}: ${JSON.stringify(wrong)}`).toBe(
          `PAY_CONFIG ${path}: prices.ETH/USD.${field} must be a positive whole number of seconds`
        )
      }
    }
  })

  it("refuses fallbackToRate without the pair in rates (either way round counts), or not a boolean", () => {
    expect(refusal(readPrices({ "ETH/USD": { feed: ETH_USD, fallbackToRate: true } }).result)).toBe(
      "PAY_CONFIG: prices.ETH/USD.fallbackToRate needs rates to have ETH/USD (or USD/ETH)"
    )
    const reversed = readPrices(
      { "ETH/USD": { feed: ETH_USD, fallbackToRate: true } },
      { rates: { "usd/eth": "0.0003" } }
    )
    expect(Either.getOrThrow(reversed.result).prices?.feeds["ETH/USD"]?.fallbackToRate).toBe(true)
    // Without the fallback, the pair need not be in rates.
    expect(
      Either.isRight(readPrices({ "ETH/USD": { feed: ETH_USD, fallbackToRate: false } }).result)
    ).toBe(true)
    const { path, result } = readPrices({ "ETH/USD": { feed: ETH_USD, fallbackToRate: "yes" } })
    expect(refusal(result)).toBe(
      `PAY_CONFIG ${path}: prices.ETH/USD.fallbackToRate must be true or false (a JSON boolean, not a string or a number)`
    )
  })

  it("refuses a sequencer-uptime feed that is not on the network's own chain", () => {
    expect(
      refusal(
        readPrices({ "ETH/USD": { feed: ETH_USD } }, { base: { sequencerUptimeFeed: ETH_USD } })
          .result
      )
    ).toBe(
      "PAY_CONFIG: networks.1.sequencerUptimeFeed is not on eip155:8453 (the network's own chain)"
    )
    const { path, result } = readPrices(undefined, { base: { sequencerUptimeFeed: "base" } })
    expect(refusal(result)).toBe(
      `PAY_CONFIG ${path}: networks[1].sequencerUptimeFeed must be a CAIP-10 account id like eip155:8453:0xabc…`
    )
  })
})

describe("PAY_CONFIG tokens' authorization", () => {
  const withToken = (extra: Record<string, unknown>) => {
    const n = network("eip155:1")
    return read([{ ...n, tokens: [{ ...n.tokens[0], ...extra }] }])
  }

  it("is EIP-3009 unless the token says Permit2, and the network's tokens carry it", () => {
    const tokensOf = (result: ReturnType<typeof read>["result"]) =>
      Effect.runSync(makeEvmChain(Either.getOrThrow(result).networks)).networks[0]!.tokens
    expect(tokensOf(withToken({}).result)[0]!.authorization).toBe("eip3009")
    expect(tokensOf(withToken({ authorization: "permit2" }).result)[0]!.authorization).toBe(
      "permit2"
    )
  })

  it("refuses any other, naming the field and what it may be", () => {
    const { result } = withToken({ authorization: "permit" })
    expect(Either.isLeft(result) && result.left).toMatch(
      /networks\[0\]\.tokens\[0\]\.authorization must be one of "eip3009", "permit2", "native"/
    )
  })
})

describe("PAY_CONFIG native coins", () => {
  const ether = (chainId: string, extra: Record<string, unknown> = {}) => ({
    asset: `${chainId}/slip44:60`,
    symbol: "ETH",
    name: "Ether",
    decimals: 18,
    priceCurrency: "ETH",
    authorization: "native",
    ...extra
  })
  const withTokens = (chainId: string, ...tokens: ReadonlyArray<Record<string, unknown>>) => {
    const n = network(chainId)
    return read([{ ...n, tokens: [n.tokens[0], ...tokens] }]).result
  }
  const refusal = (result: ReturnType<typeof withTokens>) =>
    Either.isLeft(result) ? result.left : "(accepted)"

  it("takes the network's coin by its slip44 coin type, as given, named by EIP-7528's address", () => {
    const setup = Either.getOrThrow(
      withTokens("eip155:8453", ether("eip155:8453", { iconUrl: null }))
    )
    expect(setup.networks[0]?.tokens[1]).toEqual({
      asset: "eip155:8453/slip44:60",
      symbol: "ETH",
      name: "Ether",
      decimals: 18,
      iconUrl: null,
      priceCurrency: "ETH",
      authorization: "native"
    })
    expect(setup.registryTokens.map((t) => t.asset)).toContain("eip155:8453/slip44:60")
    const tokens = Effect.runSync(makeEvmChain(setup.networks)).networks[0]!.tokens
    expect(tokens[1]).toMatchObject({
      asset: "eip155:8453/slip44:60",
      address: NATIVE_COIN_ADDRESS,
      authorization: "native",
      decimals: 18
    })
    // Polygon's POL and BNB Chain's BNB have coin types of their own.
    const polygon = withTokens(
      "eip155:137",
      ether("eip155:137", { asset: "eip155:137/slip44:966", symbol: "POL", priceCurrency: "POL" })
    )
    expect(Either.isRight(polygon)).toBe(true)
  })

  it("refuses an ERC-20 asset paid natively, naming the field and how a coin is named", () => {
    const result = withTokens(
      "eip155:8453",
      ether("eip155:8453", {
        asset: "eip155:8453/erc20:0x4200000000000000000000000000000000000006"
      })
    )
    expect(refusal(result)).toBe(
      'PAY_CONFIG: networks.0.tokens.1.asset: a native coin (authorization "native") is named eip155:8453/slip44:<coin type> (ETH: eip155:8453/slip44:60), not eip155:8453/erc20:0x4200000000000000000000000000000000000006'
    )
  })

  it("refuses a coin paid by EIP-3009 (the default) or Permit2, naming the field and what to give", () => {
    for (const authorization of ["eip3009", "permit2", undefined]) {
      const token = ether("eip155:8453", { authorization })
      if (authorization === undefined) delete (token as { authorization?: unknown }).authorization
      expect(refusal(withTokens("eip155:8453", token))).toBe(
        `PAY_CONFIG: networks.0.tokens.1.authorization: eip155:8453/slip44:60 is the network's native coin: give "authorization": "native" ("${authorization ?? "eip3009"}" is for ERC-20 tokens)`
      )
    }
  })

  it("refuses a coin of another chain, another kind of asset, and a second coin on one network", () => {
    expect(refusal(withTokens("eip155:8453", ether("eip155:1")))).toBe(
      "PAY_CONFIG: networks.0.tokens.1.asset is not on eip155:8453"
    )
    expect(
      refusal(
        withTokens(
          "eip155:8453",
          ether("eip155:8453", {
            asset: "eip155:8453/erc721:0x4200000000000000000000000000000000000006",
            authorization: "permit2"
          })
        )
      )
    ).toMatch(/^PAY_CONFIG: networks\.0\.tokens\.1\.asset: authorization "permit2" takes an ERC-20/)
    expect(
      refusal(
        withTokens(
          "eip155:8453",
          ether("eip155:8453"),
          ether("eip155:8453", { asset: "eip155:8453/slip44:966", symbol: "POL" })
        )
      )
    ).toBe(
      "PAY_CONFIG: networks.0.tokens.2: a network has one native coin, and networks.0.tokens.1 is it already"
    )
  })
})
