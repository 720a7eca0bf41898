/**
 * A payment as SQLite stores it, for the payment store's writes and its
 * listing and statistics queries alike: the row, how it reads back, the
 * SELECT that joins its refund, and the amount's sort key. Core's
 * paymentFromColumns reads the columns both SQL stores return alike; what is
 * SQLite's own is converted here first: times are ms integers (PostgreSQL
 * gives a Date), the transaction nonce an INTEGER (there bigint, as text),
 * the checkout JSON text (there parsed jsonb) and the mode 0 or 1 (there a
 * boolean).
 */
import {
  type Payment,
  type PaymentColumns,
  type PaymentStatusColumns,
  type PaymentStatusRecord,
  paymentFromColumns,
  paymentStatusFromColumns
} from "@pay/core"

export interface StatusRow extends PaymentStatusColumns {
  expires_at: number
}

export interface PaymentRow extends PaymentColumns {
  expires_at: number
  created_at: number
  updated_at: number
  final_at: number | null
  checkout: string | null
  tx_nonce: number | null
  settled_at: number | null
  refund_created_at: number | null
  /** 1 live, 0 test; NULL for payments stored before migration 0018. */
  livemode: number | null
  /** 1 when a `pending` settlement is held (migration 0022). */
  settlement_held: number
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms))

export const toStatusRecord = (r: StatusRow): PaymentStatusRecord =>
  paymentStatusFromColumns(r, new Date(r.expires_at))

export const toPayment = (r: PaymentRow): Payment =>
  paymentFromColumns(r, {
    expiresAt: new Date(r.expires_at),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    finalAt: dateOrNull(r.final_at),
    checkout: r.checkout === null ? null : (JSON.parse(r.checkout) as Payment["checkout"]),
    txNonce: r.tx_nonce,
    settledAt: dateOrNull(r.settled_at),
    refundCreatedAt: dateOrNull(r.refund_created_at),
    livemode: r.livemode === null ? null : r.livemode === 1,
    settlementHeld: r.settlement_held === 1
  })

/** Payments (`p` in `from`) with their refund; a WHERE clause follows. */
export const selectFrom = (from: string) => `SELECT p.*, r.id AS refund_id,
  r.created_at AS refund_created_at FROM ${from} LEFT JOIN refunds r ON r.payment_id = p.id`

/** Payments with their refund; a WHERE clause follows. */
export const SELECT = selectFrom("payments p")

const SORT_WIDTH = 78 // digits of 2^256 - 1

/** The stored `amount_sort`: the amount zero-padded, so text order is numeric order. */
export const sortable = (value: bigint) => value.toString().padStart(SORT_WIDTH, "0")

export const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")

/** The stored `livemode`: SQLite has no boolean (and better-sqlite3 binds none). */
export const livemodeColumn = (livemode: boolean | null): number | null =>
  livemode === null ? null : livemode ? 1 : 0
