/**
 * A network setup in plain values (the standalone server reads one from
 * `PAY_CONFIG`; the sandbox makes one) and the engine options it stands for:
 * the EVM chain, the tokens and networks wallets are shown, the prices (live
 * feeds when configured, else the rate table) and the gateway's settings.
 */

import {
  Chain,
  defaultNetworks,
  defaultTokens,
  type FeeSchedule,
  type NetworkInfo,
  type PaymentEngineSettings,
  Prices,
  type RateTable,
  type TokenInfo,
  TokenRegistry
} from "@pay/core"
import { Layer } from "effect"
import { chainlinkPricesLayer, type PriceFeedSettings } from "./ChainlinkPrices.js"
import { type EvmNetworkConfig, makeEvmChain } from "./EvmChain.js"

export interface ChainSetup {
  /** The networks payments are taken on, each with its RPC, collecting key and tokens. */
  readonly networks: ReadonlyArray<EvmNetworkConfig>
  /** Networks and tokens wallets are shown, beside the well-known ones. */
  readonly registryNetworks: ReadonlyArray<NetworkInfo>
  readonly registryTokens: ReadonlyArray<TokenInfo>
  readonly rates: RateTable
  /**
   * Live prices from Chainlink-style feeds, read through `networks`; the
   * rates then price only the pairs without a feed and the feeds that fall
   * back to them. None (or no feeds): the rate table alone.
   */
  readonly prices?: PriceFeedSettings
  readonly gateway: NonNullable<PaymentEngineSettings["gateway"]>
  readonly fees?: FeeSchedule
  readonly chainWork?: NonNullable<PaymentEngineSettings["chainWork"]>
}

/** The engine options a setup stands for, to spread into `createPaymentEngine`'s. */
export const chainEngineOptions = (setup: ChainSetup) => ({
  chain: Layer.effect(Chain, makeEvmChain(setup.networks)),
  tokens: TokenRegistry.layer(
    [...defaultNetworks, ...setup.registryNetworks],
    [...defaultTokens, ...setup.registryTokens]
  ),
  prices:
    setup.prices === undefined || Object.keys(setup.prices.feeds).length === 0
      ? Prices.fromTable(setup.rates)
      : chainlinkPricesLayer({ ...setup.prices, networks: setup.networks, rates: setup.rates }),
  gateway: setup.gateway,
  ...(setup.fees === undefined ? {} : { fees: setup.fees }),
  ...(setup.chainWork === undefined ? {} : { chainWork: setup.chainWork })
})
