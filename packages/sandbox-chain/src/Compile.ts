/**
 * Compiles contracts/TestUSDC.sol with solc-js (offline: the compiler ships
 * inside the `solc` package) and OpenZeppelin from node_modules. Used by
 * `npm run compile -w @pay/sandbox-chain`, which writes the committed
 * artifact, and by the test that checks the artifact still matches the source.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Abi, Hex } from "viem"

const require = createRequire(import.meta.url)

export const CONTRACT_NAME = "TestUSDC"
export const SOURCE_NAME = "contracts/TestUSDC.sol"

/** The solc settings the artifact is built with (OpenZeppelin 5 needs cancun). */
export const SETTINGS = {
  evmVersion: "cancun",
  optimizer: { enabled: true, runs: 200 }
} as const

export interface CompiledContract {
  readonly contractName: string
  readonly sourceName: string
  readonly solcVersion: string
  readonly settings: typeof SETTINGS
  readonly abi: Abi
  readonly bytecode: Hex
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..")

interface SolcError {
  readonly severity: "error" | "warning" | "info"
  readonly formattedMessage: string
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<SolcError>
  readonly contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>
  >
}

interface Solc {
  version(): string
  compile(input: string, callbacks: { import: (path: string) => ImportResult }): string
}

type ImportResult = { contents: string } | { error: string }

/** Reads `@openzeppelin/contracts/...` imports from the installed package. */
const findImport = (path: string): ImportResult => {
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") }
  } catch (e) {
    return { error: `cannot read ${path}: ${(e as Error).message}` }
  }
}

/** Compiles the contract; throws with solc's messages on any compile error. */
export const compileTestUsdc = (): CompiledContract => {
  const solc = require("solc") as Solc
  const input = {
    language: "Solidity",
    sources: { [SOURCE_NAME]: { content: readFileSync(join(packageRoot, SOURCE_NAME), "utf8") } },
    settings: {
      ...SETTINGS,
      outputSelection: { [SOURCE_NAME]: { [CONTRACT_NAME]: ["abi", "evm.bytecode.object"] } }
    }
  }
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), { import: findImport })
  ) as SolcOutput
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
    bytecode: `0x${contract.evm.bytecode.object}`
  }
}
