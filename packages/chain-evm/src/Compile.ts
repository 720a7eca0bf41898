/**
 * Compiles contracts/ReceiveSimulator.sol with solc-js (offline: the compiler
 * ships inside the `solc` package). Used by `npm run compile -w
 * @pay/chain-evm`, which writes the committed artifact, and by the test that
 * checks the artifact still matches the source: nothing compiles at install
 * or run time.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Abi, Hex } from "viem"

const require = createRequire(import.meta.url)

export const CONTRACT_NAME = "ReceiveSimulator"
export const SOURCE_NAME = "contracts/ReceiveSimulator.sol"

/**
 * Paris (no PUSH0, no MCOPY): the code runs in an `eth_call` on whatever
 * network is configured, so it asks the least of the node's EVM.
 */
export const SETTINGS = {
  evmVersion: "paris",
  optimizer: { enabled: true, runs: 200 }
} as const

export interface CompiledSimulator {
  readonly contractName: string
  readonly sourceName: string
  readonly solcVersion: string
  readonly settings: typeof SETTINGS
  readonly abi: Abi
  /** The runtime code: a state override puts it at an address, no constructor runs. */
  readonly deployedBytecode: Hex
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { deployedBytecode: { object: string } } }>
  >
}

interface Solc {
  version(): string
  compile(input: string): string
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..")

/** Compiles the contract; throws with solc's messages on any compile error. */
export const compileReceiveSimulator = (): CompiledSimulator => {
  const solc = require("solc") as Solc
  const input = {
    language: "Solidity",
    sources: { [SOURCE_NAME]: { content: readFileSync(join(packageRoot, SOURCE_NAME), "utf8") } },
    settings: {
      ...SETTINGS,
      // No metadata hash: the code's bytes then depend on the source's code, not its comments.
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: {
        [SOURCE_NAME]: { [CONTRACT_NAME]: ["abi", "evm.deployedBytecode.object"] }
      }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`)
  }
  const contract = output.contracts?.[SOURCE_NAME]?.[CONTRACT_NAME]
  if (contract === undefined) throw new Error(`solc produced no ${CONTRACT_NAME}`)
  return {
    contractName: CONTRACT_NAME,
    sourceName: SOURCE_NAME,
    solcVersion: solc.version(),
    settings: SETTINGS,
    abi: contract.abi,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`
  }
}
