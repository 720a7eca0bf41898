/**
 * @pay/sandbox-chain: an in-process local EVM (Hardhat's EDR, chain id 31337,
 * automine) with test tokens at fixed addresses (an EIP-3009 USDC; a USDT and
 * a DAI paid through Permit2, which runs at its canonical address), two
 * Chainlink-style price feeds, a faucet and the collector key, as a scoped
 * Effect resource; for the sandbox and for tests.
 */
export * from "./ChainServer.js"
export * from "./JsonRpc.js"
export * from "./Keys.js"
export * from "./SandboxChain.js"
export { INITIAL_PRICES, PRICE_FEED_DECIMALS, type PriceFeedPair } from "./SandboxContracts.js"
export { SandboxPermit2 } from "./SandboxPermit2.artifact.js"
export { SandboxPriceFeed } from "./SandboxPriceFeed.artifact.js"
export {
  type DelegatedAccount,
  delegate7702,
  type FactoryAccount,
  type FactoryAccountOptions,
  type SafeAccount,
  type SmartAccount,
  type SmartAccountAddresses,
  safeAccount,
  type ThirdwebAccount,
  thirdwebAccount
} from "./SmartAccounts.js"
export { TestDAI } from "./TestDAI.artifact.js"
export { TestUSDC } from "./TestUSDC.artifact.js"
export { TestUSDT } from "./TestUSDT.artifact.js"
