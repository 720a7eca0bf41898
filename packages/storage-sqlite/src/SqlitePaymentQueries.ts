/**
 * The SQLite payment store's reads over many payments. Listings are
 * keyset-paginated on indexed (partner or merchant, sort key, id). Statistics
 * are exact (63-bit sums in SQL, larger amounts summed as bigints) and read
 * from the aggregates the store's writes keep (see PaymentStatsPlan), so their
 * cost does not grow with the number of matches.
 */
import {
  noStats,
  type PaymentFilter,
  type PaymentPageQuery,
  type PaymentStats,
  planStats,
  type StatsPlan,
  statsTotals
} from "@pay/core"
import { Effect } from "effect"
import type { SqliteConnection, SqliteStatement, SqliteValue } from "./SqliteDatabase.js"
import { type PaymentRow, placeholders, SELECT, sortable, toPayment } from "./SqlitePaymentRow.js"

const SPLIT = 1_000_000_000

const EFFECTIVE_STATUS = `CASE WHEN p.status = 'requires_action' AND p.expires_at <= ?
  THEN 'expired' ELSE p.status END`

/** The WHERE clause of a filter: fixed fragments, values always bound. */
const whereOf = (f: PaymentFilter): { sql: string; params: Array<SqliteValue> } => {
  const clauses = ["p.partner_id = ?"]
  const params: Array<SqliteValue> = [f.partnerId]
  if (f.merchantIds !== undefined) {
    clauses.push(`p.merchant_id IN (${placeholders(f.merchantIds.length)})`)
    params.push(...f.merchantIds)
  }
  if (f.statuses !== undefined) {
    clauses.push(`${EFFECTIVE_STATUS} IN (${placeholders(f.statuses.length)})`)
    params.push(f.now.getTime(), ...f.statuses)
  }
  if (f.from !== undefined) {
    clauses.push("p.created_at >= ?")
    params.push(f.from.getTime())
  }
  if (f.before !== undefined) {
    clauses.push("p.created_at < ?")
    params.push(f.before.getTime())
  }
  if (f.assets !== undefined) {
    clauses.push(`p.token_asset IN (${placeholders(f.assets.length)})`)
    params.push(...f.assets)
  }
  if (f.networks !== undefined) {
    clauses.push(`p.token_chain IN (${placeholders(f.networks.length)})`)
    params.push(...f.networks)
  }
  if (f.referenceId !== undefined) {
    clauses.push("instr(p.reference_folded, ?) > 0")
    params.push(f.referenceId.toLowerCase())
  }
  return { sql: clauses.join(" AND "), params }
}

/** The store's `list` and `stats`. */
export const makeSqlitePaymentQueries = (db: SqliteConnection) => {
  const cache = new Map<string, SqliteStatement>()
  /** Listing SQL varies with the filters used: prepare each shape once. */
  const prepared = (sql: string) => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      cache.set(sql, statement)
    }
    return statement
  }

  /** Revenue per unit and the count of succeeded payments among those `where` selects. */
  const succeededSums = (
    where: { sql: string; params: Array<SqliteValue> },
    totals: ReturnType<typeof statsTotals>
  ) => {
    const succeeded = `FROM payments p WHERE ${where.sql} AND p.status = 'succeeded'`
    // SQL sums of 63-bit values overflow past 2^63; summing the high and low parts of each
    // value apart cannot (until a billion rows), and the parts recombine exactly. The sums
    // come back as text: a 63-bit total read as a JS number would lose digits.
    for (const row of prepared(
      `SELECT p.amount_unit AS unit, count(*) AS n,
          CAST(sum(p.amount_minor / ${SPLIT}) AS TEXT) AS high,
          CAST(sum(p.amount_minor % ${SPLIT}) AS TEXT) AS low
        ${succeeded} AND p.amount_minor IS NOT NULL GROUP BY p.amount_unit`
    ).all(...where.params) as Array<{ unit: string; n: number; high: string; low: string }>) {
      totals.add(row.unit, BigInt(row.high) * BigInt(SPLIT) + BigInt(row.low), row.n)
    }
    for (const row of prepared(
      `SELECT p.amount_unit AS unit, p.amount_value AS value ${succeeded}
        AND p.amount_minor IS NULL`
    ).all(...where.params) as Array<{ unit: string; value: string }>) {
      totals.add(row.unit, BigInt(row.value), 1)
    }
  }

  /** Distinct buyers of the succeeded payments a filter selects. */
  const scanCustomers = (filter: PaymentFilter) => {
    const where = whereOf(filter)
    return (
      prepared(
        `SELECT count(DISTINCT p.buyer_key) AS n FROM payments p
          WHERE ${where.sql} AND p.status = 'succeeded'`
      ).get(...where.params) as { n: number }
    ).n
  }

  /** Every match read: for filters the aggregates do not break down by. */
  const scanStats = (filter: PaymentFilter): PaymentStats => {
    const totals = statsTotals()
    succeededSums(whereOf(filter), totals)
    return totals.result(scanCustomers(filter))
  }

  const aggregateStats = (
    filter: PaymentFilter,
    plan: Extract<StatsPlan, { readonly _tag: "Aggregates" }>
  ): PaymentStats => {
    const totals = statsTotals()
    const merchants = plan.merchantIds
    if (plan.days !== undefined) {
      const clauses = ["partner_id = ?"]
      const params: Array<SqliteValue> = [filter.partnerId]
      if (merchants !== undefined) {
        clauses.push(`merchant_id IN (${placeholders(merchants.length)})`)
        params.push(...merchants)
      }
      if (plan.days.from !== undefined) {
        clauses.push("day >= ?")
        params.push(plan.days.from)
      }
      if (plan.days.before !== undefined) {
        clauses.push("day < ?")
        params.push(plan.days.before)
      }
      const where = clauses.join(" AND ")
      // Daily totals within 63 bits summed in SQL by parts (as above), the larger ones listed
      // for an exact sum here: one pass over the covering index.
      for (const row of prepared(
        `SELECT unit, CAST(sum(transactions) AS TEXT) AS n,
            CAST(sum(revenue_i63 / ${SPLIT}) AS TEXT) AS high,
            CAST(sum(revenue_i63 % ${SPLIT}) AS TEXT) AS low,
            group_concat(CASE WHEN revenue_i63 IS NULL THEN revenue END) AS past_i63
          FROM payment_daily_revenue WHERE ${where} GROUP BY unit`
      ).all(...params) as Array<{
        unit: string
        n: string
        high: string | null
        low: string | null
        past_i63: string | null
      }>) {
        let total = BigInt(row.high ?? 0) * BigInt(SPLIT) + BigInt(row.low ?? 0)
        for (const big of row.past_i63?.split(",") ?? []) total += BigInt(big)
        totals.add(row.unit, total, Number(row.n))
      }
    }
    for (const edge of plan.edges) {
      succeededSums(
        whereOf({
          partnerId: filter.partnerId,
          merchantIds: merchants,
          from: edge.from,
          before: edge.before,
          now: filter.now
        }),
        totals
      )
    }
    const customers =
      plan.customers._tag === "Range"
        ? scanCustomers({
            partnerId: filter.partnerId,
            merchantIds: merchants,
            from: plan.customers.from,
            before: plan.customers.before,
            now: filter.now
          })
        : merchants === undefined
          ? (
              prepared("SELECT count(*) AS n FROM partner_customers WHERE partner_id = ?").get(
                filter.partnerId
              ) as { n: number }
            ).n
          : (
              prepared(
                `SELECT count(DISTINCT customer_key) AS n FROM merchant_customers
                  WHERE merchant_id IN (${placeholders(merchants.length)}) AND partner_id = ?`
              ).get(...merchants, filter.partnerId) as { n: number }
            ).n
    return totals.result(customers)
  }

  return {
    list: (q: PaymentPageQuery) =>
      Effect.sync(() => {
        const where = whereOf(q.filter)
        const [keyColumn, toKey] =
          q.sortBy === "date"
            ? (["p.created_at", (k: string) => Number(k)] as const)
            : (["p.amount_sort", (k: string) => sortable(BigInt(k))] as const)
        const dir = q.direction === "asc" ? "ASC" : "DESC"
        const params = [...where.params]
        let keyset = ""
        if (q.after !== undefined) {
          keyset = ` AND (${keyColumn}, p.id) ${q.direction === "asc" ? ">" : "<"} (?, ?)`
          params.push(toKey(q.after.key), q.after.id)
        }
        params.push(q.limit)
        const sql = `${SELECT} WHERE ${where.sql}${keyset}
          ORDER BY ${keyColumn} ${dir}, p.id ${dir} LIMIT ?`
        return (prepared(sql).all(...params) as Array<PaymentRow>).map(toPayment)
      }),

    stats: (filter: PaymentFilter) =>
      Effect.sync(() => {
        const plan = planStats(filter)
        if (plan._tag === "Empty") return noStats
        // One read transaction: every part of the answer from the same snapshot.
        return db.transaction(() =>
          plan._tag === "Scan" ? scanStats(filter) : aggregateStats(filter, plan)
        )
      })
  }
}
