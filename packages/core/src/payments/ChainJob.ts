/**
 * Durable chain work: every step that touches the chain is a persisted job,
 * claimed under a lease (so it runs once with many instances and is taken
 * over when an instance dies), and every transaction it sends is recorded,
 * signed, before it is sent (so a retry, a timeout or a restart sends the same
 * transaction again, never a second one).
 *
 * - `collect`: the buyer's signed EIP-3009 authorization, submitted by the
 *   network's collector and watched until it has its confirmations; the
 *   payment then succeeds (or fails) and a `settle` job is queued with it.
 * - `settle`: the amount paid less fees, sent from the collector to the
 *   merchant's settlement destination for the asset, watched the same way.
 * - `deploy`: a buyer's account not deployed yet (ERC-6492), deployed by its
 *   factory call, sent by the network's deployer (never the collector, as
 *   the factory and its calldata are the buyer's); once the account has
 *   code, the payment's `collect` job is queued with the same signature.
 *
 * A job holds at most one nonce of its sender (`senderOf`) at a time. Every
 * nonce handed out is used by one of the job's recorded transactions (the
 * call, a replacement at a higher fee, or a zero-value cancel when the call
 * can no longer be sent), so a job never leaves a gap that would hold up the
 * collector's later transactions.
 */
import { Schema } from "effect"
import type { Address, Hex } from "viem"
import type { Caip2, Caip10, Caip19 } from "../shared/Caip.js"
import { makeIdBody, randomBase62 } from "../shared/Ids.js"
import type { PaymentId } from "./Payment.js"

/** `cjob_` and the engine's id body. */
export type ChainJobId = string & { readonly ChainJobId: unique symbol }

export type ChainJobKind = "collect" | "settle" | "deploy"

export interface CollectPayload {
  readonly kind: "collect"
  /** The option confirmed: its authorization is what was signed. */
  readonly optionId: string
  readonly signature: Hex
  /**
   * A Permit2 option's approvals, as the buyer's wallet sent them (their
   * hashes): the transfer is sent once they are mined. Absent: none.
   */
  readonly approvals?: ReadonlyArray<Hex> | undefined
  /**
   * A native option's payment: the transfer the buyer's wallet sent (its
   * hash, sender and nonce as the network had them at the confirm), watched
   * instead of sending anything. `signature` is then `0x`. Claimed by one
   * payment only: the stores refuse a second job naming the same hash on the
   * same network (`TransactionClaimed`).
   */
  readonly paid?: BuyerTransfer | undefined
}

/** A transfer the buyer sent (a native option's), as the collect job watches it. */
export interface BuyerTransfer {
  readonly hash: Hex
  readonly from: Address
  readonly nonce: number
}

export interface SettlePayload {
  readonly kind: "settle"
  readonly asset: Caip19
  /** The amount to send, in the token's minor units (the payment's settlement amount). */
  readonly amount: bigint
  /**
   * An operator's `pay payments settle`: sent even while the merchant is not
   * active (SettleStep.ts holds the others).
   */
  readonly release?: true | undefined
  /**
   * An operator's override of where the settlement goes (`pay payments
   * settle --destination`, audited), in place of the destination in force
   * when the payment succeeded.
   */
  readonly destination?: Caip10 | undefined
}

export interface DeployPayload {
  readonly kind: "deploy"
  /** The option confirmed: its authorization's `from` is the account to deploy. */
  readonly optionId: string
  /** The whole ERC-6492 signature: its factory and calldata deploy the account. */
  readonly signature: Hex
  /** As a collect's: handed on to the collect job queued once the account is deployed. */
  readonly approvals?: ReadonlyArray<Hex> | undefined
}

export type ChainJobPayload = CollectPayload | SettlePayload | DeployPayload

/**
 * Who sends a job's transactions: the network's deployer for a deploy job,
 * the collector for the others. Undefined when the network has no deployer
 * (such a job cannot send anything).
 */
export const senderOf = (
  kind: ChainJobKind,
  network: { readonly collector: Address; readonly deployer?: Address | undefined }
): Address | undefined => (kind === "deploy" ? network.deployer : network.collector)

/** The payload as stores keep it (JSON): the settle amount as a decimal string, exact past 2^53. */
export const payloadToJson = (payload: ChainJobPayload): string =>
  JSON.stringify(
    payload.kind === "settle"
      ? {
          kind: "settle",
          asset: payload.asset,
          amount: payload.amount.toString(),
          ...(payload.release === true ? { release: true } : {}),
          ...(payload.destination === undefined ? {} : { destination: payload.destination })
        }
      : {
          kind: payload.kind,
          optionId: payload.optionId,
          signature: payload.signature,
          ...(payload.approvals === undefined || payload.approvals.length === 0
            ? {}
            : { approvals: payload.approvals }),
          ...(payload.kind === "collect" && payload.paid !== undefined
            ? { paid: payload.paid }
            : {})
        }
  )

/** A stored payload back: its JSON text, or the object a JSON column gives. */
export const payloadFromJson = (
  stored: string | Readonly<Record<string, unknown>>
): ChainJobPayload => {
  const p = (typeof stored === "string" ? JSON.parse(stored) : stored) as Record<string, unknown>
  return p.kind === "settle"
    ? {
        kind: "settle",
        asset: p.asset as Caip19,
        amount: BigInt(p.amount as string),
        ...(p.release === true ? { release: true as const } : {}),
        ...(typeof p.destination === "string" ? { destination: p.destination as Caip10 } : {})
      }
    : {
        kind: p.kind === "deploy" ? "deploy" : "collect",
        optionId: p.optionId as string,
        signature: p.signature as Hex,
        ...(Array.isArray(p.approvals) ? { approvals: p.approvals as ReadonlyArray<Hex> } : {}),
        ...(p.paid !== undefined && p.paid !== null ? { paid: p.paid as BuyerTransfer } : {})
      }
}

/** A job as it is queued (with the payment change that starts it). */
export interface NewChainJob {
  readonly id: ChainJobId
  readonly paymentId: PaymentId
  readonly chainId: Caip2
  readonly payload: ChainJobPayload
  readonly runAt: Date
  readonly createdAt: Date
  /**
   * Queued already held by the instance that queues it, which runs it at once:
   * no claim to write, and with its first transaction recorded in the same
   * write, nothing more to write before sending it.
   */
  readonly held?: HeldStart
}

/** How a job is queued held (`NewChainJob.held`). */
export interface HeldStart {
  readonly lease: ChainJobLease
  readonly leaseUntil: Date
  /** A settle job's destination, fixed in the same write. */
  readonly destination?: Caip10
  /**
   * The job's first transaction, signed: recorded in the same write, on a
   * nonce taken from the sender's sequence in it (`NonceTaken` when the
   * sequence has passed that nonce, and nothing is written).
   */
  readonly transfer?: ChainTransfer
}

export const newChainJobId = (at: Date) => `cjob_${makeIdBody(at.getTime())}` as ChainJobId

/** A job to queue with the payment change that starts it. */
export const newChainJob = (
  paymentId: PaymentId,
  chainId: Caip2,
  payload: ChainJobPayload,
  at: Date,
  id: ChainJobId = newChainJobId(at)
): NewChainJob => ({
  id,
  paymentId,
  chainId,
  payload,
  runAt: at,
  createdAt: at
})

/** A job as stored once queued: active, due at its `runAt`, nothing done yet. */
export const queuedJob = (job: NewChainJob): ChainJob => ({
  id: job.id,
  paymentId: job.paymentId,
  chainId: job.chainId,
  payload: job.payload,
  runAt: job.runAt,
  createdAt: job.createdAt,
  kind: job.payload.kind,
  state: "active",
  nonce: null,
  destination: null,
  attempts: 0,
  lastError: null,
  ...NOT_FAILING,
  updatedAt: job.createdAt
})

/** A new lease on the job, until `leaseMs` after `at`: to queue it held. */
export const heldStart = (jobId: ChainJobId, at: Date, leaseMs: number) => ({
  lease: { jobId, token: randomBase62(24) },
  leaseUntil: new Date(at.getTime() + leaseMs)
})

/**
 * The job as it is once queued held (`NewChainJob.held`): what its holder
 * runs, as a claim would have answered it.
 */
export const heldJob = (job: NewChainJob & { readonly held: HeldStart }): ClaimedJob => ({
  job: {
    ...queuedJob(job),
    nonce: job.held.transfer?.nonce ?? null,
    destination: job.held.destination ?? null,
    attempts: 1
  },
  lease: job.held.lease,
  transfers: job.held.transfer === undefined ? [] : [job.held.transfer]
})

export interface ChainJob extends NewChainJob {
  readonly kind: ChainJobKind
  /** `active` until its work is over, whatever the outcome; `done` after. */
  readonly state: "active" | "done"
  /** The nonce of its sender (`senderOf`) the job holds, once it has one. */
  readonly nonce: number | null
  /** The settlement destination, fixed when the first transfer is signed (settle only). */
  readonly destination: Caip10 | null
  /** Steps run so far (every claim counts one). */
  readonly attempts: number
  /** Why the last step could not finish, for operators. */
  readonly lastError: string | null
  /** Steps in a row that could not finish (ChainWork.ts backs off by it); 0 once one does. */
  readonly failures: number
  /**
   * When the first of those failed: how long the work has been held up,
   * which the oldest-due gauge measures from. Null while nothing fails.
   */
  readonly failingSince: Date | null
  /** When the job was marked stuck (failing past the configured bound); null otherwise. */
  readonly stuckSince: Date | null
  readonly updatedAt: Date
}

/** A job's failing steps, as a release records them (ChainWork.ts's back-off). */
export type JobFailing = Pick<ChainJob, "failures" | "failingSince" | "stuckSince">

/** Nothing failing: what a step that goes through leaves. */
export const NOT_FAILING: JobFailing = { failures: 0, failingSince: null, stuckSince: null }

/**
 * One signed transaction of a job. Replacements share the nonce (a higher
 * fee, or a cancel); at most one transaction of a nonce can ever be mined.
 */
export interface ChainTransfer {
  readonly hash: Hex
  readonly jobId: ChainJobId
  readonly chainId: Caip2
  readonly sender: Address
  readonly nonce: number
  /** `call`: the job's own call; `cancel`: a zero-value self-transfer that frees the nonce. */
  readonly purpose: "call" | "cancel"
  readonly to: Address
  readonly data: Hex
  readonly gas: bigint
  /** The coin it sends, in wei (a native settlement's amount); 0 for a contract call. */
  readonly value: bigint
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
  /** The signed transaction, sent again as it is whenever the node has lost it. */
  readonly raw: Hex
  readonly createdAt: Date
}

/** A job claimed by this process, with the token that fences its writes. */
export interface ClaimedJob {
  readonly job: ChainJob
  readonly lease: ChainJobLease
  /** The transactions recorded for the job's current nonce, oldest first. */
  readonly transfers: ReadonlyArray<ChainTransfer>
}

export interface ChainJobLease {
  readonly jobId: ChainJobId
  readonly token: string
}

/** The job's lease ran out and another holder took it: stop, change nothing. */
export class ChainJobLeaseLost extends Schema.TaggedError<ChainJobLeaseLost>()(
  "ChainJobLeaseLost",
  { jobId: Schema.String }
) {}

/**
 * The nonce a transaction was signed at is no longer the sender's next: another
 * instance took it between the read (`nextNonce`) and the write. Nothing was
 * written; sign again at the nonce the sequence gives now.
 */
/**
 * A native option's confirm named a transfer another payment has claimed
 * already: the job is not queued, and nothing of the confirm is written.
 */
export class TransactionClaimed extends Schema.TaggedError<TransactionClaimed>()(
  "TransactionClaimed",
  { chainId: Schema.String, hash: Schema.String }
) {}

export class NonceTaken extends Schema.TaggedError<NonceTaken>()("NonceTaken", {
  jobId: Schema.String,
  nonce: Schema.Number
}) {}
