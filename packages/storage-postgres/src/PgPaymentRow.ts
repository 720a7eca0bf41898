/**
 * A payment as PostgreSQL stores it, for the payment store's writes and its
 * listing and statistics queries alike: the row, how it reads back, and the
 * SELECT that joins its refund. Core's paymentFromColumns reads the columns
 * both SQL stores return alike; what is PostgreSQL's own is converted here
 * first: times are timestamptz, a Date (SQLite keeps ms integers), the
 * transaction nonce bigint, as text (there an INTEGER), the checkout jsonb,
 * parsed (there JSON text), and the mode a boolean (there 0 or 1).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import {
  type Payment,
  type PaymentColumns,
  type PaymentStatusColumns,
  type PaymentStatusRecord,
  paymentFromColumns,
  paymentStatusFromColumns
} from "@pay/core"

export interface StatusRow extends PaymentStatusColumns {
  readonly expires_at: Date
}

export interface PaymentRow extends PaymentColumns, StatusRow {
  readonly created_at: Date
  readonly updated_at: Date
  readonly final_at: Date | null
  /** jsonb comes back parsed. */
  readonly checkout: Payment["checkout"]
  /** bigint comes back as text. */
  readonly tx_nonce: string | null
  readonly settled_at: Date | null
  readonly refund_created_at: Date | null
  /** NULL for payments stored before migration 0018. */
  readonly livemode: boolean | null
  /** True when a `pending` settlement is held (migration 0022). */
  readonly settlement_held: boolean
}

export const toStatusRecord = (r: StatusRow): PaymentStatusRecord =>
  paymentStatusFromColumns(r, r.expires_at)

export const toPayment = (r: PaymentRow): Payment =>
  paymentFromColumns(r, {
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finalAt: r.final_at,
    checkout: r.checkout,
    txNonce: r.tx_nonce === null ? null : Number(r.tx_nonce),
    settledAt: r.settled_at,
    refundCreatedAt: r.refund_created_at,
    livemode: r.livemode,
    settlementHeld: r.settlement_held
  })

/** Rows of `payments` (the table, or a CTE of updated ones) with their refund. */
export const withRefund = (sql: SqlClient, source: Fragment) => sql`SELECT p.*, r.id AS refund_id,
    r.created_at AS refund_created_at
  FROM ${source} p LEFT JOIN refunds r ON r.payment_id = p.id`
