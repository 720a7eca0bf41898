/**
 * A stored chain transfer read back, for the SQL stores: the columns SQLite
 * and PostgreSQL return alike (text; gas, value and fees as decimal text) are
 * mapped here, once. The nonce (SQLite: INTEGER, a number; PostgreSQL: bigint, text)
 * and the time (ms integers; timestamptz, a Date) come back differently, so
 * each store converts them and passes them in.
 */

import type { ChainJobId, ChainTransfer } from "../payments/ChainJob.js"
import type { PaymentId } from "../payments/Payment.js"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import type { ReturnableFunds } from "./ChainJobStore.js"

/** The columns of a chain transfer, as both drivers return them. */
export interface ChainTransferColumns {
  readonly hash: string
  readonly job_id: string
  readonly chain_id: string
  readonly sender: string
  readonly purpose: string
  readonly to_address: string
  readonly data: string
  /** Decimal text, as are the value and both fees: exact at any size. */
  readonly gas: string
  /** The coin the transfer sends, in wei (0 for a contract call). */
  readonly value: string
  readonly max_fee_per_gas: string
  readonly max_priority_fee_per_gas: string
  readonly raw: string
}

type Address = ChainTransfer["sender"]
type Hex = ChainTransfer["hash"]

export const chainTransferFromColumns = (
  r: ChainTransferColumns,
  d: { readonly nonce: number; readonly createdAt: Date }
): ChainTransfer => ({
  hash: r.hash as Hex,
  jobId: r.job_id as ChainJobId,
  chainId: r.chain_id as Caip2,
  sender: r.sender as Address,
  nonce: d.nonce,
  purpose: r.purpose as ChainTransfer["purpose"],
  to: r.to_address as Address,
  data: r.data as Hex,
  gas: BigInt(r.gas),
  value: BigInt(r.value),
  maxFeePerGas: BigInt(r.max_fee_per_gas),
  maxPriorityFeePerGas: BigInt(r.max_priority_fee_per_gas),
  raw: r.raw as Hex,
  createdAt: d.createdAt
})

/** The columns of a returnable funds record, as both drivers return them (value as decimal text). */
export interface ReturnableFundsColumns {
  readonly chain_id: string
  readonly tx_hash: string
  readonly payment_id: string
  readonly asset: string
  readonly from_address: string
  readonly value: string
  readonly reason: string
}

/** A stored returnable funds record read back; the time is each store's to convert. */
export const returnableFromColumns = (
  r: ReturnableFundsColumns,
  recordedAt: Date
): ReturnableFunds => ({
  chainId: r.chain_id as Caip2,
  txHash: r.tx_hash as ReturnableFunds["txHash"],
  paymentId: r.payment_id as PaymentId,
  asset: r.asset as Caip19,
  from: r.from_address as ReturnableFunds["from"],
  value: BigInt(r.value),
  reason: r.reason,
  recordedAt
})
