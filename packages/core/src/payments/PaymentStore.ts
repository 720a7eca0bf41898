/**
 * The storage port for payments and their refunds. Transitions are
 * compare-and-set: a change applies only while the stored status is still
 * the one it was decided from, so two racing requests cannot both win.
 */
import { Context, type Effect, type Option } from "effect"
import type { Outbox } from "../events/Event.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { PartnerId } from "../identity/Partner.js"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import type { ChainJobLeaseLost, NonceTaken, TransactionClaimed } from "./ChainJob.js"
import type {
  Payment,
  PaymentId,
  PaymentStatus,
  PaymentStatusRecord,
  Refund,
  RefundExists
} from "./Payment.js"
import type { PaymentChange } from "./PaymentStateMachine.js"

/** Which payments a listing or its statistics cover. Absent fields do not filter. */
export interface PaymentFilter {
  readonly partnerId: PartnerId
  readonly merchantIds?: ReadonlyArray<string> | undefined
  /** Matched against the effective status: an unpaid payment past its time is expired. */
  readonly statuses?: ReadonlyArray<PaymentStatus> | undefined
  /** Creation time, inclusive. */
  readonly from?: Date | undefined
  /** Creation time, exclusive. */
  readonly before?: Date | undefined
  /** The token paid (or asked for) is one of these. */
  readonly assets?: ReadonlyArray<Caip19> | undefined
  /** The token's chain is one of these. */
  readonly networks?: ReadonlyArray<Caip2> | undefined
  /** Case-insensitive substring of the reference id. */
  readonly referenceId?: string | undefined
  /** The clock reading that decides effective statuses. */
  readonly now: Date
}

export type PaymentSortBy = "date" | "amount"
export type SortDirection = "asc" | "desc"

/** Where a page starts: after the row with this sort key and id. */
export interface PaymentCursor {
  readonly sortBy: PaymentSortBy
  readonly direction: SortDirection
  /** Creation time in ms for `date`; the amount's minor units for `amount`. */
  readonly key: string
  readonly id: PaymentId
}

export interface PaymentPageQuery {
  readonly filter: PaymentFilter
  readonly sortBy: PaymentSortBy
  readonly direction: SortDirection
  readonly after?: PaymentCursor | undefined
  readonly limit: number
}

export interface PaymentStats {
  /** Exact sums of succeeded payments' requested amounts, per unit (`iso4217/USD`, `caip19/…`). */
  readonly revenue: ReadonlyArray<{ readonly unit: string; readonly total: bigint }>
  /** Succeeded payments. */
  readonly transactions: number
  /** Distinct buyer accounts among succeeded payments. */
  readonly customers: number
}

/** The sort key of a payment, as carried in cursors. */
export const sortKeyOf = (payment: Payment, sortBy: PaymentSortBy): string =>
  sortBy === "date" ? String(payment.createdAt.getTime()) : payment.amount.value.toString()

export class PaymentStore extends Context.Tag("@pay/core/PaymentStore")<
  PaymentStore,
  {
    readonly insert: (payment: Payment, completion?: IdempotencyCompletion) => Effect.Effect<void>
    readonly find: (id: PaymentId) => Effect.Effect<Option.Option<Payment>>
    /** The fields a status read needs, and nothing more: the hottest read of all. */
    readonly findStatus: (id: PaymentId) => Effect.Effect<Option.Option<PaymentStatusRecord>>
    /**
     * `findStatus` without an effect: on the spot from a store that reads
     * synchronously (SQLite), or one query's promise (PostgreSQL's pool). It
     * lets the status route answer without a fiber; a store may leave it out.
     * Never called inside a transaction.
     */
    readonly findStatusNow?:
      | ((
          id: PaymentId
        ) => Option.Option<PaymentStatusRecord> | Promise<Option.Option<PaymentStatusRecord>>)
      | undefined
    /**
     * Applies `change` only while the stored status is `from`; None when it no
     * longer is. The completion, the outbox's events and the change's chain
     * work (a job queued, held or not; the job it ends) go in the same write;
     * when the chain work cannot be written (its lease lost, its nonce taken)
     * nothing is.
     */
    readonly transition: (
      id: PaymentId,
      from: PaymentStatus,
      change: PaymentChange,
      completion?: IdempotencyCompletion,
      outbox?: Outbox<Payment>
    ) => Effect.Effect<Option.Option<Payment>, ChainJobLeaseLost | NonceTaken | TransactionClaimed>
    /**
     * Up to `limit` unpaid payments whose time has come, soonest first: the
     * sweep expires each through `transition`, so each expiry is written with
     * its event, and of instances sweeping at once exactly one expires it.
     */
    readonly dueForExpiry: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<PaymentId>>
    /** One refund per payment, enforced by the database. */
    readonly addRefund: (
      id: PaymentId,
      refund: Refund,
      completion?: IdempotencyCompletion,
      outbox?: Outbox<Refund>
    ) => Effect.Effect<void, RefundExists>
    readonly list: (query: PaymentPageQuery) => Effect.Effect<ReadonlyArray<Payment>>
    readonly stats: (filter: PaymentFilter) => Effect.Effect<PaymentStats>
  }
>() {}
