import { describe, expect, it } from "vitest"
import { balanceBudget, rankOptions } from "./Holdings.js"

describe("balance budget", () => {
  it("allows exactly its reads", () => {
    const budget = balanceBudget(2)
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, false])
  })
})

describe("rankOptions", () => {
  const option = (
    name: string,
    affordable: boolean | undefined,
    approvals: number,
    stable = true
  ) => ({
    name,
    rank: { affordable, approvals, stable }
  })
  const order = (options: ReadonlyArray<ReturnType<typeof option>>) =>
    rankOptions(options, (o) => o.rank).map((o) => o.name)

  it("puts what the buyer cannot afford last, then approvals, then volatile coins", () => {
    expect(
      order([
        option("usdc-poor", false, 0),
        option("usdt-approve", true, 1),
        option("eth", true, 0, false),
        option("dai-allowed", true, 0),
        option("unread", undefined, 2)
      ])
    ).toEqual(["dai-allowed", "eth", "usdt-approve", "unread", "usdc-poor"])
  })

  it("keeps the order made among equals", () => {
    expect(order([option("a", true, 0), option("b", true, 0), option("c", undefined, 0)])).toEqual([
      "a",
      "b",
      "c"
    ])
  })
})
