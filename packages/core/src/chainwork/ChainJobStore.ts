/**
 * The storage port of durable chain work (ChainJob.ts). A job is claimed
 * under a lease that its holder renews while it works; a lease that runs
 * out (its instance died or stalled) lets another instance claim the job.
 * Every write a job makes is fenced by its lease token: a holder whose lease
 * was taken over changes nothing (`ChainJobLeaseLost`), so two instances can
 * never both record a transaction, or a nonce, for one job.
 *
 * Jobs are queued by the payment store, in the write that changes the
 * payment (`PaymentChange.enqueue`); one job per payment and kind. A job may
 * be queued already held, with its first transaction (`HeldStart`), and a
 * payment change may end the job that made it (`PaymentChange.completes`):
 * so a wallet payment costs four writes from confirm to settled.
 */
import { Context, type Effect, type Option } from "effect"
import type { Address } from "viem"
import type { AuditEntry } from "../audit/AuditEntry.js"
import type { PayEvent } from "../events/Event.js"
import type {
  ChainJob,
  ChainJobKind,
  ChainJobLease,
  ChainJobLeaseLost,
  ChainTransfer,
  ClaimedJob,
  JobFailing,
  NewChainJob,
  NonceTaken
} from "../payments/ChainJob.js"
import type { ChainTransaction, PaymentId, PaymentSettlement } from "../payments/Payment.js"
import type { Caip2, Caip10, Caip19 } from "../shared/Caip.js"

/**
 * Coin (or a token) that reached the collector without paying for anything:
 * a native transfer mined on its payment but not as its option asked. Kept
 * for an operator to send back to `from`.
 */
export interface ReturnableFunds {
  readonly chainId: Caip2
  /** The transaction that brought them: one record each. */
  readonly txHash: `0x${string}`
  readonly paymentId: PaymentId
  readonly asset: Caip19
  readonly from: Address
  readonly value: bigint
  /** Why they pay nothing: the payment's failure code. */
  readonly reason: string
  readonly recordedAt: Date
}

export class ChainJobStore extends Context.Tag("@pay/core/ChainJobStore")<
  ChainJobStore,
  {
    /**
     * Leases up to `limit` active jobs due at `now` (run_at reached, no live
     * lease) to a new token each, until `now + leaseMs`, oldest due first.
     * Jobs another instance is claiming at the same moment are skipped, not
     * waited for. Each claim counts one attempt.
     */
    readonly claimDue: (
      now: Date,
      limit: number,
      leaseMs: number
    ) => Effect.Effect<ReadonlyArray<ClaimedJob>>
    /** Extends a held lease to `now + leaseMs`. */
    readonly renew: (
      lease: ChainJobLease,
      now: Date,
      leaseMs: number
    ) => Effect.Effect<void, ChainJobLeaseLost>
    /**
     * Lets go of the job until `runAt`, noting why it has to wait (null clears
     * the note) and its failing steps as they stand (`NOT_FAILING` clears them).
     */
    readonly release: (
      lease: ChainJobLease,
      runAt: Date,
      lastError: string | null,
      now: Date,
      failing: JobFailing
    ) => Effect.Effect<void, ChainJobLeaseLost>
    /**
     * The nonce the sender's next transaction takes: its sequence's next, first
     * raised to `chainNext` (the sender's transaction count the chain reports)
     * when it is behind it, so the sequence recovers from the chain after a
     * crash or a lost database. A read: the nonce is taken only by the write
     * that records a transaction signed at it (`recordTransfer`, or a job
     * queued held).
     */
    readonly nextNonce: (
      chainId: Caip2,
      sender: Address,
      chainNext: number
    ) => Effect.Effect<number>
    /**
     * Gives up the job's nonce, for one that a transaction not of this job
     * took: its recorded transfers can never be mined, and the next
     * `assignNonce` hands it a fresh one.
     */
    readonly dropNonce: (lease: ChainJobLease, now: Date) => Effect.Effect<void, ChainJobLeaseLost>
    /** Fixes a settle job's destination, before its first transfer is signed. */
    readonly setDestination: (
      lease: ChainJobLease,
      destination: Caip10,
      now: Date
    ) => Effect.Effect<void, ChainJobLeaseLost>
    /**
     * Records a signed transaction of the job: always before it is sent. A job
     * that holds no nonce takes the transfer's from the sender's sequence in
     * the same write, refused with `NonceTaken` when the sequence has passed
     * it; a job that holds one records transfers at that nonce only. With
     * `payment`, the payment's transaction (its hash, known before it is
     * mined) is recorded in the same write, while the payment is processing.
     */
    readonly recordTransfer: (
      lease: ChainJobLease,
      transfer: ChainTransfer,
      payment?: {
        readonly id: PaymentId
        readonly transaction: ChainTransaction
        readonly at: Date
      }
    ) => Effect.Effect<void, ChainJobLeaseLost | NonceTaken>
    /**
     * Ends the job. With `settlement`, the payment's settlement and its events
     * are written in the same transaction (a settle job's outcome), only while
     * the lease holds.
     */
    readonly complete: (
      lease: ChainJobLease,
      now: Date,
      settlement?: {
        readonly paymentId: PaymentId
        readonly settlement: PaymentSettlement
        readonly events?: ReadonlyArray<PayEvent>
      }
    ) => Effect.Effect<void, ChainJobLeaseLost>
    /**
     * Queues a job unless the payment already has an active one of its kind;
     * a `done` one is made active again, due at once, with its nonce cleared
     * (`pay payments settle`: an operator settling again). True when queued.
     */
    readonly requeue: (
      job: NewChainJob,
      kind: ChainJobKind,
      /** Written in the same transaction, only when the job is queued (an operator's override). */
      audit?: ReadonlyArray<AuditEntry>
    ) => Effect.Effect<boolean>
    /**
     * Records coin that reached the collector without paying anything (a
     * native transfer of the wrong value, say), for an operator to return.
     * Once per transaction: recording it again changes nothing.
     */
    readonly recordReturnable: (funds: ReturnableFunds) => Effect.Effect<void>
    /** Returnable funds recorded, newest first. */
    readonly returnable: (limit: number) => Effect.Effect<ReadonlyArray<ReturnableFunds>>
    /**
     * What the collector holds of `asset` for others (the ledger of
     * chainwork/CollectorLedger.ts): the settlement amounts of the asset's
     * succeeded payments not settled yet (pending, held, no destination),
     * plus its returnable funds.
     */
    readonly owedIn: (asset: Caip19) => Effect.Effect<bigint>
    /** The payment's job of a kind, if any. */
    readonly findByPayment: (
      paymentId: PaymentId,
      kind: ChainJobKind
    ) => Effect.Effect<Option.Option<ChainJob>>
    /** Every transaction recorded for a job, oldest first (all nonces). */
    readonly transfersOf: (job: ChainJob["id"]) => Effect.Effect<ReadonlyArray<ChainTransfer>>
    /**
     * Every transaction recorded at one nonce of a sender, whichever job's,
     * oldest first, each with its job: what NonceGaps.ts looks at when the
     * chain expects a lower nonce than the sequence gave.
     */
    readonly transfersAtNonce: (
      chainId: Caip2,
      sender: Address,
      nonce: number
    ) => Effect.Effect<ReadonlyArray<{ readonly transfer: ChainTransfer; readonly job: ChainJob }>>
    /**
     * Records a replacement at the nonce of a job that is over (`done`), which
     * no holder watches any more: true when recorded, false when the job is
     * active again (its holder replaces its own transactions).
     */
    readonly recordReplacement: (transfer: ChainTransfer) => Effect.Effect<boolean>
    /**
     * Records `instance` as the run of the chain the engine now works on, and
     * answers the one recorded before (none the first time). A different one
     * starts the chain afresh in the same write: every sender's nonce
     * sequence on it is forgotten (the chain's count is taken again), and so
     * are the transactions recorded on it: the same key signing the same call
     * at the same nonce makes the same bytes, so a new run's transaction can
     * have an old one's hash, which must name the new one only.
     */
    readonly swapChainInstance: (
      chainId: Caip2,
      instance: string,
      now: Date
    ) => Effect.Effect<Option.Option<{ readonly instance: string; readonly since: Date }>>
    /** The run of the chain the engine last worked on, and since when; none if never recorded. */
    readonly chainInstance: (
      chainId: Caip2
    ) => Effect.Effect<Option.Option<{ readonly instance: string; readonly since: Date }>>
    /** The chain's active jobs, whoever holds them: what a new run of the chain ends. */
    readonly activeJobsOn: (chainId: Caip2) => Effect.Effect<ReadonlyArray<ChainJob>>
    /**
     * Ends an active job whatever its lease (its holder was a run of the chain
     * that is gone), noting why; false when it was over already.
     */
    readonly endJob: (jobId: ChainJob["id"], lastError: string, now: Date) => Effect.Effect<boolean>
  }
>() {}
