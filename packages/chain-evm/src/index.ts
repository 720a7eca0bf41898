/**
 * @pay/chain-evm: the viem adapter of @pay/core's `Chain` port, for any EVM
 * network over HTTP RPC or the in-process sandbox chain, and the engine
 * options a network setup stands for.
 */
export {
  aggregatorV3Abi,
  type ChainlinkPricesConfig,
  chainlinkPricesLayer,
  DEFAULT_PRICE_CACHE_TTL_MS,
  defaultHeartbeatSeconds,
  defaultMaxAgeSeconds,
  makeChainlinkPrices,
  type PriceFeedConfig,
  type PriceFeedSettings,
  priceRefusals,
  type RefusalReason,
  SEQUENCER_GRACE_SECONDS
} from "./ChainlinkPrices.js"
export * from "./ChainSetup.js"
export * from "./EvmChain.js"
