import { Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Chain, type ChainNetwork } from "../chain/Chain.js"
import { NATIVE_COIN_ADDRESS } from "../chain/Permission.js"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { makeCollectorLedger, worstCost } from "./CollectorLedger.js"

const ETH = "eip155:31337/slip44:60" as Caip19
const COLLECTOR = "0x00000000000000000000000000000000000C0113" as const

const network = (native: boolean): ChainNetwork => ({
  chainId: "eip155:31337" as Caip2,
  reference: "31337",
  name: "Test",
  iconUrl: null,
  collector: COLLECTOR,
  confirmations: 1,
  etaSeconds: 1,
  pollIntervalMs: 50,
  stuckAfterMs: 60_000,
  permit2: "0x000000000022D473030F116dDEE9F6B43aC78BA3",
  tokens: native
    ? [
        {
          asset: ETH,
          address: NATIVE_COIN_ADDRESS,
          symbol: "ETH",
          name: "Ether",
          decimals: 18,
          iconUrl: null,
          priceCurrency: "ETH",
          authorization: "native"
        }
      ]
    : []
})

/** The ledger over a collector holding `balance` wei, of which `owed` is others'. */
const check = (
  balance: bigint,
  owed: bigint,
  call: { gas: bigint; value?: bigint },
  payingOut = 0n,
  native = true
) => {
  let reads = 0
  const chain = Layer.succeed(Chain, {
    balanceOf: (asset: Caip19, owner: string) => {
      reads++
      expect([asset, owner]).toEqual([ETH, COLLECTOR])
      return Effect.succeed(balance)
    }
  } as never)
  const store = Layer.succeed(ChainJobStore, {
    owedIn: (asset: Caip19) => {
      expect(asset).toBe(ETH)
      return Effect.succeed(owed)
    }
  } as never)
  return Effect.runPromise(
    Effect.gen(function* () {
      const ledger = yield* makeCollectorLedger
      const exit = yield* Effect.exit(
        ledger.covers(
          network(native),
          { to: COLLECTOR, data: "0x", ...call },
          { maxFeePerGas: 10n, maxPriorityFeePerGas: 1n },
          payingOut
        )
      )
      return { exit, reads }
    }).pipe(Effect.provide(Layer.merge(chain, store)))
  )
}

describe("the collector's ledger", () => {
  it("counts a transaction's worst cost: its gas limit at its max fee, and the coin it sends", () => {
    expect(
      worstCost(
        { to: COLLECTOR, data: "0x", gas: 21_000n, value: 5n },
        { maxFeePerGas: 10n, maxPriorityFeePerGas: 1n }
      )
    ).toBe(210_005n)
  })

  it("lets a transaction through while the collector's own coin covers its gas", async () => {
    // 1,000,000 held, 700,000 owed: 300,000 of gas money, a 210,000 worst cost.
    const { exit } = await check(1_000_000n, 700_000n, { gas: 21_000n })
    expect(Exit.isSuccess(exit)).toBe(true)
  })

  it("refuses one whose gas would spend coin owed to merchants or buyers, by one wei", async () => {
    const { exit } = await check(909_999n, 700_000n, { gas: 21_000n })
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain("GasMoneyShort")
    expect(Exit.isSuccess((await check(910_000n, 700_000n, { gas: 21_000n })).exit)).toBe(true)
  })

  it("a settle job pays out what it owes: only its gas must be the collector's own", async () => {
    // The settlement's 500,000 is among the 700,000 owed: 210,000 of gas on 300,000 spare.
    const settle = { gas: 21_000n, value: 500_000n }
    expect(Exit.isSuccess((await check(1_000_000n, 700_000n, settle, 500_000n)).exit)).toBe(true)
    // Not counted yet (signed with the success that counts it): the amount is spent from the
    // balance beyond what is owed, 1,000,000 − 710,000 < 700,000.
    expect(Exit.isFailure((await check(1_000_000n, 700_000n, settle, 0n)).exit)).toBe(true)
  })

  it("reads nothing on a network that takes no native coin", async () => {
    const { exit, reads } = await check(0n, 10n ** 30n, { gas: 21_000n }, 0n, false)
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(reads).toBe(0)
  })
})
