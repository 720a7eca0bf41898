/**
 * @pay/sandbox-chain: an in-process local EVM (Hardhat's EDR, chain id 31337,
 * automine) with a test EIP-3009 USDC at a fixed address, a faucet and the
 * collector key, as a scoped Effect resource; for the sandbox and for tests.
 */
export * from "./ChainServer.js"
export * from "./JsonRpc.js"
export * from "./Keys.js"
export * from "./SandboxChain.js"
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
export { TestUSDC } from "./TestUSDC.artifact.js"
