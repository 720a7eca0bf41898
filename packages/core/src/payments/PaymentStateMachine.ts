/**
 * The one place that decides every payment transition (SPEC.md section 3):
 *
 *   requires_action ─▶ processing ─▶ succeeded
 *          │                └──────▶ failed
 *          ├──▶ expired     (at expiresAt)
 *          ├──▶ cancelled   (merchant or buyer)
 *          └──▶ failed      (the buyer declined)
 *
 * Final states never change. The machine is pure: it reads a payment and a
 * clock reading and answers the change to apply, which storage then applies
 * only if the stored status is still the one decided from (compare-and-set).
 */
import { Either } from "effect"
import type { ChainJobLease, NewChainJob } from "./ChainJob.js"
import type {
  Buyer,
  CancelledReason,
  ChainTransaction,
  FailureCode,
  Payment,
  PaymentFees,
  PaymentSettlement,
  PaymentStatus,
  TokenAmount
} from "./Payment.js"
import { isFinal } from "./Payment.js"

export type PaymentTransition =
  /** The wallet confirmed: the payment goes to the chain, through the durable job `collect`. */
  | {
      readonly _tag: "StartProcessing"
      readonly tokenAmount: TokenAmount
      readonly buyer: Buyer
      readonly transaction: ChainTransaction | null
      /**
       * The job that starts it: `collect`, or `deploy` for an account not
       * deployed yet (ERC-6492), which queues the collect once deployed.
       */
      readonly collect?: NewChainJob
    }
  | { readonly _tag: "Expire" }
  | { readonly _tag: "Cancel"; readonly reason: CancelledReason }
  | { readonly _tag: "Decline" }
  /** The transfer has its confirmations: fees and the amount to settle are fixed, `settle` queued. */
  | {
      readonly _tag: "Succeed"
      readonly txId: string
      readonly transaction: ChainTransaction | null
      readonly fees?: PaymentFees
      readonly settlement?: PaymentSettlement
      readonly settle?: NewChainJob
      /** The collect job that decided it, ended in the same write (fenced by its lease). */
      readonly completes?: ChainJobLease
    }
  | { readonly _tag: "Fail"; readonly failureCode: FailureCode }

/** What a transition writes; unnamed fields stay as they are. */
export interface PaymentChange {
  readonly status: PaymentStatus
  readonly at: Date
  readonly finalAt: Date | null
  readonly failureCode?: FailureCode
  readonly cancelledReason?: CancelledReason
  readonly tokenAmount?: TokenAmount
  readonly buyer?: Buyer
  readonly transaction?: ChainTransaction
  readonly txId?: string
  readonly fees?: PaymentFees
  readonly settlement?: PaymentSettlement
  /**
   * Chain work queued in the same write (the transaction that makes the
   * change), so a crash can never leave the change without its job: a
   * payment in `processing` always has its `collect` job (or the `deploy`
   * job that queues it), a succeeded one
   * its `settle` job. A job already queued for the payment and kind is kept.
   */
  readonly enqueue?: NewChainJob
  /**
   * The chain job whose work the change ends, completed in the same write
   * while its lease holds; `ChainJobLeaseLost`, and nothing written, once not.
   */
  readonly completes?: ChainJobLease
}

export type Refusal =
  /** The payment is (effectively) in a state the transition does not start from. */
  | { readonly _tag: "WrongState"; readonly status: PaymentStatus }
  /** The payment expired before the transition could happen. */
  | { readonly _tag: "Expired" }
  /** Expire asked before the payment's time. */
  | { readonly _tag: "NotDue" }

/** The status as a reader sees it: an unpaid payment past its time reads as expired at once. */
export const effectiveStatus = (
  payment: Pick<Payment, "status" | "expiresAt">,
  now: Date
): PaymentStatus =>
  payment.status === "requires_action" && now.getTime() >= payment.expiresAt.getTime()
    ? "expired"
    : payment.status

const FROM: Record<PaymentTransition["_tag"], PaymentStatus> = {
  StartProcessing: "requires_action",
  Expire: "requires_action",
  Cancel: "requires_action",
  Decline: "requires_action",
  Succeed: "processing",
  Fail: "processing"
}

/** The change `transition` makes to `payment` at `now`, or why it cannot happen. */
export const decide = (
  payment: Payment,
  transition: PaymentTransition,
  now: Date
): Either.Either<PaymentChange, Refusal> => {
  const due = now.getTime() >= payment.expiresAt.getTime()
  if (payment.status !== FROM[transition._tag]) {
    return Either.left({ _tag: "WrongState", status: effectiveStatus(payment, now) })
  }
  const final = (status: PaymentStatus, fields: Partial<PaymentChange> = {}): PaymentChange => ({
    status,
    at: now,
    finalAt: isFinal(status) ? now : null,
    ...fields
  })
  switch (transition._tag) {
    case "Expire":
      return due ? Either.right(final("expired")) : Either.left({ _tag: "NotDue" })
    case "StartProcessing":
      return due
        ? Either.left({ _tag: "Expired" })
        : Either.right(
            final("processing", {
              tokenAmount: transition.tokenAmount,
              buyer: transition.buyer,
              ...(transition.transaction ? { transaction: transition.transaction } : {}),
              ...(transition.collect ? { enqueue: transition.collect } : {})
            })
          )
    case "Cancel":
      return due
        ? Either.left({ _tag: "WrongState", status: "expired" })
        : Either.right(final("cancelled", { cancelledReason: transition.reason }))
    case "Decline":
      return due
        ? Either.left({ _tag: "WrongState", status: "expired" })
        : Either.right(final("failed", { failureCode: "declined_user" }))
    case "Succeed":
      return Either.right(
        final("succeeded", {
          txId: transition.txId,
          ...(transition.transaction ? { transaction: transition.transaction } : {}),
          ...(transition.fees ? { fees: transition.fees } : {}),
          ...(transition.settlement ? { settlement: transition.settlement } : {}),
          ...(transition.settle ? { enqueue: transition.settle } : {}),
          ...(transition.completes ? { completes: transition.completes } : {})
        })
      )
    case "Fail":
      return Either.right(final("failed", { failureCode: transition.failureCode }))
  }
}

/** The payment as it is after `change`: what every store must write. */
export const applyChange = (payment: Payment, change: PaymentChange): Payment => ({
  ...payment,
  status: change.status,
  updatedAt: change.at,
  finalAt: change.finalAt ?? payment.finalAt,
  failureCode: change.failureCode ?? payment.failureCode,
  cancelledReason: change.cancelledReason ?? payment.cancelledReason,
  tokenAmount: change.tokenAmount ?? payment.tokenAmount,
  buyer: change.buyer ?? payment.buyer,
  transaction: change.transaction ?? payment.transaction,
  txId: change.txId ?? payment.txId,
  fees: change.fees ?? payment.fees,
  settlement: change.settlement ?? payment.settlement
})
