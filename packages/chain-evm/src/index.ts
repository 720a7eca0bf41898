/**
 * @pay/chain-evm: the viem adapter of @pay/core's `Chain` port, for any EVM
 * network over HTTP RPC or the in-process sandbox chain, and the engine
 * options a network setup stands for.
 */
export * from "./ChainSetup.js"
export * from "./EvmChain.js"
