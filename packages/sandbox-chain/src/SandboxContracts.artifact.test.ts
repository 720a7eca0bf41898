/**
 * The committed artifacts of contracts/TestUSDT.sol, TestDAI.sol,
 * SandboxPermit2.sol and SandboxPriceFeed.sol are what those sources compile
 * to. As for TestUSDC (TestUSDC.artifact.test.ts), each is compiled again only
 * when what decides the result (the solc version, the settings, every source
 * the last compile read) hashes differently from its `inputHash`, or when
 * PAY_COMPILE_SOLIDITY=1 asks for it; then a few seconds each.
 */
import { describe, expect, it } from "vitest"
import {
  compileSolidity,
  inputHashOf,
  SANDBOX_PERMIT2_TARGET,
  SANDBOX_PRICE_FEED_TARGET,
  type SolidityTarget,
  TEST_DAI_TARGET,
  TEST_USDT_TARGET
} from "./Compile.js"
import { SandboxPermit2 } from "./SandboxPermit2.artifact.js"
import { SandboxPriceFeed } from "./SandboxPriceFeed.artifact.js"
import { TestDAI } from "./TestDAI.artifact.js"
import { TestUSDT } from "./TestUSDT.artifact.js"

interface Artifact {
  readonly contractName: string
  readonly solcVersion: string
  readonly settings: unknown
  readonly sources: ReadonlyArray<string>
  readonly inputHash: string
  readonly abi: unknown
  readonly bytecode: string
}

const artifacts: ReadonlyArray<{ readonly target: SolidityTarget; readonly artifact: Artifact }> = [
  { target: TEST_USDT_TARGET, artifact: TestUSDT },
  { target: TEST_DAI_TARGET, artifact: TestDAI },
  { target: SANDBOX_PERMIT2_TARGET, artifact: SandboxPermit2 },
  { target: SANDBOX_PRICE_FEED_TARGET, artifact: SandboxPriceFeed }
]

describe.each(artifacts)("the $target.contractName artifact", ({ target, artifact }) => {
  it("records its source first, then only OpenZeppelin's, each once", () => {
    expect(artifact.contractName).toBe(target.contractName)
    expect(artifact.sources[0]).toBe(target.sourceName)
    for (const source of artifact.sources.slice(1)) expect(source).toMatch(/^@openzeppelin\//)
    expect(new Set(artifact.sources).size).toBe(artifact.sources.length)
  })

  it("is what its source compiles to (else: npm run compile -w @pay/sandbox-chain)", () => {
    const inputs = inputHashOf(target, artifact.sources)
    if (inputs === artifact.inputHash && process.env.PAY_COMPILE_SOLIDITY !== "1") return
    const compiled = compileSolidity(target)
    expect(compiled.solcVersion).toBe(artifact.solcVersion)
    expect(compiled.settings).toEqual(artifact.settings)
    expect(compiled.sources).toEqual(artifact.sources)
    expect(compiled.inputHash).toBe(artifact.inputHash)
    expect(compiled.abi).toEqual(JSON.parse(JSON.stringify(artifact.abi)))
    expect(compiled.bytecode).toBe(artifact.bytecode)
  }, 180_000)
})
