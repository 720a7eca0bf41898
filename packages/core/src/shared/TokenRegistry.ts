/**
 * The tokens and networks the engine knows by name: where an amount's `display` gets its symbol,
 * decimals and icons, and (later) which tokens the engine accepts. Operators configure it (a JSON
 * file decoded with `NetworkConfig` / `TokenConfig`); `defaultTokenRegistry` holds well-known
 * stablecoins and the local sandbox chain.
 */
import { Context, Layer, Schema } from "effect"
import { type Caip2, Caip2Schema, type Caip19, Caip19Schema, chainOfCaip19 } from "./Caip.js"
import { boundedText, HttpsUrl } from "./Text.js"

export interface NetworkInfo {
  readonly chainId: Caip2
  readonly name: string
  readonly iconUrl: string | null
}

export interface TokenInfo {
  readonly asset: Caip19
  readonly symbol: string
  readonly name: string
  readonly decimals: number
  readonly iconUrl: string | null
}

// Optional in a config file: most operators have no icon to hand. One message for the union, or
// a bad URL would also be reported as "Expected null".
const IconUrl = Schema.optionalWith(
  Schema.NullOr(HttpsUrl).annotations({
    message: () => ({
      message: "must be an https:// URL of at most 2048 characters, or null",
      override: true
    })
  }),
  { exact: true, default: () => null }
)

export const NetworkConfig = Schema.Struct({
  chainId: Caip2Schema,
  name: boundedText(1, 64),
  iconUrl: IconUrl
}).annotations({ identifier: "NetworkConfig", title: "Network" })

// 77 digits is the most a uint256 amount can have, so more decimals could never be displayed.
export const TokenConfig = Schema.Struct({
  asset: Caip19Schema,
  symbol: boundedText(1, 16),
  name: boundedText(1, 64),
  decimals: Schema.Int.pipe(
    Schema.between(0, 77, { message: () => "must be an integer from 0 to 77" })
  ),
  iconUrl: IconUrl
}).annotations({ identifier: "TokenConfig", title: "Token" })

export interface TokenRegistryShape {
  readonly token: (asset: Caip19) => TokenInfo | undefined
  readonly network: (chain: Caip2) => NetworkInfo | undefined
  readonly tokens: ReadonlyArray<TokenInfo>
  /** Case-insensitive: partners filter by `usdc` as often as by `USDC`. */
  readonly tokensBySymbol: (symbol: string) => ReadonlyArray<TokenInfo>
}

/**
 * A later entry with the same id replaces an earlier one, so a config can override a default by
 * being appended to the defaults.
 */
export const makeTokenRegistry = (
  networks: ReadonlyArray<NetworkInfo>,
  tokens: ReadonlyArray<TokenInfo>
): TokenRegistryShape => {
  const networkById = new Map(networks.map((n) => [n.chainId, n]))
  const tokenByAsset = new Map(tokens.map((t) => [t.asset, t]))
  const all = [...tokenByAsset.values()]
  const bySymbol = new Map<string, Array<TokenInfo>>()
  for (const t of all) {
    const key = t.symbol.toLowerCase()
    bySymbol.set(key, [...(bySymbol.get(key) ?? []), t])
  }
  return {
    token: (asset) => tokenByAsset.get(asset),
    network: (chain) => networkById.get(chain),
    tokens: all,
    tokensBySymbol: (symbol) => bySymbol.get(symbol.toLowerCase()) ?? []
  }
}

/** The network a token is on; a chain missing from the config is named by its CAIP-2 id. */
export const networkOfToken = (registry: TokenRegistryShape, token: TokenInfo): NetworkInfo => {
  const chainId = chainOfCaip19(token.asset)
  return registry.network(chainId) ?? { chainId, name: chainId, iconUrl: null }
}

export class TokenRegistry extends Context.Tag("@pay/core/TokenRegistry")<
  TokenRegistry,
  TokenRegistryShape
>() {
  static readonly layer = (
    networks: ReadonlyArray<NetworkInfo>,
    tokens: ReadonlyArray<TokenInfo>
  ): Layer.Layer<TokenRegistry> => Layer.succeed(TokenRegistry, makeTokenRegistry(networks, tokens))
}

const network = (reference: number, name: string): NetworkInfo => ({
  chainId: `eip155:${reference}` as Caip2,
  name,
  iconUrl: null
})

const erc20 = (
  chain: number,
  address: string,
  symbol: string,
  name: string,
  decimals: number
): TokenInfo => ({
  asset: `eip155:${chain}/erc20:${address}` as Caip19,
  symbol,
  name,
  decimals,
  iconUrl: null
})

const usdc = (chain: number, address: string) => erc20(chain, address, "USDC", "USD Coin", 6)

export const defaultNetworks: ReadonlyArray<NetworkInfo> = [
  network(1, "Ethereum"),
  network(8453, "Base"),
  network(10, "Optimism"),
  network(42161, "Arbitrum One"),
  network(137, "Polygon"),
  network(84532, "Base Sepolia"),
  network(31337, "Sandbox")
]

// Circle's and Tether's published contract addresses; the tests check each EIP-55 checksum.
export const defaultTokens: ReadonlyArray<TokenInfo> = [
  usdc(1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
  usdc(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
  usdc(10, "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"),
  usdc(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
  usdc(137, "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
  usdc(84532, "0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
  erc20(1, "0xdAC17F958D2ee523a2206206994597C13D831ec7", "USDT", "Tether USD", 6),
  erc20(8453, "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42", "EURC", "EURC", 6)
]

export const defaultTokenRegistry: Layer.Layer<TokenRegistry> = TokenRegistry.layer(
  defaultNetworks,
  defaultTokens
)
