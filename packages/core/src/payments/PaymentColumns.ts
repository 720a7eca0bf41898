/**
 * A stored payment read back, for the SQL stores: the columns SQLite and
 * PostgreSQL return alike (text, amounts as decimal text) are mapped here,
 * once. The others come back differently from each driver, so each store
 * converts them itself and passes them in: times (SQLite: ms integers;
 * PostgreSQL: timestamptz, a Date), the transaction nonce (INTEGER, a number;
 * bigint, text), the checkout (JSON text; jsonb, parsed) and the mode (0 or
 * 1; boolean). Also the customer key both stores write.
 */

import type { PartnerId } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import type { AmountUnit } from "../shared/Amount.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import {
  feesFromColumns,
  type Payment,
  type PaymentId,
  type PaymentStatus,
  type PaymentStatusRecord,
  type RefundId,
  settlementFromColumns
} from "./Payment.js"

/** The columns of a status read, as both drivers return them. */
export interface PaymentStatusColumns {
  readonly id: string
  readonly partner_id: string
  readonly merchant_id: string
  readonly status: string
  readonly failure_code: string | null
  readonly token_asset: string | null
  /** Decimal text: exact at any size. */
  readonly token_value: string | null
  readonly tx_id: string | null
}

/** The columns of a payment (and its refund's id), as both drivers return them. */
export interface PaymentColumns extends PaymentStatusColumns {
  readonly reference_id: string
  readonly amount_unit: string
  /** Decimal text, as are the fee and settlement amounts. */
  readonly amount_value: string
  readonly cancelled_reason: string | null
  readonly buyer_account: string | null
  readonly buyer_provider_name: string | null
  readonly buyer_provider_icon: string | null
  readonly tx_network: string | null
  readonly tx_hash: string | null
  readonly fee_fixed: string | null
  readonly fee_percentage: string | null
  readonly fee_total: string | null
  /** A native-coin payment's settlement gas (decimal text); null for a token. */
  readonly fee_network: string | null
  readonly settlement_amount: string | null
  readonly settlement_status: string | null
  readonly settlement_destination: string | null
  readonly settlement_tx_hash: string | null
  readonly refund_id: string | null
}

/** The values each driver returns in its own way, converted by its store. */
export interface PaymentDriverValues {
  readonly expiresAt: Date
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly finalAt: Date | null
  readonly checkout: Payment["checkout"]
  readonly txNonce: number | null
  readonly settledAt: Date | null
  readonly refundCreatedAt: Date | null
  /** The mode it was created in (SQLite: 0 or 1; PostgreSQL: boolean); null before 0018. */
  readonly livemode: boolean | null
  /** The settlement is held (SQLite: 0 or 1; PostgreSQL: boolean): migration 0022. */
  readonly settlementHeld: boolean
}

/** Stored units were validated on the way in: read them back without re-validating. */
const unitFromColumn = (unit: string): AmountUnit => {
  if (unit.startsWith("iso4217/")) {
    const currency = findCurrency(unit.slice("iso4217/".length))
    if (currency === undefined) throw new Error(`stored payment has an unknown currency: ${unit}`)
    return { kind: "fiat", currency }
  }
  return { kind: "token", asset: unit.slice("caip19/".length) as Caip19 }
}

export const paymentStatusFromColumns = (
  r: PaymentStatusColumns,
  expiresAt: Date
): PaymentStatusRecord => ({
  id: r.id as PaymentId,
  partnerId: r.partner_id as PartnerId,
  merchantId: r.merchant_id as MerchantId,
  status: r.status as PaymentStatus,
  expiresAt,
  failureCode: r.failure_code as Payment["failureCode"],
  tokenAmount:
    r.token_asset === null || r.token_value === null
      ? null
      : { asset: r.token_asset as Caip19, value: BigInt(r.token_value) },
  txId: r.tx_id
})

export const paymentFromColumns = (r: PaymentColumns, d: PaymentDriverValues): Payment => ({
  ...paymentStatusFromColumns(r, d.expiresAt),
  referenceId: r.reference_id,
  amount: { unit: unitFromColumn(r.amount_unit), value: BigInt(r.amount_value) },
  cancelledReason: r.cancelled_reason as Payment["cancelledReason"],
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  finalAt: d.finalAt,
  checkout: d.checkout,
  buyer:
    r.buyer_account === null
      ? null
      : {
          account: r.buyer_account as Caip10,
          providerName: r.buyer_provider_name,
          providerIcon: r.buyer_provider_icon
        },
  transaction:
    r.tx_network === null || r.tx_hash === null
      ? null
      : { networkId: r.tx_network, hash: r.tx_hash, nonce: d.txNonce },
  refund:
    r.refund_id === null || d.refundCreatedAt === null
      ? null
      : { id: r.refund_id as RefundId, createdAt: d.refundCreatedAt },
  fees: feesFromColumns(r.fee_fixed, r.fee_percentage, r.fee_total, r.fee_network),
  settlement: settlementFromColumns({
    status: r.settlement_status,
    amount: r.settlement_amount,
    destination: r.settlement_destination,
    txHash: r.settlement_tx_hash,
    settledAt: d.settledAt,
    held: d.settlementHeld
  }),
  livemode: d.livemode
})

/**
 * The stored `buyer_key`, by which statistics count customers: the address,
 * the same one on any chain counting once (as `customerKey` in PaymentQuery.ts).
 */
export const buyerKey = (account: string): string =>
  account.slice(account.lastIndexOf(":") + 1).toLowerCase()
