import type { ReceiveAuthorization } from "@pay/core"
import { concat, decodeFunctionData, type Hex, toHex } from "viem"
import { describe, expect, it } from "vitest"
import { eip3009TokenAbi } from "./Eip3009Abi.js"
import { receiveCalldata } from "./ReceiveCall.js"

const auth: ReceiveAuthorization = {
  from: "0x1111111111111111111111111111111111111111",
  to: "0x2222222222222222222222222222222222222222",
  value: 5n,
  validAfter: 0n,
  validBefore: 10n,
  nonce: `0x${"ab".repeat(32)}`
}
const r: Hex = `0x${"0c".repeat(32)}`
const s: Hex = `0x${"0d".repeat(32)}`
const argsOf = (signature: Hex) =>
  decodeFunctionData({ abi: eip3009TokenAbi, data: receiveCalldata(auth, signature) }).args

describe("receiveCalldata", () => {
  it("reads a y-parity v as 27 or 28, and passes any other v as signed (a Safe's 31, 32)", () => {
    expect(argsOf(concat([r, s, toHex(0, { size: 1 })])).slice(6)).toEqual([27, r, s])
    expect(argsOf(concat([r, s, toHex(1, { size: 1 })])).slice(6)).toEqual([28, r, s])
    expect(argsOf(concat([r, s, toHex(28, { size: 1 })])).slice(6)).toEqual([28, r, s])
    expect(argsOf(concat([r, s, toHex(31, { size: 1 })])).slice(6)).toEqual([31, r, s])
  })

  it("puts any other length whole in the bytes form", () => {
    for (const signature of [concat([r, s]), concat([r, s, r, "0x1f"])]) {
      expect(argsOf(signature)).toEqual([
        auth.from,
        auth.to,
        auth.value,
        auth.validAfter,
        auth.validBefore,
        auth.nonce,
        signature
      ])
    }
  })
})
