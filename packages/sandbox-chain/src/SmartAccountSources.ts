/**
 * Where the smart-account contracts the sandbox deploys come from: the
 * published artifacts (abi and creation bytecode) of npm packages real
 * accounts are built from, never a test-only contract of ours. Read by
 * scripts/accounts.ts, which writes SmartAccounts.artifact.ts, and by the test
 * that checks the committed artifact against the installed packages.
 *
 * - Safe 1.4.1 (`@safe-global/safe-contracts`, LGPL-3.0): the account most
 *   treasuries and many wallets hold. Its singleton, the proxy factory that
 *   deploys each account with CREATE2 (so an account has its address before it
 *   exists: the counterfactual, ERC-6492 path), and the compatibility fallback
 *   handler that gives it ERC-1271 `isValidSignature(bytes32, bytes)`.
 * - `Simple7702Account` (`@account-abstraction/contracts` 0.8.0, MIT): the
 *   ERC-4337 reference team's account for EIP-7702, the delegate of an EOA
 *   that then checks its own key's signatures through ERC-1271.
 * - thirdweb's `AccountFactory` and the `Account` it deploys
 *   (`@thirdweb-dev/contracts` 3.15.0, Apache-2.0): the ERC-4337 account behind
 *   thirdweb's in-app smart wallets, deployed by its factory with CREATE2, so
 *   a buyer pays from it before it exists; its ERC-1271 check wants the owner's
 *   signature of `AccountMessage(bytes message)` under the account's own
 *   domain. The package publishes sources, not bytecode: it is compiled with
 *   solc-js (THIRDWEB_ACCOUNT_FACTORY_TARGET), and the artifact records the
 *   hash of every source it read and of the settings.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { SolidityTarget } from "./Compile.js"

export interface SmartAccountSource {
  readonly name: string
  readonly packageName: string
  readonly version: string
  /** The artifact's path inside the package. */
  readonly path: string
}

export const SMART_ACCOUNT_SOURCES: ReadonlyArray<SmartAccountSource> = [
  {
    name: "Safe",
    packageName: "@safe-global/safe-contracts",
    version: "1.4.1",
    path: "build/artifacts/contracts/Safe.sol/Safe.json"
  },
  {
    name: "SafeProxyFactory",
    packageName: "@safe-global/safe-contracts",
    version: "1.4.1",
    path: "build/artifacts/contracts/proxies/SafeProxyFactory.sol/SafeProxyFactory.json"
  },
  {
    name: "CompatibilityFallbackHandler",
    packageName: "@safe-global/safe-contracts",
    version: "1.4.1",
    path: "build/artifacts/contracts/handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json"
  },
  {
    name: "Simple7702Account",
    packageName: "@account-abstraction/contracts",
    version: "0.8.0",
    path: "artifacts/Simple7702Account.json"
  }
]

/** A source's artifact as installed: its abi, creation bytecode and the sha256 of its file. */
export const readSmartAccountSource = (source: SmartAccountSource) => {
  const require = createRequire(import.meta.url)
  const installed = require(`${source.packageName}/package.json`) as { version: string }
  if (installed.version !== source.version) {
    throw new Error(`${source.packageName} is ${installed.version}, not ${source.version}`)
  }
  const file = require.resolve(`${source.packageName}/${source.path}`)
  const bytes = readFileSync(file)
  const artifact = JSON.parse(bytes.toString("utf8")) as {
    readonly abi: ReadonlyArray<unknown>
    readonly bytecode: string
  }
  return {
    source: `${source.packageName}@${source.version}/${source.path}`,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    abi: artifact.abi,
    bytecode: artifact.bytecode
  }
}

const THIRDWEB_CONTRACTS = { packageName: "@thirdweb-dev/contracts", version: "3.15.0" } as const

let checkedRoot: string | undefined

/** The installed package's folder, once it is known to be the version named. */
const thirdwebRoot = (): string => {
  if (checkedRoot !== undefined) return checkedRoot
  const require = createRequire(import.meta.url)
  const manifest = require.resolve(`${THIRDWEB_CONTRACTS.packageName}/package.json`)
  const installed = JSON.parse(readFileSync(manifest, "utf8")) as { version: string }
  if (installed.version !== THIRDWEB_CONTRACTS.version) {
    throw new Error(
      `${THIRDWEB_CONTRACTS.packageName} is ${installed.version}, not ${THIRDWEB_CONTRACTS.version}`
    )
  }
  checkedRoot = dirname(manifest)
  return checkedRoot
}

/**
 * thirdweb's account factory, compiled from the installed package: every import is relative, so
 * a source's solc name is its path inside the package. The factory's constructor deploys the
 * `Account` implementation, so one contract's bytecode carries both. Optimizer runs as low as
 * thirdweb's own build (20), which keeps `Account` under the 24 KB code limit.
 */
export const THIRDWEB_ACCOUNT_FACTORY_TARGET = {
  contractName: "AccountFactory",
  sourceName: "prebuilts/account/non-upgradeable/AccountFactory.sol",
  settings: { evmVersion: "paris", optimizer: { enabled: true, runs: 20 } },
  readSource: (path: string): string => readFileSync(join(thirdwebRoot(), path), "utf8")
} as const satisfies SolidityTarget

/** Where the compiled factory comes from, as its artifact names it. */
export const THIRDWEB_ACCOUNT_FACTORY_SOURCE = `${THIRDWEB_CONTRACTS.packageName}@${THIRDWEB_CONTRACTS.version}/${THIRDWEB_ACCOUNT_FACTORY_TARGET.sourceName}`
