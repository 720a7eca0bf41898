/**
 * Compiles contracts/TestUSDC.sol with solc-js (offline: the compiler ships
 * inside the `solc` package) and OpenZeppelin from node_modules. Used by
 * `npm run compile -w @pay/sandbox-chain`, which writes the committed
 * artifact, and by the test that checks the artifact still matches the source.
 */
import { createHash } from "node:crypto"
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
  /** Every source the compile read: the contract, then its imports as solc asked for them. */
  readonly sources: ReadonlyArray<string>
  /** `inputHashOf(sources)` when compiled: equal now means a compile would give the same. */
  readonly inputHash: string
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

/** A source's text: the contract from this package, an import from node_modules. */
const readSource = (path: string): string =>
  readFileSync(path === SOURCE_NAME ? join(packageRoot, path) : require.resolve(path), "utf8")

/**
 * What decides the compiled artifact, hashed: the solc package's version, the settings, and
 * each source's path and text. A source that changes, a new import (it changes its importer's
 * text), another OpenZeppelin or solc all change it; the test recompiles only then.
 */
export const inputHashOf = (sources: ReadonlyArray<string>): string => {
  const solcPackage = JSON.parse(readFileSync(require.resolve("solc/package.json"), "utf8")) as {
    readonly version: string
  }
  const hash = createHash("sha256")
  hash.update(JSON.stringify({ solc: solcPackage.version, settings: SETTINGS }))
  for (const path of sources) {
    hash.update(`\0${path}\0`)
    hash.update(readSource(path))
  }
  return `sha256:${hash.digest("hex")}`
}

/** Compiles the contract; throws with solc's messages on any compile error. */
export const compileTestUsdc = (): CompiledContract => {
  const solc = require("solc") as Solc
  const sources = [SOURCE_NAME]
  const findImport = (path: string): ImportResult => {
    try {
      const contents = readSource(path)
      sources.push(path)
      return { contents }
    } catch (e) {
      return { error: `cannot read ${path}: ${(e as Error).message}` }
    }
  }
  const input = {
    language: "Solidity",
    sources: { [SOURCE_NAME]: { content: readSource(SOURCE_NAME) } },
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
    sources,
    inputHash: inputHashOf(sources),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`
  }
}
