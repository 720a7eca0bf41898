/**
 * The engine in memory, for a platform's own tests: `createTestEngine`, a
 * scripted buyer and chain, a clock the test moves, webhooks captured.
 */

export {
  type CapturedDelivery,
  CapturedWebhooks,
  type WebhookHandler
} from "./CapturedWebhooks.js"
export { ControlledClock, type DurableWork } from "./ControlledClock.js"
export {
  MemoryStorage,
  makeMemoryStorage,
  type OpenMemoryStorage,
  openMemoryStorage
} from "./MemoryStorage.js"
export { type BuyerKey, GatewayRefused, signTypedDataJson } from "./ScriptedBuyer.js"
export {
  ACCOUNT_CODE,
  ASSET,
  CHAIN_ID,
  type ChainMethod,
  COLLECTOR,
  DEPLOYER,
  DEPLOYMENT_GAS,
  type FakeTx,
  type MinedTx,
  type ScriptedAccount,
  ScriptedChain,
  type ScriptedChainOptions,
  TOKEN,
  type TxCall
} from "./ScriptedChain.js"
export {
  createTestEngine,
  type PayOptions,
  type ScriptedPayment,
  type TestEngine,
  type TestEngineOptions
} from "./TestEngine.js"
