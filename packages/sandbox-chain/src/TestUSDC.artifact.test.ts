/**
 * The committed artifact is what contracts/TestUSDC.sol compiles to. Compiling takes up to
 * three minutes on a loaded 2-core machine, so it runs only when what decides the result (the
 * solc version, the settings, every source the last compile read) hashes differently from the
 * artifact's `inputHash`, or when PAY_COMPILE_SOLIDITY=1 asks for it.
 */
import { describe, expect, it } from "vitest"
import { compileTestUsdc, inputHashOf, TEST_USDC_TARGET } from "./Compile.js"
import { TestUSDC } from "./TestUSDC.artifact.js"

describe("TestUSDC artifact", () => {
  it("records the sources it was compiled from, the contract first and OpenZeppelin's imports", () => {
    expect(TestUSDC.sources[0]).toBe(TEST_USDC_TARGET.sourceName)
    expect(TestUSDC.sources.length).toBeGreaterThan(1)
    for (const source of TestUSDC.sources.slice(1)) expect(source).toMatch(/^@openzeppelin\//)
    expect(new Set(TestUSDC.sources).size).toBe(TestUSDC.sources.length)
  })

  it("hashes differently when a source is left out or the order changes", () => {
    const sources = [...TestUSDC.sources]
    const hash = inputHashOf(TEST_USDC_TARGET, sources)
    expect(inputHashOf(TEST_USDC_TARGET, sources.slice(0, -1))).not.toBe(hash)
    expect(inputHashOf(TEST_USDC_TARGET, [...sources].reverse())).not.toBe(hash)
  })

  it("is what contracts/TestUSDC.sol compiles to (else: npm run compile -w @pay/sandbox-chain)", () => {
    const inputs = inputHashOf(TEST_USDC_TARGET, TestUSDC.sources)
    if (inputs === TestUSDC.inputHash && process.env.PAY_COMPILE_SOLIDITY !== "1") {
      console.info(
        `TestUSDC: the compile's inputs hash as the artifact's (${inputs}): not compiled`
      )
      return
    }
    const started = performance.now()
    const compiled = compileTestUsdc()
    console.info(`solc-js compiled TestUSDC in ${Math.round(performance.now() - started)} ms`)
    expect(compiled.solcVersion).toBe(TestUSDC.solcVersion)
    expect(compiled.settings).toEqual(TestUSDC.settings)
    expect(compiled.sources).toEqual(TestUSDC.sources)
    expect(compiled.inputHash).toBe(TestUSDC.inputHash)
    expect(compiled.abi).toEqual(TestUSDC.abi)
    expect(compiled.bytecode).toBe(TestUSDC.bytecode)
  }, 180_000)
})
