/**
 * When the chain expects a lower nonce of a sender (the collector, or the
 * deployer: each has its own sequence, filled apart) than the one a job's
 * transaction was signed at (the node refuses it: "nonce too high"),
 * something below it is missing on the chain: a transaction dropped from the
 * node's pool, lost in an RPC failover, or never received. The rule, per nonce from the chain's
 * next up to the job's own (docs/operations.md, "Nonces and the chain"):
 *
 * - a recorded transaction the chain knows (pending or mined) is never sent
 *   again, nor anything else at its nonce;
 * - one it does not know is sent again as the same signed bytes, at its own
 *   nonce, while it can still do what it was signed for: another node may
 *   still hold it, so signing a different transaction, at this nonce or a new
 *   one, could pay twice;
 * - a different transaction (a zero-value cancel, which moves nothing) is
 *   signed for that nonce only when the recorded one can no longer do what it
 *   was signed for: a collect or deploy whose authorization has expired, or
 *   any call of a job that is over (its payment was decided without it, so it
 *   must not move money now). Sharing the nonce, at most one of the two can ever be
 *   mined. An active job replaces its own, on its next look, and so learns
 *   its transfer did not happen;
 * - a nonce with nothing recorded is never filled: the engine cannot know
 *   what another sender with the key put there, or whether the node is merely
 *   behind. The job waits, backing off, until the chain catches up or an
 *   operator looks (the job is marked stuck).
 */
import { Effect, Option } from "effect"
import type { Address } from "viem"
import {
  Chain,
  type ChainCall,
  type ChainHead,
  type ChainNetwork,
  type ChainUnavailable
} from "../chain/Chain.js"
import type { ChainJob, ChainTransfer } from "../payments/ChainJob.js"
import { GatewayStore, type OptionId } from "../payments/PaymentOption.js"
import { ChainJobStore } from "./ChainJobStore.js"
import type { GasMoneyShort } from "./CollectorLedger.js"

/** A zero-value transfer to oneself: the cheapest transaction that uses a nonce. */
const CANCEL_GAS = 21_000n

/**
 * A zero-value transfer of `sender` to itself (the job's own sender: the
 * collector, or the deployer for a deploy job): it uses the sender's nonce
 * and moves nothing.
 */
export const cancelCall = (sender: Address): ChainCall => ({
  to: sender,
  data: "0x",
  gas: CANCEL_GAS
})

/** The job of the nonce is active again: its holder replaces its own transactions. */
class OwnerActive {
  readonly _tag = "OwnerActive"
}

/** How Transactions.ts signs, records (through `record`) and sends a transaction. */
export type SignRecordSend = <A, E, R>(
  job: {
    readonly id: ChainTransfer["jobId"]
    readonly nonce: number | null
    /** Who signs and sends it: the job's sender (`senderOf`), whose nonce sequence it takes. */
    readonly sender: Address
    /**
     * What of the coin the collector owes the transaction pays out: a native
     * settle job's amount (CollectorLedger.ts). Absent: nothing.
     */
    readonly payingOut?: bigint | undefined
  },
  network: ChainNetwork,
  purpose: ChainTransfer["purpose"],
  call: ChainCall,
  previous: ChainTransfer | undefined,
  record: (transfer: ChainTransfer) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | ChainUnavailable | GasMoneyShort, R>

export const makeNonceGaps = (signRecordSend: SignRecordSend) =>
  Effect.gen(function* () {
    const store = yield* ChainJobStore
    const chain = yield* Chain
    const options = yield* GatewayStore

    /** Whether the recorded transaction can still do what it was signed for. */
    const executable = (job: ChainJob, transfer: ChainTransfer, head: ChainHead) =>
      Effect.gen(function* () {
        if (transfer.purpose === "cancel") return true
        if (job.state === "done") return false
        if (job.payload.kind === "settle") return true
        const option = yield* options.findOption(job.payload.optionId as OptionId)
        return Option.isSome(option) && head.timestamp < option.value.authorization.validBefore
      })

    /**
     * Fills what the chain lacks below nonce `below` of `sender` on the
     * network, by the rule above. Answers null when every nonce below is
     * known to the chain or was sent again, else why the job must wait.
     */
    const fillBelow = (network: ChainNetwork, sender: Address, below: number) =>
      Effect.gen(function* () {
        const chainId = network.chainId
        const head = yield* chain.head(chainId)
        const asSender =
          sender.toLowerCase() === network.collector.toLowerCase() ? undefined : sender
        const { pending } = yield* chain.collectorNonce(chainId, undefined, asSender)
        for (let nonce = pending; nonce < below; nonce++) {
          const recorded = yield* store.transfersAtNonce(chainId, sender, nonce)
          if (recorded.length === 0) {
            return `the chain expects nonce ${nonce}, which has no recorded transaction (the node may be behind, or another sender used the key)`
          }
          const states = yield* Effect.forEach(recorded, (r) =>
            chain.transactionState(chainId, r.transfer.hash)
          )
          if (states.some((s) => s._tag !== "Unknown")) continue
          // The newest of a nonce pays the most: replacements only ever raise the fee.
          const { transfer, job } = recorded[recorded.length - 1]!
          if (yield* executable(job, transfer, head)) {
            yield* Effect.logWarning("chain nonce gap: sending the recorded transaction again", {
              nonce,
              txHash: transfer.hash,
              ownerJobId: job.id
            })
            yield* chain.broadcast(chainId, transfer.raw)
            continue
          }
          if (job.state === "active") {
            return `nonce ${nonce} waits for its job ${job.id} to replace its expired transaction`
          }
          const replaced = yield* signRecordSend(
            { id: job.id, nonce, sender },
            network,
            "cancel",
            cancelCall(sender),
            transfer,
            (t) =>
              Effect.flatMap(store.recordReplacement(t), (recordedNow) =>
                recordedNow ? Effect.void : Effect.fail(new OwnerActive())
              )
          ).pipe(
            Effect.as(true),
            Effect.catchIf(
              (e): e is OwnerActive => e instanceof OwnerActive,
              () => Effect.succeed(false)
            )
          )
          if (!replaced) {
            return `nonce ${nonce} waits for its job ${job.id}, active again, to replace its transaction`
          }
          yield* Effect.logWarning(
            "chain nonce gap: a cancel took the nonce of an expired transfer",
            {
              nonce,
              replaces: transfer.hash,
              ownerJobId: job.id
            }
          )
        }
        return null
      })

    return { fillBelow } as const
  })
