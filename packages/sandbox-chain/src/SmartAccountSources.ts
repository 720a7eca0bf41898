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
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

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
