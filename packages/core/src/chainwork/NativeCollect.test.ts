import { describe, expect, it } from "vitest"
import type { NetworkTransaction } from "../chain/Chain.js"
import { withSettlementGas } from "./CollectStep.js"
import { mismatchOf } from "./NativeCollect.js"

const BUYER = "0x1111111111111111111111111111111111111111" as const
const COLLECTOR = "0x2222222222222222222222222222222222222222" as const
const REFERENCE = `0x${"ab".repeat(32)}` as const

const option = {
  authorization: {
    from: BUYER,
    to: COLLECTOR,
    value: 3_500_000_000_000_000n,
    validAfter: 0n,
    validBefore: 2_000_000_000n,
    nonce: REFERENCE
  }
}
const sent: NetworkTransaction = {
  hash: `0x${"01".repeat(32)}`,
  from: BUYER,
  to: COLLECTOR,
  value: 3_500_000_000_000_000n,
  input: REFERENCE,
  nonce: 0
}

describe("a native option's transfer as mined", () => {
  it("is the option's when sender, recipient, value and reference all match, whatever their case", () => {
    expect(mismatchOf(sent, option, COLLECTOR)).toBeUndefined()
    expect(
      mismatchOf(
        {
          ...sent,
          from: BUYER.toUpperCase().replace("0X", "0x") as never,
          input: REFERENCE.toUpperCase().replace("0X", "0x") as never
        },
        option,
        COLLECTOR
      )
    ).toBeUndefined()
  })

  it("says what differs: the sender, the recipient, the value (one wei) or the reference", () => {
    expect(mismatchOf({ ...sent, from: COLLECTOR }, option, COLLECTOR)).toMatch(/sent by/)
    expect(mismatchOf({ ...sent, to: BUYER }, option, COLLECTOR)).toMatch(/went to/)
    expect(mismatchOf({ ...sent, to: null }, option, COLLECTOR)).toMatch(/a new contract/)
    expect(mismatchOf({ ...sent, value: sent.value + 1n }, option, COLLECTOR)).toMatch(
      /moved 3500000000000001 wei, not 3500000000000000/
    )
    expect(mismatchOf({ ...sent, value: sent.value - 1n }, option, COLLECTOR)).toMatch(/moved/)
    expect(mismatchOf({ ...sent, input: "0x" }, option, COLLECTOR)).toMatch(/reference/)
  })
})

describe("a native payment's fees", () => {
  const fees = { fixed: 0n, percentage: "1.5", total: 15n }

  it("keep the settlement's gas as their network part, in the total", () => {
    expect(withSettlementGas(fees, 1_000n, 21n)).toEqual({
      fixed: 0n,
      percentage: "1.5",
      network: 21n,
      total: 36n
    })
  })

  it("never exceed the amount paid: the gas part is capped at what the fees leave", () => {
    expect(withSettlementGas(fees, 30n, 21n)).toEqual({ ...fees, network: 15n, total: 30n })
    expect(withSettlementGas({ ...fees, total: 30n }, 30n, 21n).total).toBe(30n)
  })
})
