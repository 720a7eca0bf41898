/**
 * A chain job's transactions, as the steps (CollectStep.ts, SettleStep.ts,
 * DeployStep.ts) use them: sent only once recorded, signed, on the nonce the
 * job holds (a replacement pays more on the same nonce); looked at on the
 * chain; watched until one has the network's confirmations, with dropped ones
 * sent again, stuck ones replaced and a nonce another transaction took given
 * up. Each job's transactions come from its own sender (`senderOf`: the
 * deployer for a deploy job, the collector otherwise), whose nonces are a
 * sequence of their own.
 */
import { Effect, Either } from "effect"
import type { Address } from "viem"
import {
  Chain,
  type ChainCall,
  type ChainNetwork,
  type ChainUnavailable,
  type TransactionState,
  type TransferRefused
} from "../chain/Chain.js"
import { type ChainJob, type ChainTransfer, senderOf } from "../payments/ChainJob.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { makeCollectorLedger } from "./CollectorLedger.js"
import { makeNonceGaps, type SignRecordSend } from "./NonceGaps.js"
import { again, type Held, type Step } from "./Step.js"

/** A replacement must pay at least 10 % more (geth's rule); 12.5 % clears every node's. */
const bump = (fee: bigint) => fee + fee / 8n + 1n

/**
 * The sender as the port takes it: none for the collector (the port's
 * default, which every implementation knows), the address for any other.
 */
export const portSender = (network: ChainNetwork, sender: Address): Address | undefined =>
  sender.toLowerCase() === network.collector.toLowerCase() ? undefined : sender

/**
 * The job's sender: its recorded transactions' when it has any (what they
 * were signed by is what the chain counts), else its kind's (`senderOf`).
 * A deploy job on a network without a deployer has none: a defect, as
 * DeployStep.ts fails such a payment before sending anything.
 */
export const jobSender = (
  job: Pick<ChainJob, "kind">,
  transfers: ReadonlyArray<ChainTransfer>,
  network: ChainNetwork
) =>
  Effect.suspend(() => {
    const sender = transfers[0]?.sender ?? senderOf(job.kind, network)
    return sender === undefined
      ? Effect.dieMessage(
          `${network.chainId} has no deployer to send a ${job.kind} job's transaction`
        )
      : Effect.succeed(sender)
  })

/** Sending, looking at and watching a job's transactions; one per runner, as it holds the send locks. */
export const makeTransactions = Effect.gen(function* () {
  const store = yield* ChainJobStore
  const chain = yield* Chain
  const ledger = yield* makeCollectorLedger
  const clock = yield* Effect.clock
  const now = () => new Date(clock.unsafeCurrentTimeMillis())
  // One send at a time per (network, sender) in this process, so its nonces reach the node in
  // order; the deployer's sends never wait for the collector's.
  const sendLocks = new Map<string, Effect.Semaphore>()
  const sendLock = (chainId: string, sender: Address) => {
    const key = `${chainId}/${sender.toLowerCase()}`
    let lock = sendLocks.get(key)
    if (lock === undefined) {
      lock = Effect.unsafeMakeSemaphore(1)
      sendLocks.set(key, lock)
    }
    return lock
  }

  /**
   * Signs `call` by the job's sender at the job's nonce, or else at the
   * sender's next, then `record`s it (with whatever goes in the same write),
   * then sends it: a crash in between sends it on resume. The chain is asked
   * for its nonce floor and fees first; only the signature, the record and
   * the send hold the (network, sender) lock, so sends reach the node in
   * nonce order without queueing behind each other's reads. A nonce another
   * instance took since it was read fails the record (`NonceTaken`), and
   * nothing is sent.
   */
  const signRecordSend: SignRecordSend = (job, network, purpose, call, previous, record) =>
    Effect.gen(function* () {
      const chainId = network.chainId
      const sender = job.sender
      const asSender = portSender(network, sender)
      const floor =
        job.nonce === null ? (yield* chain.collectorNonce(chainId, undefined, asSender)).pending : 0
      const quote = yield* chain.fees(chainId)
      const send = Effect.gen(function* () {
        const nonce = job.nonce ?? (yield* store.nextNonce(chainId, sender, floor))
        const fees =
          previous === undefined
            ? quote
            : {
                maxFeePerGas: max(quote.maxFeePerGas, bump(previous.maxFeePerGas)),
                maxPriorityFeePerGas: max(
                  quote.maxPriorityFeePerGas,
                  bump(previous.maxPriorityFeePerGas)
                )
              }
        // The collector's gas never spends the coin it holds for others (CollectorLedger.ts).
        if (asSender === undefined) yield* ledger.covers(network, call, fees, job.payingOut ?? 0n)
        const signed = yield* chain.sign(chainId, { ...call, ...fees, nonce }, asSender)
        const transfer: ChainTransfer = {
          hash: signed.hash,
          jobId: job.id,
          chainId,
          sender,
          nonce,
          purpose,
          to: call.to,
          data: call.data,
          gas: call.gas,
          value: call.value ?? 0n,
          ...fees,
          raw: signed.raw,
          createdAt: now()
        }
        const recorded = yield* record(transfer)
        yield* Effect.logInfo("chain transaction signed", {
          txHash: signed.hash,
          nonce,
          purpose,
          ...(asSender === undefined ? {} : { sender }),
          ...(previous === undefined ? {} : { replaces: previous.hash })
        })
        // Recorded: whatever the send answers, the next look sends it again if the node lacks it.
        yield* chain.broadcast(chainId, signed.raw).pipe(
          Effect.catchAll((e) =>
            Effect.logWarning("chain transaction not sent yet", {
              txHash: signed.hash,
              reason: e.message
            })
          )
        )
        return recorded
      })
      return yield* sendLock(chainId, sender).withPermits(1)(send)
    })

  const gaps = yield* makeNonceGaps(signRecordSend)

  /**
   * Sends the job's newest transaction again (the node lacks it). Refused
   * while the chain expects a lower nonce of its sender than its own, what is
   * missing below is filled first (NonceGaps.ts), then it is sent once more;
   * a refusal that remains is the runner's to back off from.
   */
  const sendAgain = (network: ChainNetwork, newest: ChainTransfer) =>
    Effect.gen(function* () {
      const chainId = network.chainId
      const sent = yield* Effect.either(chain.broadcast(chainId, newest.raw))
      if (Either.isRight(sent)) return again(network.pollIntervalMs)
      if (sent.left._tag !== "TransactionRejected") return yield* Effect.fail(sent.left)
      const { pending } = yield* chain.collectorNonce(
        chainId,
        undefined,
        portSender(network, newest.sender)
      )
      if (pending >= newest.nonce) return yield* Effect.fail(sent.left)
      const waiting = yield* gaps.fillBelow(network, newest.sender, newest.nonce)
      if (waiting !== null) return again(network.pollIntervalMs, waiting)
      yield* chain.broadcast(chainId, newest.raw)
      return again(network.pollIntervalMs)
    })

  /**
   * A transaction of the held job, recorded (a collect's call with the
   * payment's transaction, in one write) and sent.
   */
  const sendTransfer = (
    held: Held,
    network: ChainNetwork,
    purpose: ChainTransfer["purpose"],
    call: ChainCall,
    previous: ChainTransfer | undefined
  ) =>
    Effect.gen(function* () {
      const sender = yield* jobSender(held.job, held.transfers, network)
      const payload = held.job.payload
      const job = {
        id: held.job.id,
        nonce: held.job.nonce,
        sender,
        // A settle job's payment succeeded: its amount is counted among what the collector owes.
        payingOut: payload.kind === "settle" ? (call.value ?? 0n) : 0n
      }
      yield* signRecordSend(job, network, purpose, call, previous, (transfer) =>
        Effect.gen(function* () {
          const paid = purpose === "call" && held.job.payload.kind === "collect"
          yield* store.recordTransfer(
            held.lease,
            transfer,
            paid
              ? {
                  id: held.job.paymentId,
                  transaction: {
                    networkId: network.reference,
                    hash: transfer.hash,
                    nonce: transfer.nonce
                  },
                  at: transfer.createdAt
                }
              : undefined
          )
          held.job = { ...held.job, nonce: transfer.nonce }
          held.transfers = [...held.transfers, transfer]
        })
      )
      // Looked at once: a chain that mines on receipt has it already; others cost one call.
      return again(0)
    })

  /** The call, or the reason the token refuses it (nothing was sent): a value, not a failure. */
  const callOrRefusal = (call: Effect.Effect<ChainCall, ChainUnavailable | TransferRefused>) =>
    call.pipe(
      Effect.map((c) => ({ _tag: "Call" as const, call: c })),
      Effect.catchTag("TransferRefused", (e) =>
        Effect.succeed({ _tag: "Refused" as const, reason: e.reason })
      )
    )

  /** What the chain knows of each of the job's transactions, newest first, and the one mined. */
  const look = (held: Held, network: ChainNetwork) =>
    Effect.gen(function* () {
      const states: Array<{ transfer: ChainTransfer; state: TransactionState }> = []
      for (const transfer of [...held.transfers].reverse()) {
        states.push({
          transfer,
          state: yield* chain.transactionState(network.chainId, transfer.hash)
        })
      }
      const mined = states.find((s) => s.state._tag === "Mined")
      return {
        states,
        mined: mined as
          | { transfer: ChainTransfer; state: Extract<TransactionState, { _tag: "Mined" }> }
          | undefined
      }
    })

  /**
   * Watches the job's transactions; `decide` is called once one of them has
   * its confirmations. A call that can no longer go as it is gives its nonce
   * to what `replacement` answers (a cancel); dropped ones are sent again,
   * stuck ones replaced at a higher fee; a nonce that a transaction not of
   * this job took is given up, and the job starts over.
   */
  const watch = <E>(
    held: Held,
    network: ChainNetwork,
    decide: (
      mined: ChainTransfer,
      success: boolean,
      head: { readonly number: bigint; readonly timestamp: bigint }
    ) => Effect.Effect<Step, E>,
    /** What to send instead when the call can no longer be sent as it is (an expired authorization). */
    replacement: (head: {
      readonly timestamp: bigint
    }) => { readonly purpose: ChainTransfer["purpose"]; readonly call: ChainCall } | undefined
  ) =>
    Effect.gen(function* () {
      const chainId = network.chainId
      const head = yield* chain.head(chainId)
      const { states, mined } = yield* look(held, network)
      if (mined !== undefined) {
        const depth = head.number - mined.state.blockNumber + 1n
        if (depth < BigInt(Math.max(1, network.confirmations))) {
          return again(network.pollIntervalMs, null)
        }
        return yield* decide(mined.transfer, mined.state.success, head)
      }
      const nonce = held.job.nonce ?? 0
      // The nonce counts as used once it is as deep as the confirmations: a reorganisation
      // undoes less, so a transaction of ours cannot come back after it is given up.
      const depth = BigInt(Math.max(1, network.confirmations) - 1)
      const sender = yield* jobSender(held.job, held.transfers, network)
      const usedCount = (yield* chain.collectorNonce(
        chainId,
        head.number > depth ? head.number - depth : 0n,
        portSender(network, sender)
      )).latest
      if (usedCount > nonce && states.every((s) => s.state._tag !== "Pending")) {
        // Looked at again after the count: one of ours mined in between is not given up.
        const stillAbsent = yield* look(held, network)
        if (stillAbsent.mined === undefined) {
          yield* Effect.logWarning("chain job retry", {
            step: "nonce",
            reason: `nonce ${nonce} was used by another transaction; starting over`
          })
          yield* store.dropNonce(held.lease, now())
          held.job = { ...held.job, nonce: null }
          held.transfers = []
          return again(0)
        }
        return again(0)
      }
      const newest = held.transfers[held.transfers.length - 1]!
      const instead = replacement(head)
      const newestState = states[0]?.state
      if (instead !== undefined && newest.purpose === "call") {
        // The call would only revert now: use its nonce for a cancel instead.
        return yield* sendTransfer(held, network, instead.purpose, instead.call, newest)
      }
      if (newestState?._tag === "Unknown") {
        // Dropped by the node, or never received (a crash, an outage or a refusal before it
        // was taken), older ones pending or not: the newest pays the most at this nonce.
        return yield* sendAgain(network, newest)
      }
      if (
        newestState?._tag === "Pending" &&
        now().getTime() - newest.createdAt.getTime() >= network.stuckAfterMs
      ) {
        yield* Effect.logWarning("chain job retry", {
          step: "replace",
          txHash: newest.hash,
          reason: `stuck at nonce ${nonce}; replacing it at a higher fee`
        })
        return yield* sendTransfer(
          held,
          network,
          newest.purpose,
          { to: newest.to, data: newest.data, gas: newest.gas, value: newest.value },
          newest
        )
      }
      return again(network.pollIntervalMs)
    })

  return { signRecordSend, sendTransfer, callOrRefusal, watch } as const
})

export type Transactions = Effect.Effect.Success<typeof makeTransactions>

const max = (a: bigint, b: bigint) => (a > b ? a : b)
