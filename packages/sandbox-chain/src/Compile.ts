/**
 * Compiles the sandbox's Solidity with solc-js (offline: the compiler ships
 * inside the `solc` package), each source read from this package or from
 * node_modules. The targets: the contracts in contracts/ (`npm run compile -w
 * @pay/sandbox-chain`, SANDBOX_CONTRACT_TARGETS) and thirdweb's ERC-4337
 * account factory from its npm sources (`npm run accounts -w
 * @pay/sandbox-chain`, SmartAccountSources.ts). Both scripts write committed
 * artifacts; the tests that check an artifact against its sources use the same
 * compile.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Abi, Hex } from "viem"

const require = createRequire(import.meta.url)

export interface SolcSettings {
  readonly evmVersion: string
  readonly optimizer: { readonly enabled: boolean; readonly runs: number }
}

/** What to compile: one contract of one source, and where its imports are read from. */
export interface SolidityTarget {
  readonly contractName: string
  readonly sourceName: string
  readonly settings: SolcSettings
  /** The text of a source as solc names it: the target's own, or one of its imports. */
  readonly readSource: (path: string) => string
}

export interface CompiledContract<S extends SolcSettings = SolcSettings> {
  readonly contractName: string
  readonly sourceName: string
  readonly solcVersion: string
  readonly settings: S
  /** Every source the compile read: the contract, then its imports as solc asked for them. */
  readonly sources: ReadonlyArray<string>
  /** `inputHashOf(target, sources)` when compiled: equal now means a compile would give the same. */
  readonly inputHash: string
  readonly abi: Abi
  readonly bytecode: Hex
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..")

// OpenZeppelin 5 needs cancun; the sandbox's own contracts are compiled the same way.
const SETTINGS = { evmVersion: "cancun", optimizer: { enabled: true, runs: 200 } } as const

/** One of this package's contracts/: its own source from here, imports from node_modules. */
const contractTarget = <N extends string>(contractName: N) => {
  const sourceName = `contracts/${contractName}.sol` as const
  return {
    contractName,
    sourceName,
    settings: SETTINGS,
    readSource: (path: string): string =>
      readFileSync(path === sourceName ? join(packageRoot, path) : require.resolve(path), "utf8")
  } as const satisfies SolidityTarget
}

/** The sandbox's test USDC, with OpenZeppelin 5 from node_modules. */
export const TEST_USDC_TARGET = contractTarget("TestUSDC")
/** A USDT whose transfers and approve return nothing; no imports. */
export const TEST_USDT_TARGET = contractTarget("TestUSDT")
/** An 18-decimal DAI, OpenZeppelin 5's ERC20. */
export const TEST_DAI_TARGET = contractTarget("TestDAI")
/** Permit2's signature transfers, our own implementation; no imports. */
export const SANDBOX_PERMIT2_TARGET = contractTarget("SandboxPermit2")
/** A Chainlink-style price (and sequencer-uptime) feed; no imports. */
export const SANDBOX_PRICE_FEED_TARGET = contractTarget("SandboxPriceFeed")

/** Every contract of contracts/, each compiled to src/<contractName>.artifact.ts. */
export const SANDBOX_CONTRACT_TARGETS = [
  TEST_USDC_TARGET,
  TEST_USDT_TARGET,
  TEST_DAI_TARGET,
  SANDBOX_PERMIT2_TARGET,
  SANDBOX_PRICE_FEED_TARGET
] as const

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

/**
 * What decides the compiled artifact, hashed: the solc package's version, the settings, and
 * each source's path and text. A source that changes, a new import (it changes its importer's
 * text), another package version or solc all change it; the tests recompile only then.
 */
export const inputHashOf = (target: SolidityTarget, sources: ReadonlyArray<string>): string => {
  const solcPackage = JSON.parse(readFileSync(require.resolve("solc/package.json"), "utf8")) as {
    readonly version: string
  }
  const hash = createHash("sha256")
  hash.update(JSON.stringify({ solc: solcPackage.version, settings: target.settings }))
  for (const path of sources) {
    hash.update(`\0${path}\0`)
    hash.update(target.readSource(path))
  }
  return `sha256:${hash.digest("hex")}`
}

/** Compiles the target's contract; throws with solc's messages on any compile error. */
export const compileSolidity = <T extends SolidityTarget>(
  target: T
): CompiledContract<T["settings"]> => {
  const solc = require("solc") as Solc
  const sources = [target.sourceName]
  const findImport = (path: string): ImportResult => {
    try {
      const contents = target.readSource(path)
      sources.push(path)
      return { contents }
    } catch (e) {
      return { error: `cannot read ${path}: ${(e as Error).message}` }
    }
  }
  const input = {
    language: "Solidity",
    sources: { [target.sourceName]: { content: target.readSource(target.sourceName) } },
    settings: {
      ...target.settings,
      outputSelection: {
        [target.sourceName]: { [target.contractName]: ["abi", "evm.bytecode.object"] }
      }
    }
  }
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), { import: findImport })
  ) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`)
  }
  const contract = output.contracts?.[target.sourceName]?.[target.contractName]
  if (contract === undefined) throw new Error(`solc produced no ${target.contractName}`)
  return {
    contractName: target.contractName,
    sourceName: target.sourceName,
    solcVersion: solc.version(),
    settings: target.settings,
    sources,
    inputHash: inputHashOf(target, sources),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`
  }
}

/** Compiles contracts/TestUSDC.sol (its artifact test calls it). */
export const compileTestUsdc = () => compileSolidity(TEST_USDC_TARGET)
