/**
 * `pay_purged_rows_total{table}`: what the purge (Purge.ts) deleted, counted
 * batch by batch as it goes, so a long pass shows its progress. The label is
 * one of a fixed set of table names: never an id.
 */
import { Metric, MetricLabel } from "effect"

/** The tables the purge deletes from, in the order a pass visits them. */
export const PURGED_TABLES = [
  "collected_data",
  "payment_options",
  "idempotency_keys",
  "webhook_deliveries",
  "webhook_attempts",
  "events",
  "audit_log"
] as const
export type PurgedTable = (typeof PURGED_TABLES)[number]

export const purgedRows = Metric.counter("pay_purged_rows_total", {
  description: "Rows the background purge deleted past their retention, by table, in this process",
  incremental: true
})

/** Each table's label, made once: a batch's count stays cheap. */
const labels = new Map(
  PURGED_TABLES.map((table) => [table, [MetricLabel.make("table", table)]] as const)
)

/** `count` rows of `table` purged (0 makes its series exist before the first). */
export const countPurged = (table: PurgedTable, count: number) =>
  purgedRows.unsafeUpdate(count, labels.get(table) ?? [])
