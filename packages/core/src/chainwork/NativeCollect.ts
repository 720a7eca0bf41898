/**
 * A native option's collection: nothing to send, the buyer's wallet sent
 * the coin itself. The collect job watches that transfer (its hash, claimed
 * by this payment at the confirm) until it has the network's confirmations,
 * counted against the head at each look, and then judges it:
 *
 * - mined as the option asked (from the buyer, to the collector, the exact
 *   value, the option's reference as its data): the payment succeeds;
 * - mined otherwise: `transaction_mismatch`, and what it brought the
 *   collector is recorded as returnable funds (ChainJobStore.recordReturnable)
 *   before the payment fails, so a crash in between records it again, once;
 * - reverted: `transaction_reverted` (nothing moved);
 * - gone from the network, and either its nonce used by another of the
 *   buyer's transactions or the option expired: `transaction_dropped`.
 *
 * A receipt that disappears before it has its confirmations (a
 * reorganisation) sends the job back to watching; the payment never left
 * `processing`.
 */
import { Effect } from "effect"
import { type Address, isAddressEqual } from "viem"
import { Chain, type ChainNetwork, type NetworkTransaction } from "../chain/Chain.js"
import type { BuyerTransfer } from "../payments/ChainJob.js"
import type { Payment } from "../payments/Payment.js"
import type { PaymentOption } from "../payments/PaymentOption.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { again, done, type Step } from "./Step.js"

/** What a mined transfer got wrong, in words for the log; undefined when it is the option's. */
export const mismatchOf = (
  sent: NetworkTransaction,
  option: Pick<PaymentOption, "authorization">,
  collector: Address
): string | undefined => {
  const auth = option.authorization
  if (!isAddressEqual(sent.from, auth.from)) return `it was sent by ${sent.from}, not ${auth.from}`
  if (sent.to === null || !isAddressEqual(sent.to, collector))
    return `it went to ${sent.to ?? "a new contract"}, not the collector ${collector}`
  if (sent.value !== auth.value) return `it moved ${sent.value} wei, not ${auth.value}`
  if (sent.input.toLowerCase() !== auth.nonce.toLowerCase())
    return "its data is not the option's reference"
  return undefined
}

export const makeNativeCollect = Effect.gen(function* () {
  const chain = yield* Chain
  const store = yield* ChainJobStore
  const clock = yield* Effect.clock

  /**
   * One look at the buyer's transfer. `succeed` and `fail` are the collect
   * step's: success with fees and the settle job in one write, or failure.
   */
  const watchTransfer = <E1, E2>(
    network: ChainNetwork,
    payment: Payment,
    option: PaymentOption,
    paid: BuyerTransfer,
    succeed: (mined: {
      readonly hash: `0x${string}`
      readonly nonce: number
    }) => Effect.Effect<Step, E1>,
    fail: (
      code: "transaction_reverted" | "transaction_mismatch" | "transaction_dropped"
    ) => Effect.Effect<void, E2>
  ) =>
    Effect.gen(function* () {
      const chainId = network.chainId
      const state = yield* chain.transactionState(chainId, paid.hash)
      const head = yield* chain.head(chainId)
      if (state._tag === "Pending") return again(network.pollIntervalMs)
      if (state._tag === "Unknown") {
        // Another transaction of the buyer's took its nonce (a wallet's "speed up" or
        // "cancel"), or the option expired with the transfer nowhere: it will not be mined.
        const { latest } = yield* chain.collectorNonce(chainId, undefined, paid.from)
        if (latest <= paid.nonce && head.timestamp < option.authorization.validBefore) {
          return again(network.pollIntervalMs)
        }
        // Mined in between the two looks: watched as such at the next.
        if ((yield* chain.transactionState(chainId, paid.hash))._tag !== "Unknown") {
          return again(0)
        }
        yield* Effect.logWarning(
          `payment ${payment.id}: the buyer's transfer ${paid.hash} is gone from the network` +
            (latest > paid.nonce
              ? ` (its nonce ${paid.nonce} was used by another transaction)`
              : "")
        )
        yield* fail("transaction_dropped")
        return done
      }
      const depth = head.number - state.blockNumber + 1n
      if (depth < BigInt(Math.max(1, network.confirmations))) return again(network.pollIntervalMs)
      if (!state.success) {
        yield* fail("transaction_reverted")
        return done
      }
      const sent = yield* chain.transaction(chainId, paid.hash)
      // Reorganised away between the two reads: watched again.
      if (sent === undefined) return again(0)
      const mismatch = mismatchOf(sent, option, network.collector)
      if (mismatch === undefined) return yield* succeed({ hash: paid.hash, nonce: sent.nonce })
      yield* Effect.logWarning(
        `payment ${payment.id}: the buyer's transfer ${paid.hash} is not the option's: ${mismatch}`
      )
      if (sent.to !== null && isAddressEqual(sent.to, network.collector) && sent.value > 0n) {
        yield* store.recordReturnable({
          chainId,
          txHash: paid.hash,
          paymentId: payment.id,
          asset: option.asset,
          from: sent.from,
          value: sent.value,
          reason: "transaction_mismatch",
          recordedAt: new Date(clock.unsafeCurrentTimeMillis())
        })
      }
      yield* fail("transaction_mismatch")
      return done
    })

  return { watchTransfer } as const
})
