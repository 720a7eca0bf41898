/**
 * The meaning of a payment filter, sort and cursor, as plain functions over
 * payments: what the in-memory store runs, and what the SQL stores must agree
 * with (the storage contract checks both against the same data).
 */

import { formatUnit } from "../shared/Amount.js"
import { chainOfCaip19 } from "../shared/Caip.js"
import type { Payment } from "./Payment.js"
import { buyerKey } from "./PaymentColumns.js"
import { effectiveStatus } from "./PaymentStateMachine.js"
import {
  type PaymentCursor,
  type PaymentFilter,
  type PaymentSortBy,
  type PaymentStats,
  type SortDirection,
  sortKeyOf
} from "./PaymentStore.js"

export const matchesFilter = (p: Payment, f: PaymentFilter): boolean =>
  p.partnerId === f.partnerId &&
  (f.merchantIds === undefined || f.merchantIds.includes(p.merchantId)) &&
  (f.statuses === undefined || f.statuses.includes(effectiveStatus(p, f.now))) &&
  (f.from === undefined || p.createdAt.getTime() >= f.from.getTime()) &&
  (f.before === undefined || p.createdAt.getTime() < f.before.getTime()) &&
  (f.assets === undefined || (p.tokenAmount !== null && f.assets.includes(p.tokenAmount.asset))) &&
  (f.networks === undefined ||
    (p.tokenAmount !== null && f.networks.includes(chainOfCaip19(p.tokenAmount.asset)))) &&
  (f.referenceId === undefined || p.referenceId.toLowerCase().includes(f.referenceId.toLowerCase()))

const compareKeys = (a: string, b: string): number => {
  // Keys are decimal integers: compare as numbers, exactly.
  const [x, y] = [BigInt(a), BigInt(b)]
  return x < y ? -1 : x > y ? 1 : 0
}

/** Order by the sort key, then by id, both in `direction`. */
export const comparePayments =
  (sortBy: PaymentSortBy, direction: SortDirection) =>
  (a: Payment, b: Payment): number => {
    const byKey = compareKeys(sortKeyOf(a, sortBy), sortKeyOf(b, sortBy))
    const order = byKey !== 0 ? byKey : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
    return direction === "asc" ? order : -order
  }

/** Whether `p` comes after the cursor's row in the cursor's order. */
export const isAfterCursor = (p: Payment, cursor: PaymentCursor): boolean => {
  const byKey = compareKeys(sortKeyOf(p, cursor.sortBy), cursor.key)
  const order = byKey !== 0 ? byKey : p.id < cursor.id ? -1 : p.id > cursor.id ? 1 : 0
  return cursor.direction === "asc" ? order > 0 : order < 0
}

/** A customer is a buyer account, the same address on any chain counting once. */
export const customerKey = (p: Payment): string | undefined =>
  p.buyer === null ? undefined : buyerKey(p.buyer.account)

export const computeStats = (payments: Iterable<Payment>, filter: PaymentFilter): PaymentStats => {
  const revenue = new Map<string, bigint>()
  const customers = new Set<string>()
  let transactions = 0
  for (const p of payments) {
    if (!matchesFilter(p, filter) || p.status !== "succeeded") continue
    transactions++
    const unit = formatUnit(p.amount.unit)
    revenue.set(unit, (revenue.get(unit) ?? 0n) + p.amount.value)
    const customer = customerKey(p)
    if (customer !== undefined) customers.add(customer)
  }
  return {
    revenue: [...revenue]
      .map(([unit, total]) => ({ unit, total }))
      .sort((a, b) => (a.unit < b.unit ? -1 : 1)),
    transactions,
    customers: customers.size
  }
}
