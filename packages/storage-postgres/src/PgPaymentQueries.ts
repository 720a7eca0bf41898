/**
 * The PostgreSQL payment store's reads over many payments. Listings are
 * keyset pages over the indexes on (partner, merchant or partner and chain,
 * sort key, id), a reference search through its trigram index (migration
 * 0016), as the planner chooses from its statistics. Statistics are exact
 * `numeric` sums read back as text, from the aggregates the store's writes
 * keep (see PaymentStatsPlan), so their cost does not grow with the number of
 * matches; for a network, token or reference filter, which the aggregates do
 * not break down by, from the succeeded matches themselves, found through the
 * trigram index or read from the covering index of succeeded payments by
 * chain and token.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import {
  type Caip19,
  chainOfCaip19,
  noStats,
  type PaymentFilter,
  type PaymentPageQuery,
  type PaymentStats,
  planStats,
  type StatsPlan,
  statsTotals
} from "@pay/core"
import { Effect } from "effect"
import { orDieSql } from "./PgErrors.js"
import { type PaymentRow, toPayment, withRefund } from "./PgPaymentRow.js"

/** One part of a statistics answer: a unit's revenue and count, or the customers. */
interface StatsRow {
  readonly part: "revenue" | "customers"
  readonly unit: string | null
  /** bigint and numeric come back as text. */
  readonly n: string
  readonly total: string | null
}

const toStats = (rows: ReadonlyArray<StatsRow>): PaymentStats => {
  const totals = statsTotals()
  let customers = 0
  for (const row of rows) {
    if (row.part === "customers") customers = Number(row.n)
    else totals.add(row.unit ?? "", BigInt(row.total ?? 0), Number(row.n))
  }
  return totals.result(customers)
}

const chainsOf = (assets: ReadonlyArray<Caip19>): ReadonlyArray<string> => [
  ...new Set(assets.map(chainOfCaip19))
]

/** A LIKE pattern matching values that contain `needle`, taken literally. */
export const containing = (needle: string) => `%${needle.replace(/[\\%_]/g, "\\$&")}%`

/** See `searchOf`: fewer payments than this in a filter's merchants and times are read whole. */
export const SEARCH_SCAN_ROWS = 2_000

export type SearchPath = "index" | "scan"

/** The store's `list` and `stats`. */
export const makePgPaymentQueries = (sql: SqlClient) => {
  /**
   * `column` is one of `values`. One value is an equality, so a page of one merchant walks its
   * index in order (PostgreSQL before 17 cannot order an index scan over `= ANY(…)`).
   */
  const oneOf = (column: string, values: ReadonlyArray<string>) =>
    values.length === 1
      ? sql`${sql.literal(column)} = ${values[0]!}`
      : sql`${sql.literal(column)} = ANY(${values}::text[])`

  /**
   * The WHERE clause of a filter: fixed fragments, values always bound. The reference is a
   * LIKE pattern (its `%`, `_` and `\` escaped, so it stays a literal substring), which the
   * trigram index answers; a token filter names the tokens' chains too, which the network
   * index answers.
   */
  const whereOf = (f: PaymentFilter, search: SearchPath = "index") => {
    const chains = f.networks ?? (f.assets === undefined ? undefined : chainsOf(f.assets))
    return sql.and([
      sql`p.partner_id = ${f.partnerId}`,
      ...(f.merchantIds === undefined ? [] : [oneOf("p.merchant_id", f.merchantIds)]),
      ...(f.statuses === undefined
        ? []
        : [
            sql`(CASE WHEN p.status = 'requires_action' AND p.expires_at <= ${f.now}
              THEN 'expired' ELSE p.status END) = ANY(${f.statuses}::text[])`
          ]),
      ...(f.from === undefined ? [] : [sql`p.created_at >= ${f.from}`]),
      ...(f.before === undefined ? [] : [sql`p.created_at < ${f.before}`]),
      ...(chains === undefined ? [] : [oneOf("p.token_chain", chains)]),
      ...(f.assets === undefined ? [] : [oneOf("p.token_asset", f.assets)]),
      ...(f.referenceId === undefined
        ? []
        : search === "index"
          ? [sql`p.reference_folded LIKE ${containing(f.referenceId.toLowerCase())}`]
          : [sql`strpos(p.reference_folded, ${f.referenceId.toLowerCase()}) > 0`])
    ])
  }

  /**
   * Statistics of a filter the aggregates do not break down by, from its succeeded matches:
   * found by the trigram index, or read from the covering index of succeeded payments by
   * chain and token. The status terms are left out: only succeeded payments count, and the
   * plan is Empty unless the filter lets them through.
   */
  const matchesStats = (filter: PaymentFilter, search: SearchPath = "index") => {
    const succeeded = sql`FROM payments p WHERE ${whereOf({ ...filter, statuses: undefined }, search)}
      AND p.status = 'succeeded'`
    return sql<StatsRow>`SELECT 'revenue' AS part, p.amount_unit AS unit,
        count(*)::text AS n, sum(p.amount_value)::text AS total ${succeeded}
        GROUP BY p.amount_unit
      UNION ALL SELECT 'customers', NULL, count(DISTINCT p.buyer_key)::text, NULL
        ${succeeded}`
  }

  /**
   * The plan's parts in one statement, so one round trip and one snapshot: the daily totals
   * of the whole days, the payments of the partial days at the edges, and the customers.
   */
  const aggregateStats = (
    filter: PaymentFilter,
    plan: Extract<StatsPlan, { readonly _tag: "Aggregates" }>
  ) => {
    const merchants = plan.merchantIds
    const parts: Array<Fragment> = []
    if (plan.days !== undefined) {
      parts.push(sql`SELECT 'revenue' AS part, unit, sum(transactions)::text AS n,
          sum(revenue)::text AS total
        FROM payment_daily_revenue WHERE ${sql.and([
          sql`partner_id = ${filter.partnerId}`,
          ...(merchants === undefined ? [] : [oneOf("merchant_id", merchants)]),
          ...(plan.days.from === undefined ? [] : [sql`day >= ${plan.days.from}`]),
          ...(plan.days.before === undefined ? [] : [sql`day < ${plan.days.before}`])
        ])}
        GROUP BY unit`)
    }
    const succeededIn = (from: Date | undefined, before: Date | undefined) =>
      sql`FROM payments p WHERE ${whereOf({
        partnerId: filter.partnerId,
        merchantIds: merchants,
        from,
        before,
        now: filter.now
      })} AND p.status = 'succeeded'`
    for (const edge of plan.edges) {
      parts.push(sql`SELECT 'revenue' AS part, p.amount_unit AS unit, count(*)::text AS n,
          sum(p.amount_value)::text AS total
        ${succeededIn(edge.from, edge.before)} GROUP BY p.amount_unit`)
    }
    const customers = plan.customers
    parts.push(
      customers._tag === "Range"
        ? sql`SELECT 'customers' AS part, NULL AS unit, count(DISTINCT p.buyer_key)::text AS n,
              NULL AS total
            ${succeededIn(customers.from, customers.before)}`
        : merchants === undefined
          ? sql`SELECT 'customers' AS part, NULL AS unit, count(*)::text AS n, NULL AS total
              FROM partner_customers WHERE partner_id = ${filter.partnerId}`
          : sql`SELECT 'customers' AS part, NULL AS unit, count(DISTINCT customer_key)::text AS n,
              NULL AS total
              FROM merchant_customers
              WHERE ${oneOf("merchant_id", merchants)} AND partner_id = ${filter.partnerId}`
    )
    return sql<StatsRow>`${sql.join(" UNION ALL ", false)(parts)}`
  }

  /**
   * How a reference search reaches its payments: through the trigram index ("index", a LIKE
   * the planner may answer from it), or by reading the few payments the filter's merchants and
   * times select ("scan", a `strpos` no index answers). A needle's trigrams that every
   * reference shares (`ord` of `ORDER-…`) cost the trigram index a pass over every row's
   * entry (about 45 ms at a million payments) that the planner does not foresee, so a
   * merchant's month of a few hundred payments is read whole instead; counted first on the
   * merchant's or partner's index, up to SEARCH_SCAN_ROWS.
   */
  const searchOf = (f: PaymentFilter): Effect.Effect<SearchPath, SqlError> =>
    f.referenceId === undefined ||
    (f.merchantIds === undefined && f.from === undefined && f.before === undefined)
      ? Effect.succeed("index")
      : sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM (SELECT 1 FROM payments p
          WHERE ${whereOf({
            partnerId: f.partnerId,
            merchantIds: f.merchantIds,
            from: f.from,
            before: f.before,
            now: f.now
          })} LIMIT ${SEARCH_SCAN_ROWS}) s`.pipe(
          Effect.map(([row]) => (Number(row?.n ?? 0) < SEARCH_SCAN_ROWS ? "scan" : "index"))
        )

  const page = (q: PaymentPageQuery, search: SearchPath = "index") => {
    const where = whereOf(q.filter, search)
    const byDate = q.sortBy === "date"
    const key = byDate ? sql`p.created_at` : sql`p.amount_value`
    const dir = q.direction === "asc" ? sql`ASC` : sql`DESC`
    const after =
      q.after === undefined
        ? sql``
        : sql`AND (${key}, p.id) ${q.direction === "asc" ? sql`>` : sql`<`} (${
            byDate
              ? sql`${new Date(Number(q.after.key))}::timestamptz`
              : sql`${q.after.key}::numeric`
          }, ${q.after.id})`
    return sql<PaymentRow>`${withRefund(sql, sql.literal("payments"))} WHERE ${where} ${after}
      ORDER BY ${key} ${dir}, p.id ${dir} LIMIT ${q.limit}`
  }

  /** The statistics statement of a filter, or none when nothing can match. */
  const statsOf = (filter: PaymentFilter, search: SearchPath = "index") => {
    const plan = planStats(filter)
    return plan._tag === "Empty"
      ? undefined
      : plan._tag === "Matches"
        ? matchesStats(filter, search)
        : aggregateStats(filter, plan)
  }

  return {
    /** For the query-plan tests: the statements a page and statistics run. */
    statements: { page, stats: statsOf, searchOf },

    list: (q: PaymentPageQuery) =>
      searchOf(q.filter).pipe(
        Effect.flatMap((search) => page(q, search)),
        Effect.map((rows) => rows.map(toPayment)),
        orDieSql
      ),

    stats: (filter: PaymentFilter) => {
      if (planStats(filter)._tag === "Empty") return Effect.succeed(noStats)
      return searchOf(filter).pipe(
        Effect.flatMap((search) => statsOf(filter, search)!),
        Effect.map(toStats),
        orDieSql
      )
    }
  }
}
