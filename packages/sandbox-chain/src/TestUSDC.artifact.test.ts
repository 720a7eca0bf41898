import { describe, expect, it } from "vitest"
import { compileTestUsdc } from "./Compile.js"
import { TestUSDC } from "./TestUSDC.artifact.js"

describe("TestUSDC artifact", () => {
  it("is what contracts/TestUSDC.sol compiles to (else: npm run compile -w @pay/sandbox-chain)", () => {
    const started = performance.now()
    const compiled = compileTestUsdc()
    console.log(`solc-js compiled TestUSDC in ${Math.round(performance.now() - started)} ms`)
    expect(compiled.solcVersion).toBe(TestUSDC.solcVersion)
    expect(compiled.settings).toEqual(TestUSDC.settings)
    expect(compiled.abi).toEqual(TestUSDC.abi)
    expect(compiled.bytecode).toBe(TestUSDC.bytecode)
  }, 180_000)
})
