/**
 * The durable chain work's runner (ChainJob.ts says what a job is). Each
 * instance claims due jobs under a lease and takes each one step at a time:
 * every step reads what is recorded and what the chain says now, does one
 * thing (record and send a transaction, send it again, replace it, or decide
 * the payment) and says when to look again. Nothing is kept only in memory,
 * so a step interrupted anywhere, by a crash, a timeout or a lost lease, is
 * taken again from the records by whichever instance claims the job next.
 *
 * A collected payment succeeds only when its transfer has the network's
 * confirmations, counted against the chain's head at each look; a receipt
 * that disappears meanwhile (a reorganisation) simply sends the job back to
 * watching, as the payment never left `processing`.
 */
import { Effect, FiberSet, Option, Queue } from "effect"
import type { Address } from "viem"
import { PayConfig } from "../Config.js"
import {
  Chain,
  type ChainCall,
  type ChainNetwork,
  type ChainUnavailable,
  networkOf,
  type TransactionState,
  type TransferRefused,
  tokenOf
} from "../chain/Chain.js"
import { computeFees, feeRuleFor } from "../fees/Fees.js"
import { GatewayStore, type OptionId } from "../gateway/PaymentOption.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { Payments } from "../payments/Payments.js"
import { SettlementStore } from "../settlements/SettlementStore.js"
import { type Caip2, type Caip10, chainOfCaip19 } from "../shared/Caip.js"
import { makeIdBody } from "../shared/Ids.js"
import type {
  ChainJob,
  ChainJobId,
  ChainJobLease,
  ChainJobPayload,
  ChainTransfer,
  ClaimedJob,
  NewChainJob
} from "./ChainJob.js"
import { type ChainJobLeaseLost, ChainJobStore } from "./ChainJobStore.js"
import { DEFAULT_CHAIN_WORK } from "./ChainWorkConfig.js"

/** A job waiting at most this long between steps keeps its lease and waits in memory. */
const HOLD_MS = 2_000
/** A job is let go after this long of holding, so others get their turn. */
const MAX_HOLD_MS = 60_000
/** The wait after a failure the network or the node caused. */
const RETRY_MS = 2_000
/** A zero-value transfer to oneself: the cheapest transaction that uses a nonce. */
const CANCEL_GAS = 21_000n
/** A replacement must pay at least 10 % more (geth's rule); 12.5 % clears every node's. */
const bump = (fee: bigint) => fee + fee / 8n + 1n

type Step =
  /** The job's work is over: complete it. */
  | { readonly _tag: "Done" }
  /** The step completed the job itself (with the payment's settlement, in one write). */
  | { readonly _tag: "Completed" }
  | { readonly _tag: "Again"; readonly afterMs: number; readonly note: string | null }

const done: Step = { _tag: "Done" }
const completed: Step = { _tag: "Completed" }
const again = (afterMs: number, note: string | null = null): Step => ({
  _tag: "Again",
  afterMs,
  note
})

/** What a job's steps know between two looks: read from the claim, kept up to date as they write. */
interface Held {
  readonly lease: ChainJobLease
  job: ChainJob
  transfers: Array<ChainTransfer>
}

const addressOf = (account: Caip10): Address =>
  account.slice(account.lastIndexOf(":") + 1) as Address

export const newChainJobId = (at: Date) => `cjob_${makeIdBody(at.getTime())}` as ChainJobId

/** A job to queue with the payment change that starts it. */
export const newChainJob = (
  paymentId: PaymentId,
  chainId: Caip2,
  payload: ChainJobPayload,
  at: Date
): NewChainJob => ({
  id: newChainJobId(at),
  paymentId,
  chainId,
  payload,
  runAt: at,
  createdAt: at
})

export class ChainWork extends Effect.Service<ChainWork>()("@pay/core/ChainWork", {
  scoped: Effect.gen(function* () {
    const store = yield* ChainJobStore
    const chain = yield* Chain
    const payments = yield* Payments
    const options = yield* GatewayStore
    const settlements = yield* SettlementStore
    const config = yield* PayConfig
    const settings = { ...DEFAULT_CHAIN_WORK, ...config.chainWork }
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())
    const wakeUps = yield* Queue.sliding<void>(1)
    /** Tells the loop there is work now (a job was just queued). */
    const wake = Queue.offer(wakeUps, undefined).pipe(Effect.asVoid)
    const running = yield* FiberSet.make()
    let busy = 0
    // One send at a time per network in this process, so its nonces reach the node in order.
    const sendLocks = new Map<string, Effect.Semaphore>()
    for (const network of chain.networks) {
      sendLocks.set(network.chainId, yield* Effect.makeSemaphore(1))
    }

    /**
     * Records the transaction, signed, then sends it: a crash in between sends
     * it on resume. The chain is asked for its nonce floor and fees first;
     * only the nonce, the signature, the record and the send hold the
     * network's lock, so sends reach the node in nonce order without queueing
     * behind each other's reads.
     */
    const sendTransfer = (
      held: Held,
      network: ChainNetwork,
      purpose: ChainTransfer["purpose"],
      call: ChainCall,
      previous: ChainTransfer | undefined
    ) =>
      Effect.gen(function* () {
        const chainId = network.chainId
        const floor = held.job.nonce === null ? (yield* chain.collectorNonce(chainId)).pending : 0
        const quote = yield* chain.fees(chainId)
        const send = Effect.gen(function* () {
          const nonce =
            held.job.nonce ??
            (yield* store.assignNonce(held.lease, chainId, network.collector, floor, now()))
          held.job = { ...held.job, nonce }
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
          const signed = yield* chain.sign(chainId, { ...call, ...fees, nonce })
          const transfer: ChainTransfer = {
            hash: signed.hash,
            jobId: held.job.id,
            chainId,
            sender: network.collector,
            nonce,
            purpose,
            to: call.to,
            data: call.data,
            gas: call.gas,
            ...fees,
            raw: signed.raw,
            createdAt: now()
          }
          yield* store.recordTransfer(held.lease, transfer)
          held.transfers = [...held.transfers, transfer]
          if (purpose === "call" && held.job.payload.kind === "collect") {
            yield* payments
              .transition(held.job.paymentId, {
                _tag: "RecordTransaction",
                transaction: { networkId: network.reference, hash: signed.hash, nonce }
              })
              .pipe(Effect.catchTags({ InvalidState: () => Effect.void }))
          }
          yield* chain.broadcast(chainId, signed.raw)
        })
        yield* sendLocks.get(chainId)?.withPermits(1)(send) ?? send
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

    /** A zero-value transfer to the collector at the job's nonce, so no gap is left behind. */
    const cancelCall = (network: ChainNetwork): ChainCall => ({
      to: network.collector,
      data: "0x",
      gas: CANCEL_GAS
    })

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
        const usedCount = (yield* chain.collectorNonce(
          chainId,
          head.number > depth ? head.number - depth : 0n
        )).latest
        if (usedCount > nonce && states.every((s) => s.state._tag !== "Pending")) {
          // Looked at again after the count: one of ours mined in between is not given up.
          const stillAbsent = yield* look(held, network)
          if (stillAbsent.mined === undefined) {
            yield* Effect.logWarning(
              `chain job ${held.job.id}: nonce ${nonce} was used by another transaction; starting over`
            )
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
          yield* chain.broadcast(chainId, newest.raw)
          return again(network.pollIntervalMs)
        }
        if (
          newestState?._tag === "Pending" &&
          now().getTime() - newest.createdAt.getTime() >= network.stuckAfterMs
        ) {
          yield* Effect.logInfo(
            `chain job ${held.job.id}: ${newest.hash} stuck at nonce ${nonce}; replacing it at a higher fee`
          )
          return yield* sendTransfer(
            held,
            network,
            newest.purpose,
            { to: newest.to, data: newest.data, gas: newest.gas },
            newest
          )
        }
        return again(network.pollIntervalMs)
      })

    /** The payment's collection: its authorization sent by the collector, watched to its outcome. */
    const collectStep = (held: Held, network: ChainNetwork, payment: Payment) =>
      Effect.gen(function* () {
        const payload = held.job.payload
        if (payload.kind !== "collect") return done
        const found = yield* options.findOption(payload.optionId as OptionId)
        if (Option.isNone(found)) {
          yield* Effect.logError(`chain job ${held.job.id}: option ${payload.optionId} is gone`)
          yield* fail(payment.id, "transaction_dropped")
          return done
        }
        const option = found.value
        const auth = option.authorization
        const expiredAt = (head: { readonly timestamp: bigint }) =>
          head.timestamp >= auth.validBefore
        const failureFor = (head: { readonly timestamp: bigint }) =>
          expiredAt(head) ? ("authorization_expired" as const) : ("transaction_reverted" as const)

        if (held.transfers.length === 0) {
          const call = yield* callOrRefusal(
            chain.receiveCall(option.asset, auth, payload.signature)
          )
          if (call._tag === "Call")
            return yield* sendTransfer(held, network, "call", call.call, undefined)
          const head = yield* chain.head(network.chainId)
          yield* Effect.logWarning(
            `payment ${payment.id}: the token refuses the transfer (${call.reason})`
          )
          // A nonce already handed to this job is used all the same, by a cancel.
          if (held.job.nonce !== null) {
            return yield* sendTransfer(held, network, "cancel", cancelCall(network), undefined)
          }
          yield* fail(payment.id, failureFor(head))
          return done
        }

        return yield* watch(
          held,
          network,
          (mined, success, head) =>
            Effect.gen(function* () {
              if (mined.purpose === "call" && success) {
                yield* succeed(payment, network, mined)
                return done
              }
              // Reverted, or the nonce went to the cancel: nothing moved.
              yield* fail(payment.id, failureFor(head))
              return done
            }),
          (head) => (expiredAt(head) ? { purpose: "cancel", call: cancelCall(network) } : undefined)
        )
      })

    const fail = (paymentId: PaymentId, failureCode: Payment["failureCode"] & string) =>
      payments
        .transition(paymentId, { _tag: "Fail", failureCode })
        .pipe(Effect.catchTags({ InvalidState: () => Effect.void }), Effect.asVoid)

    /** Success, with the fees and the amount to settle, and the settle job queued in the same write. */
    const succeed = (payment: Payment, network: ChainNetwork, mined: ChainTransfer) =>
      Effect.gen(function* () {
        const paid = payment.tokenAmount
        if (paid === null)
          return yield* Effect.dieMessage(`payment ${payment.id} has no token amount`)
        const token = tokenOf(chain.networks, paid.asset)?.token
        const fees = computeFees(
          feeRuleFor(config.fees, payment.partnerId, payment.merchantId),
          paid.value,
          token?.decimals ?? 0
        )
        const at = now()
        const amount = paid.value - fees.total
        yield* payments
          .transition(payment.id, {
            _tag: "Succeed",
            txId: mined.hash,
            transaction: { networkId: network.reference, hash: mined.hash, nonce: mined.nonce },
            fees,
            settlement: {
              amount,
              status: "pending",
              destination: null,
              txHash: null,
              settledAt: null
            },
            settle: newChainJob(
              payment.id,
              network.chainId,
              { kind: "settle", asset: paid.asset, amount },
              at
            )
          })
          .pipe(Effect.catchTags({ InvalidState: () => Effect.void }))
        yield* wake
      })

    /** The merchant's money: the amount less fees, from the collector to its destination. */
    const settleStep = (held: Held, network: ChainNetwork, payment: Payment) =>
      Effect.gen(function* () {
        const payload = held.job.payload
        if (payload.kind !== "settle" || payment.settlement === null) return done
        if (payment.settlement.status === "settled") return done
        const settled = (txHash: string | null, destination: Caip10) =>
          Effect.as(
            store.complete(held.lease, now(), {
              paymentId: payment.id,
              settlement: {
                ...payment.settlement!,
                status: "settled",
                destination,
                txHash,
                settledAt: now()
              }
            }),
            completed
          )

        if (held.transfers.length === 0) {
          let destination = held.job.destination
          if (destination === null) {
            const live = yield* settlements.listByMerchant(payment.merchantId)
            const match = live.find((s) => s.asset === payload.asset)
            if (match === undefined) {
              yield* Effect.logWarning(
                `payment ${payment.id}: merchant ${payment.merchantId} has no settlement for ${payload.asset}; the funds stay with the collector`
              )
              yield* store.complete(held.lease, now(), {
                paymentId: payment.id,
                settlement: { ...payment.settlement, status: "no_destination", destination: null }
              })
              return completed
            }
            destination = match.destination
            yield* store.setDestination(held.lease, destination, now())
            held.job = { ...held.job, destination }
          }
          if (payload.amount === 0n) return yield* settled(null, destination)
          const call = yield* callOrRefusal(
            chain.transferCall(payload.asset, addressOf(destination), payload.amount)
          )
          if (call._tag === "Refused") {
            // Never given up: the collector may be short of funds for a while.
            return again(30_000, `the token refuses the settlement transfer: ${call.reason}`)
          }
          return yield* sendTransfer(held, network, "call", call.call, undefined)
        }

        const destination = held.job.destination
        return yield* watch(
          held,
          network,
          (mined, success) =>
            Effect.gen(function* () {
              if (mined.purpose === "call" && success && destination !== null) {
                return yield* settled(mined.hash, destination)
              }
              // Reverted (or a cancel): nothing moved; a fresh transfer on a fresh nonce.
              yield* Effect.logWarning(
                `payment ${payment.id}: settlement ${mined.hash} did not move the funds; sending again`
              )
              yield* store.dropNonce(held.lease, now())
              held.job = { ...held.job, nonce: null }
              held.transfers = []
              return again(RETRY_MS, `settlement ${mined.hash} reverted`)
            }),
          () => undefined
        )
      })

    /** One look at the job. */
    const step = (held: Held) =>
      Effect.gen(function* () {
        const network = networkOf(chain.networks, held.job.chainId)
        if (network === undefined) {
          return again(60_000, `${held.job.chainId} is not a configured network`)
        }
        const payment = yield* payments.find(held.job.paymentId)
        if (held.job.payload.kind === "collect" && payment.status !== "processing") return done
        return held.job.payload.kind === "collect"
          ? yield* collectStep(held, network, payment)
          : yield* settleStep(held, network, payment)
      })

    /** Runs a claimed job, step after step, while the next look is soon; then lets it go. */
    const run = (claimed: ClaimedJob, claimedAt: number) => {
      const held: Held = {
        lease: claimed.lease,
        job: claimed.job,
        transfers: [...claimed.transfers]
      }
      const startedAt = clock.unsafeCurrentTimeMillis()
      // When the lease runs out, as this process last set it (the store's clock is ours).
      let leaseUntil = claimedAt + settings.leaseMs
      const loop: Effect.Effect<void, ChainJobLeaseLost> = Effect.gen(function* () {
        const result = yield* step(held).pipe(
          Effect.catchTags({
            ChainUnavailable: (e) => Effect.succeed(again(RETRY_MS, e.message)),
            // The node answered: soon again (a nonce ahead of one still on its way, say).
            TransactionRejected: (e) =>
              Effect.succeed(
                again(
                  networkOf(chain.networks, held.job.chainId)?.pollIntervalMs ?? RETRY_MS,
                  e.reason
                )
              ),
            PaymentNotFound: () => Effect.succeed(done)
          }),
          Effect.catchIf(
            (e): e is Exclude<typeof e, ChainJobLeaseLost> => e._tag !== "ChainJobLeaseLost",
            (e) => Effect.succeed(again(RETRY_MS, `${e._tag}`))
          ),
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError(`chain job ${held.job.id}: step failed`, defect),
              again(RETRY_MS * 5, String(defect))
            )
          )
        )
        if (result._tag === "Completed") return
        if (result._tag === "Done") {
          yield* store.complete(held.lease, now())
          return
        }
        if (result.note !== null) {
          yield* Effect.logWarning(`chain job ${held.job.id}: ${result.note}`)
        }
        const heldFor = clock.unsafeCurrentTimeMillis() - startedAt
        if (result.afterMs <= HOLD_MS && heldFor < MAX_HOLD_MS) {
          if (result.afterMs > 0) yield* Effect.sleep(result.afterMs)
          // Renewed once half of it is gone: a commit per step would cost more than the step.
          const at = clock.unsafeCurrentTimeMillis()
          if (at >= leaseUntil - settings.leaseMs / 2) {
            yield* store.renew(held.lease, new Date(at), settings.leaseMs)
            leaseUntil = at + settings.leaseMs
          }
          return yield* loop
        }
        yield* store.release(
          held.lease,
          new Date(clock.unsafeCurrentTimeMillis() + result.afterMs),
          result.note,
          now()
        )
      })
      return loop.pipe(
        Effect.catchTag("ChainJobLeaseLost", () =>
          Effect.logWarning(`chain job ${held.job.id}: lease lost to another instance`)
        ),
        // Stopping: let the job go now, so the next start (or another instance) takes it at once.
        Effect.onInterrupt(() => store.release(held.lease, now(), null, now()).pipe(Effect.ignore))
      )
    }

    /** Claims what is due and starts it; returns how many were claimed. */
    const claimAndStart = Effect.gen(function* () {
      const room = settings.concurrency - busy
      if (room <= 0) return 0
      const claimedAt = clock.unsafeCurrentTimeMillis()
      const claimed = yield* store.claimDue(new Date(claimedAt), room, settings.leaseMs)
      for (const job of claimed) {
        busy++
        yield* FiberSet.run(
          running,
          Effect.ensuring(
            run(job, claimedAt),
            Effect.sync(() => {
              busy--
            })
          )
        )
      }
      return claimed.length
    })

    /** Claims and runs due jobs until none is due or running: for tests. */
    const drain = Effect.gen(function* () {
      while ((yield* claimAndStart) > 0 || busy > 0) yield* Effect.sleep(10)
    })

    /** The background loop, for as long as the engine runs. */
    const runForever = Effect.forever(
      Effect.gen(function* () {
        yield* claimAndStart.pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("chain work: claiming failed", cause))
        )
        yield* Effect.race(Queue.take(wakeUps), Effect.sleep(settings.pollMs))
      })
    )

    /**
     * Settles again a succeeded payment whose funds stayed with the engine
     * (no settlement destination for the asset at the time): the operator's
     * move once the merchant has one. False when there is nothing to settle.
     */
    const settleAgain = (paymentId: PaymentId) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(paymentId)
        if (
          payment.status !== "succeeded" ||
          payment.settlement?.status !== "no_destination" ||
          payment.tokenAmount === null
        ) {
          return false
        }
        const queued = yield* store.requeue(
          newChainJob(
            payment.id,
            chainOfCaip19(payment.tokenAmount.asset),
            {
              kind: "settle",
              asset: payment.tokenAmount.asset,
              amount: payment.settlement.amount
            },
            now()
          ),
          "settle"
        )
        yield* wake
        return queued
      })

    return {
      wake,
      runForever,
      drain,
      settleAgain
    } as const
  })
}) {}

const max = (a: bigint, b: bigint) => (a > b ? a : b)
