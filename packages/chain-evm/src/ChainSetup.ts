/**
 * A network setup in plain values (the standalone server reads one from
 * `PAY_CONFIG`; the sandbox makes one) and the engine options it stands for:
 * the EVM chain, the tokens and networks wallets are shown, the rates and the
 * gateway's settings.
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
import { type EvmNetworkConfig, makeEvmChain } from "./EvmChain.js"

export interface ChainSetup {
  /** The networks payments are taken on, each with its RPC, collecting key and tokens. */
  readonly networks: ReadonlyArray<EvmNetworkConfig>
  /** Networks and tokens wallets are shown, beside the well-known ones. */
  readonly registryNetworks: ReadonlyArray<NetworkInfo>
  readonly registryTokens: ReadonlyArray<TokenInfo>
  readonly rates: RateTable
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
  prices: Prices.fromTable(setup.rates),
  gateway: setup.gateway,
  ...(setup.fees === undefined ? {} : { fees: setup.fees }),
  ...(setup.chainWork === undefined ? {} : { chainWork: setup.chainWork })
})
