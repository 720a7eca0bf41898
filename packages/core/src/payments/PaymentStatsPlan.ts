/**
 * How a SQL store answers `stats` without reading every match: from aggregates
 * it keeps in the same transaction as each payment that succeeds (revenue and
 * count per merchant, UTC day and unit; the customers of each partner and of
 * each merchant), plus a direct read of the payments of the partial days at the
 * edges of a time range. The plan is the stores' common arithmetic; what it
 * must add up to is `computeStats` (PaymentQuery.ts), which the storage
 * contract checks.
 */
import type { PaymentFilter, PaymentStats } from "./PaymentStore.js"

export const DAY_MS = 86_400_000

/** The UTC day a time falls in, counted from 1970-01-01: the daily aggregates' key. */
export const utcDay = (at: Date): number => Math.floor(at.getTime() / DAY_MS)

/** A span of creation times, `from` inclusive and `before` exclusive. */
export interface TimeSpan {
  readonly from: Date
  readonly before: Date
}

export type StatsPlan =
  /** Nothing can match: every figure is zero. */
  | { readonly _tag: "Empty" }
  /**
   * A filter the aggregates do not break down by: read the succeeded matches themselves,
   * through the index that narrows them down, the reference search ("reference") or the
   * succeeded payments by network and token ("token"). Their cost grows with the matches.
   */
  | { readonly _tag: "Matches"; readonly by: "reference" | "token" }
  | {
      readonly _tag: "Aggregates"
      readonly merchantIds: ReadonlyArray<string> | undefined
      /**
       * Whole UTC days to read from the daily aggregates, `[from, before)`, either bound
       * open when absent; undefined when the range holds no whole day.
       */
      readonly days:
        | { readonly from: number | undefined; readonly before: number | undefined }
        | undefined
      /** The partial days at the edges, read from the payments themselves. */
      readonly edges: ReadonlyArray<TimeSpan>
      /**
       * Distinct customers: kept per partner and per merchant for all time ("All"); over a
       * time range, counted from the succeeded payments in it.
       */
      readonly customers:
        | { readonly _tag: "All" }
        | {
            readonly _tag: "Range"
            readonly from: Date | undefined
            readonly before: Date | undefined
          }
    }

export const planStats = (filter: PaymentFilter): StatsPlan => {
  // Only succeeded payments count, and a succeeded payment's effective status is its own.
  if (filter.statuses !== undefined && !filter.statuses.includes("succeeded")) {
    return { _tag: "Empty" }
  }
  if ([filter.merchantIds, filter.assets, filter.networks].some((set) => set?.length === 0)) {
    return { _tag: "Empty" }
  }
  const { from, before } = filter
  if (from !== undefined && before !== undefined && from.getTime() >= before.getTime()) {
    return { _tag: "Empty" }
  }
  if (filter.referenceId !== undefined) return { _tag: "Matches", by: "reference" }
  if (filter.assets !== undefined || filter.networks !== undefined) {
    return { _tag: "Matches", by: "token" }
  }
  const merchantIds = filter.merchantIds
  if (from === undefined && before === undefined) {
    return {
      _tag: "Aggregates",
      merchantIds,
      days: { from: undefined, before: undefined },
      edges: [],
      customers: { _tag: "All" }
    }
  }
  const customers = { _tag: "Range", from, before } as const
  // The first day that starts at or after `from`, and the day `before` falls in.
  const firstDay = from === undefined ? undefined : Math.ceil(from.getTime() / DAY_MS)
  const endDay = before === undefined ? undefined : Math.floor(before.getTime() / DAY_MS)
  if (from !== undefined && before !== undefined && firstDay! >= endDay!) {
    return {
      _tag: "Aggregates",
      merchantIds,
      days: undefined,
      edges: [{ from, before }],
      customers
    }
  }
  const edges: Array<TimeSpan> = []
  if (from !== undefined && from.getTime() < firstDay! * DAY_MS) {
    edges.push({ from, before: new Date(firstDay! * DAY_MS) })
  }
  if (before !== undefined && endDay! * DAY_MS < before.getTime()) {
    edges.push({ from: new Date(endDay! * DAY_MS), before })
  }
  return {
    _tag: "Aggregates",
    merchantIds,
    days: { from: firstDay, before: endDay },
    edges,
    customers
  }
}

/** Adds up revenue per unit and transactions from several parts, then the final figures. */
export const statsTotals = () => {
  const revenue = new Map<string, bigint>()
  let transactions = 0
  return {
    add: (unit: string, total: bigint, count: number) => {
      revenue.set(unit, (revenue.get(unit) ?? 0n) + total)
      transactions += count
    },
    /** Units in code-point order, as `computeStats` has them, whatever a database's collation. */
    result: (customers: number): PaymentStats => ({
      revenue: [...revenue]
        .map(([unit, total]) => ({ unit, total }))
        .sort((a, b) => (a.unit < b.unit ? -1 : 1)),
      transactions,
      customers
    })
  }
}

export const noStats: PaymentStats = { revenue: [], transactions: 0, customers: 0 }
