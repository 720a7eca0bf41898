import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { ChainUnavailable } from "../chain/Chain.js"
import { balanceBudget, HOLDINGS_TTL_MS, makeSharedReads, rankOptions } from "./Holdings.js"

describe("shared reads", () => {
  it("reads once for every concurrent caller, again only after the TTL", async () => {
    let time = 0
    let reads = 0
    const shared = makeSharedReads(() => time)
    const read = Effect.promise(async () => {
      reads++
      await new Promise((resolve) => setTimeout(resolve, 20))
      return 42n
    })
    const ten = await Effect.runPromise(
      Effect.all(
        Array.from({ length: 10 }, () => shared("k", read)),
        { concurrency: "unbounded" }
      )
    )
    expect(ten).toEqual(Array(10).fill(42n))
    expect(reads).toBe(1)
    time += HOLDINGS_TTL_MS - 1
    await Effect.runPromise(shared("k", read))
    expect(reads).toBe(1)
    time += 1
    await Effect.runPromise(shared("k", read))
    expect(reads).toBe(2)
    // Another key is another read.
    await Effect.runPromise(shared("other", read))
    expect(reads).toBe(3)
  })

  it("keeps a failure for the TTL too, and a caller's interruption does not cancel the read", async () => {
    let reads = 0
    const shared = makeSharedReads(() => 0)
    const failing = Effect.suspend(() => {
      reads++
      return Effect.fail(new ChainUnavailable({ chainId: "eip155:1", message: "down" }))
    })
    const first = await Effect.runPromise(Effect.either(shared("f", failing)))
    const second = await Effect.runPromise(Effect.either(shared("f", failing)))
    expect(first._tag).toBe("Left")
    expect(second._tag).toBe("Left")
    expect(reads).toBe(1)

    let finished = false
    const slow = Effect.promise(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30))
      finished = true
      return 7n
    })
    const caller = Effect.runFork(shared("s", slow))
    await Effect.runPromise(Fiber.interrupt(caller))
    expect(await Effect.runPromise(shared("s", slow))).toBe(7n)
    expect(finished).toBe(true)
  })
})

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
