/**
 * The committed artifact is what contracts/ReceiveSimulator.sol compiles to.
 * The contract is small enough (about 2 s with solc-js) to compile on every run.
 */
import { keccak256, toBytes } from "viem"
import { describe, expect, it } from "vitest"
import { compileReceiveSimulator } from "./Compile.js"
import { ReceiveSimulator } from "./ReceiveSimulator.artifact.js"
import { SIMULATED } from "./ReceiveSimulator.js"

describe("ReceiveSimulator artifact", () => {
  it("is what contracts/ReceiveSimulator.sol compiles to (else: npm run compile -w @pay/chain-evm)", () => {
    const compiled = compileReceiveSimulator()
    expect(compiled.solcVersion).toBe(ReceiveSimulator.solcVersion)
    expect(compiled.settings).toEqual(ReceiveSimulator.settings)
    expect(compiled.abi).toEqual(ReceiveSimulator.abi)
    expect(compiled.deployedBytecode).toBe(ReceiveSimulator.deployedBytecode)
  }, 120_000)

  it("returns the word the adapter checks for", () => {
    expect(SIMULATED).toBe(keccak256(toBytes("pay-engine ReceiveSimulator")))
    // The constant is pushed whole by the code: a node that ran it answers it.
    expect(ReceiveSimulator.deployedBytecode).toContain(SIMULATED.slice(2))
  })
})
