/**
 * Whether the engine can be paid in a settlement's asset: only a token of a network the chain
 * port runs (`Chain.networks`) is ever offered to a wallet. A settlement in any other asset is
 * kept (the network may be added later) but pays nothing until then. The settlement routes warn
 * about it (SettlementWarnings.ts) and the gateway says so when it offers nothing
 * (gateway/NoOptions.ts); both name assets as people read them ("USDC on Base").
 */
import { type ChainNetwork, networkOf, tokenOf } from "../chain/Chain.js"
import { type Caip2, type Caip19, chainOfCaip19 } from "../shared/Caip.js"
import type { TokenRegistryShape } from "../shared/TokenRegistry.js"

/** An asset as people name it: its symbol and its network's name, from the chain or the registry. */
export interface AssetName {
  readonly asset: Caip19
  readonly chainId: Caip2
  /** Null for a token neither the networks nor the registry know. */
  readonly symbol: string | null
  /** The network's name, or its CAIP-2 id when nothing names it. */
  readonly network: string
}

export const assetName = (
  networks: ReadonlyArray<ChainNetwork>,
  registry: TokenRegistryShape,
  asset: Caip19
): AssetName => {
  const chainId = chainOfCaip19(asset)
  const known = tokenOf(networks, asset)
  return {
    asset,
    chainId,
    symbol: known?.token.symbol ?? registry.token(asset)?.symbol ?? null,
    network: networkOf(networks, chainId)?.name ?? registry.network(chainId)?.name ?? chainId
  }
}

/**
 * `payable`: a token of a network the engine runs. `network_not_run`: its chain is not one of
 * them. `token_not_run`: the chain is, but the token is not among that network's.
 */
export type Payability = "payable" | "network_not_run" | "token_not_run"

export const payabilityOf = (networks: ReadonlyArray<ChainNetwork>, asset: Caip19): Payability =>
  tokenOf(networks, asset) !== undefined
    ? "payable"
    : networkOf(networks, chainOfCaip19(asset)) === undefined
      ? "network_not_run"
      : "token_not_run"

/** How a language joins an asset to its network: `{token}` and `{network}` are replaced. */
export type AssetPhrase = string

/** "USDC on Base" (with `"{token} on {network}"`); the CAIP-19 id of a token nothing names. */
export const assetText = (name: AssetName, phrase: AssetPhrase = "{token} on {network}"): string =>
  name.symbol === null
    ? name.asset
    : phrase.replace("{token}", name.symbol).replace("{network}", name.network)

/** Items joined as a language lists them: "A, B and C" (`conjunction`) or "A, B or C". */
export const listText = (
  items: ReadonlyArray<string>,
  language: string,
  type: "conjunction" | "disjunction"
): string => new Intl.ListFormat(language, { style: "long", type }).format(items)
