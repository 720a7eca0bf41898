/**
 * The engine in memory, for a platform's own tests: `createTestEngine`, a
 * scripted buyer and chain, a clock the test moves, webhooks captured.
 */
export { MemoryStorage, makeMemoryStorage } from "./MemoryStorage.js"
export {
  ASSET,
  CHAIN_ID,
  type ChainMethod,
  COLLECTOR,
  type FakeTx,
  type MinedTx,
  ScriptedChain,
  type ScriptedChainOptions,
  TOKEN,
  type TxCall
} from "./ScriptedChain.js"
