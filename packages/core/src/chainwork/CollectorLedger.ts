/**
 * The collector's ledger of its network's own coin. One address holds both
 * the coin buyers paid in (the merchants' until it is settled, or the
 * buyers' when it paid nothing) and the operator's gas money, which every
 * transaction the collector sends burns. The ledger keeps them apart: before
 * the collector signs anything, what it holds for others (the stores'
 * `owedIn`: unsettled native settlements and returnable funds) must still be
 * there after the transaction's worst cost (its gas limit at its max fee,
 * plus the coin it sends). A transaction that would dip into it is not sent
 * (`GasMoneyShort`): the job backs off and is marked stuck until the
 * operator tops up the collector's gas money (docs/operations.md).
 *
 * The check runs under the process's send lock of the collector, so one
 * instance's transactions are checked one at a time; two instances signing
 * in the same instant could each count the same spare coin once (a window
 * of one transaction's gas, documented in docs/operations.md).
 */
import { Effect, Schema } from "effect"
import { Chain, type ChainCall, type ChainNetwork, type FeeQuote } from "../chain/Chain.js"
import { ChainJobStore } from "./ChainJobStore.js"

/** The collector's own coin does not cover a transaction's gas: sending it would spend others' money. */
export class GasMoneyShort extends Schema.TaggedError<GasMoneyShort>()("GasMoneyShort", {
  chainId: Schema.String,
  message: Schema.String
}) {}

/** The network's own coin, when it takes payments in it. */
export const nativeTokenOf = (network: ChainNetwork) =>
  network.tokens.find((t) => t.authorization === "native")

/** The most a transaction can cost its sender: its gas limit at its max fee, and the coin it sends. */
export const worstCost = (call: ChainCall, fees: FeeQuote) =>
  call.gas * fees.maxFeePerGas + (call.value ?? 0n)

export const makeCollectorLedger = Effect.gen(function* () {
  const chain = yield* Chain
  const store = yield* ChainJobStore

  /**
   * Passes when the collector can send `call` at `fees` and still hold what
   * it owes. `payingOut` is the part of what it owes that the call pays out
   * (a settle job's own amount, counted since its payment succeeded); a
   * settlement signed in the write that records its payment's success is
   * not counted yet, and pays out nothing counted.
   */
  const covers = (network: ChainNetwork, call: ChainCall, fees: FeeQuote, payingOut: bigint) =>
    Effect.gen(function* () {
      const native = nativeTokenOf(network)
      if (native === undefined) return
      const [balance, owed] = yield* Effect.all(
        [chain.balanceOf(native.asset, network.collector), store.owedIn(native.asset)],
        { concurrency: "unbounded" }
      )
      const after = balance - worstCost(call, fees)
      const othersOwed = owed - payingOut
      if (after < othersOwed) {
        return yield* new GasMoneyShort({
          chainId: network.chainId,
          message:
            `the collector ${network.collector} holds ${balance} wei, of which ${owed} is owed ` +
            `(unsettled ${native.symbol} payments, returnable funds); a transaction costing up to ` +
            `${worstCost(call, fees)} would spend ${othersOwed - after} of it: add gas money`
        })
      }
    })

  return { covers } as const
})
