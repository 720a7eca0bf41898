import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import { getAddress } from "viem"
import { type Caip2, type Caip19, parseCaip19 } from "./Caip.js"
import {
  defaultNetworks,
  defaultTokenRegistry,
  defaultTokens,
  makeTokenRegistry,
  NetworkConfig,
  networkOfToken,
  TokenConfig,
  type TokenInfo,
  TokenRegistry
} from "./TokenRegistry.js"

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const USDT_ETHEREUM = "eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7" as Caip19

const registry = makeTokenRegistry(defaultNetworks, defaultTokens)

const issues = (schema: Schema.Schema.AnyNoContext, input: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(input, { errors: "all" }), {
    onLeft: (error) =>
      ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({
        path: i.path.join("."),
        message: i.message
      })),
    onRight: (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    }
  })

describe("default tokens", () => {
  it.each(defaultTokens.map((t) => [t.symbol, t.asset] as const))(
    "%s %s is a canonical, checksummed CAIP-19 id",
    (_, asset) => {
      const address = asset.slice(asset.lastIndexOf(":") + 1)
      expect(getAddress(address)).toBe(address)
      expect(Either.map(parseCaip19(asset), (p) => p.value)).toEqual(Either.right(asset))
    }
  )

  it("decode through the config schemas unchanged", () => {
    for (const token of defaultTokens) {
      expect(Schema.decodeUnknownSync(TokenConfig)(token)).toEqual(token)
    }
    for (const network of defaultNetworks) {
      expect(Schema.decodeUnknownSync(NetworkConfig)(network)).toEqual(network)
    }
  })

  it("are each on a default network, with the expected decimals", () => {
    for (const token of defaultTokens) {
      expect(registry.network(networkOfToken(registry, token).chainId)).toBeDefined()
      expect(token.decimals).toBe(6)
    }
    expect(registry.tokensBySymbol("USDC").map((t) => networkOfToken(registry, t).name)).toEqual([
      "Ethereum",
      "Base",
      "Optimism",
      "Arbitrum One",
      "Polygon",
      "Base Sepolia"
    ])
    expect(registry.token(USDT_ETHEREUM)?.symbol).toBe("USDT")
    expect(registry.tokensBySymbol("EURC").map((t) => t.asset)).toEqual([
      "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42"
    ])
  })

  it("name the sandbox chain", () => {
    expect(registry.network("eip155:31337" as Caip2)).toEqual({
      chainId: "eip155:31337",
      name: "Sandbox",
      iconUrl: null
    })
  })
})

describe("makeTokenRegistry", () => {
  it("looks tokens and networks up by id", () => {
    expect(registry.token(USDC_BASE)).toEqual({
      asset: USDC_BASE,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      iconUrl: null
    })
    expect(registry.network("eip155:8453" as Caip2)?.name).toBe("Base")
    expect(
      registry.token("eip155:8453/erc20:0x0000000000000000000000000000000000000001" as Caip19)
    ).toBeUndefined()
    expect(registry.network("eip155:999" as Caip2)).toBeUndefined()
    expect(registry.tokens).toHaveLength(defaultTokens.length)
  })

  it("finds tokens by symbol in any case", () => {
    expect(registry.tokensBySymbol("usdc")).toHaveLength(6)
    expect(registry.tokensBySymbol("uSdT")).toEqual([registry.token(USDT_ETHEREUM)])
    expect(registry.tokensBySymbol("DAI")).toEqual([])
    expect(registry.tokensBySymbol("")).toEqual([])
  })

  it("keeps a token whose chain it does not know, naming the chain by its id", () => {
    const token: TokenInfo = {
      asset: "eip155:7777/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19,
      symbol: "XYZ",
      name: "Example",
      decimals: 18,
      iconUrl: "https://tokens.example/xyz.png"
    }
    const r = makeTokenRegistry([], [token])
    expect(r.token(token.asset)).toEqual(token)
    expect(networkOfToken(r, token)).toEqual({
      chainId: "eip155:7777",
      name: "eip155:7777",
      iconUrl: null
    })
  })

  it("lets a later entry replace an earlier one with the same id", () => {
    const renamed: TokenInfo = { ...registry.token(USDC_BASE)!, name: "USDC on Base" }
    const r = makeTokenRegistry(
      [
        ...defaultNetworks,
        { chainId: "eip155:8453" as Caip2, name: "Base Mainnet", iconUrl: null }
      ],
      [...defaultTokens, renamed]
    )
    expect(r.token(USDC_BASE)?.name).toBe("USDC on Base")
    expect(r.network("eip155:8453" as Caip2)?.name).toBe("Base Mainnet")
    expect(r.tokens).toHaveLength(defaultTokens.length)
    expect(r.tokensBySymbol("USDC").filter((t) => t.asset === USDC_BASE)).toEqual([renamed])
  })
})

describe("TokenRegistry layers", () => {
  it.effect("defaultTokenRegistry serves the defaults", () =>
    Effect.gen(function* () {
      const r = yield* TokenRegistry
      expect(r.token(USDC_BASE)?.decimals).toBe(6)
      expect(r.tokens).toEqual(defaultTokens)
    }).pipe(Effect.provide(defaultTokenRegistry))
  )

  it.effect("TokenRegistry.layer serves what it is given", () =>
    Effect.gen(function* () {
      const r = yield* TokenRegistry
      expect(r.tokens).toEqual([])
      expect(r.network("eip155:1" as Caip2)?.name).toBe("Mainnet")
    }).pipe(
      Effect.provide(
        TokenRegistry.layer([{ chainId: "eip155:1" as Caip2, name: "Mainnet", iconUrl: null }], [])
      )
    )
  )
})

describe("config schemas", () => {
  it("canonicalise CAIP ids and default a missing icon to null", () => {
    expect(
      Schema.decodeUnknownSync(TokenConfig)({
        asset: "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
        symbol: "USDC",
        name: "USD Coin",
        decimals: 6
      })
    ).toEqual({ asset: USDC_BASE, symbol: "USDC", name: "USD Coin", decimals: 6, iconUrl: null })
    expect(
      Schema.decodeUnknownSync(NetworkConfig)({
        chainId: "eip155:8453",
        name: "Base",
        iconUrl: "https://icons.example/base.png"
      })
    ).toEqual({ chainId: "eip155:8453", name: "Base", iconUrl: "https://icons.example/base.png" })
  })

  it("name every offending field of a token", () => {
    expect(
      issues(TokenConfig, {
        asset: "eip155:8453/erc20:0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913",
        symbol: "",
        name: "x".repeat(65),
        decimals: 78,
        iconUrl: "http://insecure.example/icon.png"
      })
    ).toEqual([
      { path: "asset", message: "bad address checksum" },
      { path: "symbol", message: "must be 1 to 16 characters long" },
      { path: "name", message: "must be 1 to 64 characters long" },
      { path: "decimals", message: "must be an integer from 0 to 77" },
      { path: "iconUrl", message: "must be an https:// URL of at most 2048 characters, or null" }
    ])
    expect(
      issues(TokenConfig, { asset: USDC_BASE, symbol: "X", name: "X", decimals: 1.5 })
    ).toEqual([{ path: "decimals", message: expect.stringContaining("integer") }])
    expect(
      issues(TokenConfig, { asset: USDC_BASE, symbol: "X".repeat(17), name: "X", decimals: -1 })
    ).toEqual([
      { path: "symbol", message: "must be 1 to 16 characters long" },
      { path: "decimals", message: "must be an integer from 0 to 77" }
    ])
  })

  it("accept the decimal bounds", () => {
    for (const decimals of [0, 77]) {
      expect(
        Schema.decodeUnknownSync(TokenConfig)({
          asset: USDC_BASE,
          symbol: "X",
          name: "X",
          decimals
        }).decimals
      ).toBe(decimals)
    }
  })

  it("name every offending field of a network", () => {
    expect(issues(NetworkConfig, { chainId: "eip155:0", name: "" })).toEqual([
      {
        path: "chainId",
        message: "eip155 chain reference must be a positive decimal integer, got 0"
      },
      { path: "name", message: "must be 1 to 64 characters long" }
    ])
    expect(issues(NetworkConfig, { name: "Base" })).toEqual([
      { path: "chainId", message: "is missing" }
    ])
  })
})
