/**
 * Payments: a request for funds against one merchant, in fiat or in a token,
 * with the state it is in and what the wallet and the chain add to it later.
 */
import { Schema } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import type { Amount } from "../shared/Amount.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { prefixedId } from "../shared/Ids.js"

export const PaymentId = prefixedId("pay", "PaymentId")
export type PaymentId = typeof PaymentId.Type

export const RefundId = prefixedId("rfnd", "RefundId")
export type RefundId = typeof RefundId.Type

export const PAYMENT_STATUSES = [
  "requires_action",
  "processing",
  "succeeded",
  "failed",
  "expired",
  "cancelled"
] as const
export const PaymentStatus = Schema.Literal(...PAYMENT_STATUSES)
export type PaymentStatus = typeof PaymentStatus.Type

export const FINAL_STATUSES: ReadonlySet<PaymentStatus> = new Set([
  "succeeded",
  "failed",
  "expired",
  "cancelled"
])
export const isFinal = (status: PaymentStatus): boolean => FINAL_STATUSES.has(status)

/**
 * Why a payment failed. `declined_user` is SPEC.md's and the reference's, but no
 * route produces it today (a wallet's cancel is `cancelled`, `cancelled_by_user`,
 * as WIRE.md says); the others are the engine's.
 */
export const FAILURE_CODES = [
  "declined_user",
  "transaction_reverted",
  "transaction_dropped",
  "authorization_expired",
  /**
   * The chain the payment was being collected on started afresh (a new run of
   * the sandbox chain, which keeps no state between starts): its transfer was
   * on the earlier run and can never land (chainwork/ChainInstances.ts).
   */
  "chain_reset",
  /**
   * The buyer's account was not deployed yet (ERC-6492) and its factory call
   * would revert, needs more gas than the network allows, or reverted.
   */
  "account_deployment_failed",
  /**
   * The buyer's account refused its own signature when the token asked it
   * (ERC-1271), after the confirm was accepted: an account changed since
   * (an owner removed, a delegation switched), or deployed otherwise than
   * its ERC-6492 signature said.
   */
  "signature_rejected",
  /**
   * The buyer's approval of Permit2 (the transaction it sent before
   * signing a Permit2 payment) reverted, or never reached a block before
   * the option expired: nothing was taken.
   */
  "approval_failed",
  /**
   * A native-coin payment's transfer was mined, but not as the option asked:
   * another sender, another recipient or another value. What it moved to the
   * collector is recorded as returnable funds (`pay funds returnable`).
   */
  "transaction_mismatch"
] as const
export type FailureCode = (typeof FAILURE_CODES)[number]

export type CancelledReason = "cancelled_by_merchant" | "cancelled_by_user"

export interface TokenAmount {
  readonly asset: Caip19
  readonly value: bigint
}

export interface Buyer {
  readonly account: Caip10
  readonly providerName: string | null
  readonly providerIcon: string | null
}

export interface ChainTransaction {
  /** The chain reference of the network (`8453`), as the reference shows it. */
  readonly networkId: string
  readonly hash: string
  readonly nonce: number | null
}

/**
 * The engine's fees on a succeeded payment, in minor units of the token paid
 * (`tokenAmount.asset`), as the fee schedule gave them (fees/Fees.ts).
 */
export interface PaymentFees {
  readonly fixed: bigint
  /** The percentage rate as configured, a decimal string: "0.4" is 0.4 %. */
  readonly percentage: string
  /**
   * A native-coin payment's settlement gas, in the coin: the gas its transfer
   * to the merchant may burn (limit × max fee per gas, quoted when the payment
   * was collected). Absent for a token, whose settlement gas is the
   * operator's.
   */
  readonly network?: bigint | undefined
  /** `fixed` plus the percentage part (plus `network`), never more than the amount paid. */
  readonly total: bigint
}

/**
 * Where the money is after a payment succeeds: `pending` until the transfer to
 * the merchant's destination lands (`settled`); `no_destination` when the
 * merchant has no settlement for the paid asset, and `held` while the
 * merchant is not active: in both the funds stay with the engine's collecting
 * address, until an operator settles again or (`held`) the merchant is active
 * again.
 */
export const SETTLEMENT_STATUSES = ["pending", "settled", "no_destination", "held"] as const
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number]

/**
 * The stored pair for a settlement's status: `held` is kept as `pending` with
 * a flag, since SQLite cannot widen the status column's CHECK in place
 * (migration 0022). Both stores write and read it through these two.
 */
export const settlementStatusToColumns = (
  status: SettlementStatus | null
): { readonly status: Exclude<SettlementStatus, "held"> | null; readonly held: boolean } =>
  status === "held" ? { status: "pending", held: true } : { status, held: false }

const settlementStatusFromColumns = (status: string, held: boolean): SettlementStatus =>
  held && status === "pending" ? "held" : (status as SettlementStatus)

export interface PaymentSettlement {
  /** The token amount paid less fees, in the token's minor units. */
  readonly amount: bigint
  readonly status: SettlementStatus
  /** The CAIP-10 account the amount is (being) sent to, once known. */
  readonly destination: Caip10 | null
  readonly txHash: string | null
  readonly settledAt: Date | null
}

/** Fees from their stored columns (decimal strings), null when the payment has none. */
export const feesFromColumns = (
  fixed: string | null,
  percentage: string | null,
  total: string | null,
  network: string | null = null
): PaymentFees | null =>
  fixed === null || percentage === null || total === null
    ? null
    : {
        fixed: BigInt(fixed),
        percentage,
        total: BigInt(total),
        ...(network === null ? {} : { network: BigInt(network) })
      }

/** A settlement from its stored columns, null when the payment has none. */
export const settlementFromColumns = (c: {
  readonly status: string | null
  readonly amount: string | null
  readonly destination: string | null
  readonly txHash: string | null
  readonly settledAt: Date | null
  /** The flag beside a `pending` status that makes it `held`. */
  readonly held: boolean
}): PaymentSettlement | null =>
  c.status === null || c.amount === null
    ? null
    : {
        amount: BigInt(c.amount),
        status: settlementStatusFromColumns(c.status, c.held),
        destination: c.destination as Caip10 | null,
        txHash: c.txHash,
        settledAt: c.settledAt
      }

export interface Refund {
  readonly id: RefundId
  readonly createdAt: Date
}

export interface Payment {
  readonly id: PaymentId
  readonly partnerId: PartnerId
  readonly merchantId: MerchantId
  readonly referenceId: string
  /** What the partner asked for: a fiat or a token amount. */
  readonly amount: Amount
  readonly status: PaymentStatus
  readonly failureCode: FailureCode | null
  readonly cancelledReason: CancelledReason | null
  readonly expiresAt: Date
  readonly createdAt: Date
  readonly updatedAt: Date
  /** When the payment reached its final state. */
  readonly finalAt: Date | null
  /** The reference's optional checkout configuration, stored as given. */
  readonly checkout: { readonly successUrl: string; readonly errorUrl: string } | null
  /** The token amount paid or to pay: the requested one for token payments, the option's otherwise. */
  readonly tokenAmount: TokenAmount | null
  readonly buyer: Buyer | null
  readonly transaction: ChainTransaction | null
  /** The transaction id reported in `info` once succeeded. */
  readonly txId: string | null
  readonly refund: Refund | null
  /** Set when the payment succeeds. */
  readonly fees: PaymentFees | null
  /** Set when the payment succeeds; then changed by settlement only. */
  readonly settlement: PaymentSettlement | null
  /**
   * The engine's mode when the payment was created: `false` in test mode (the
   * sandbox, or only test networks), `true` for real money. Never changes.
   * `null` for a payment stored before the mode was recorded (migration
   * 0018): it is shown in the engine's current mode (`paymentLivemode`).
   */
  readonly livemode: boolean | null
}

/**
 * What a payment's views say of its mode: the mode it was created in, or, for
 * one stored before modes were recorded, the engine's mode now.
 */
export const paymentLivemode = (p: Pick<Payment, "livemode">, engineLivemode: boolean): boolean =>
  p.livemode ?? engineLivemode

/** What a status read needs of a payment: the hot path reads only this. */
export type PaymentStatusRecord = Pick<
  Payment,
  | "id"
  | "partnerId"
  | "merchantId"
  | "status"
  | "expiresAt"
  | "failureCode"
  | "tokenAmount"
  | "txId"
>

export class PaymentNotFound extends Schema.TaggedError<PaymentNotFound>()("PaymentNotFound", {
  paymentId: Schema.String
}) {}

/** A transition the payment's state does not allow (cancel a processing payment, refund a failed one). */
export class InvalidState extends Schema.TaggedError<InvalidState>()("InvalidState", {
  message: Schema.String,
  status: PaymentStatus,
  /** Cancels answer 400 like the reference; other refusals 409 (WIRE.md). */
  kind: Schema.Literal("cancel", "other")
}) {}

/** The payment expired before the action (a confirmation) could happen. */
export class PaymentExpired extends Schema.TaggedError<PaymentExpired>()("PaymentExpired", {
  paymentId: Schema.String
}) {}

/**
 * A long-poll refused: this engine already holds as many as it may of its kind
 * (`cap`: partners' `maxHeldLongPolls`, public `maxHeldPublicLongPolls`, or
 * public ones for this payment, `maxHeldLongPollsPerPayment`); `held` is that count.
 */
export class LongPollsExhausted extends Schema.TaggedError<LongPollsExhausted>()(
  "LongPollsExhausted",
  {
    held: Schema.Number,
    cap: Schema.optionalWith(Schema.Literal("partner", "public", "payment"), {
      default: () => "partner" as const
    })
  }
) {}

export class MerchantInactive extends Schema.TaggedError<MerchantInactive>()("MerchantInactive", {
  merchantId: Schema.String,
  status: Schema.String
}) {}

export class RefundExists extends Schema.TaggedError<RefundExists>()("RefundExists", {
  paymentId: Schema.String,
  refundId: Schema.String
}) {}
