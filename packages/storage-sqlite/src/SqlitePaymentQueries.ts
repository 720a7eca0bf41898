/**
 * The SQLite payment store's reads over many payments. Listings are
 * keyset-paginated on indexed (partner, merchant or partner and chain, sort
 * key, id); a reference search starts from its trigram index (migration 0016).
 * Statistics are exact (63-bit sums in SQL, larger amounts summed as bigints)
 * and read from the aggregates the store's writes keep (see PaymentStatsPlan),
 * so their cost does not grow with the number of matches; for a network,
 * token or reference filter, which the aggregates do not break down by, from
 * the succeeded matches themselves, found through the trigram index or the
 * covering index of succeeded payments by chain and token.
 */
import {
  type Caip19,
  chainOfCaip19,
  makeLruCache,
  noStats,
  type Payment,
  type PaymentFilter,
  type PaymentPageQuery,
  type PaymentStats,
  planStats,
  type StatsPlan,
  statsTotals
} from "@pay/core"
import { Effect } from "effect"
import type { SqliteConnection, SqliteStatement, SqliteValue } from "./SqliteDatabase.js"
import {
  type PaymentRow,
  placeholders,
  selectFrom,
  sortable,
  toPayment
} from "./SqlitePaymentRow.js"

const SPLIT = 1_000_000_000

/**
 * How many shapes of listing statement stay prepared. The list parameters are capped
 * (ListQuery.ts), but their combinations are still many; the shapes a dashboard uses are few.
 */
export const STATEMENT_CACHE_SIZE = 200

const EFFECTIVE_STATUS = `CASE WHEN p.status = 'requires_action' AND p.expires_at <= ?
  THEN 'expired' ELSE p.status END`

/** The payments, or those whose reference the trigram index finds, in that order (CROSS JOIN). */
const FROM_PAYMENTS = "payments p"
const FROM_SEARCH = `payment_references_fts f CROSS JOIN payment_references s ON s.id = f.rowid
  CROSS JOIN payments p ON p.id = s.payment_id`

/**
 * How a reference search reaches its payments: through the trigram index ("index"), or by
 * reading the payments the other terms select ("scan"): for a needle shorter than a trigram,
 * which the index cannot answer, and for one so common that walking the payments in order
 * finds a page sooner than fetching and sorting every match (see `searchOf`).
 */
export type SearchPath = "index" | "scan"

/** A reference needle as an FTS5 phrase: quoted, so no character of it is query syntax. */
export const ftsPhrase = (needle: string) => `"${needle.replaceAll('"', '""')}"`

/** Whether the trigram index can answer a (lower-cased) needle: three characters or more. */
export const indexable = (needle: string) => [...needle].length >= 3

export interface Where {
  readonly from: string
  readonly sql: string
  readonly params: Array<SqliteValue>
}

/**
 * The FROM and WHERE clauses of a filter: fixed fragments, values always bound. The
 * reference's own `instr` term stays on the index path too, so a match is exactly a
 * substring whatever the index answers. With merchants named, the partner and token terms are
 * kept off their indexes (`+`): a merchant's own index then bounds the rows read.
 */
export const whereOf = (f: PaymentFilter, search: SearchPath = "scan"): Where => {
  const viaIndex = f.referenceId !== undefined && search === "index"
  const clauses: Array<string> = []
  const params: Array<SqliteValue> = []
  if (viaIndex) {
    clauses.push("f.payment_references_fts MATCH ?")
    params.push(ftsPhrase(f.referenceId!.toLowerCase()))
  }
  // With merchants named, only their index may lead: the partner's (or the network's) could
  // look as good to the planner without statistics, and read every merchant's rows.
  const hint = f.merchantIds === undefined ? "" : "+"
  clauses.push(`${hint}p.partner_id = ?`)
  params.push(f.partnerId)
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
  // A token's chain is its CAIP-19 prefix: asking for it lets the network index narrow a
  // token filter too.
  const chains = f.networks ?? (f.assets === undefined ? undefined : chainsOf(f.assets))
  if (chains !== undefined) {
    clauses.push(`${hint}p.token_chain IN (${placeholders(chains.length)})`)
    params.push(...chains)
  }
  if (f.assets !== undefined) {
    clauses.push(`${hint}p.token_asset IN (${placeholders(f.assets.length)})`)
    params.push(...f.assets)
  }
  if (f.referenceId !== undefined) {
    clauses.push("instr(p.reference_folded, ?) > 0")
    params.push(f.referenceId.toLowerCase())
  }
  return { from: viaIndex ? FROM_SEARCH : FROM_PAYMENTS, sql: clauses.join(" AND "), params }
}

const chainsOf = (assets: ReadonlyArray<Caip19>): ReadonlyArray<string> => [
  ...new Set(assets.map(chainOfCaip19))
]

/**
 * Matches past which a page walks the payments in order rather than fetch every match from
 * the trigram index: by then one in a few hundred payments matches or more, so a page is
 * found after reading about as many rows (measured, bench/list.ts).
 */
export const LIST_SEARCH_LIMIT = 2_000
/**
 * Matches past which statistics read the partner's payments rather than each match through
 * the index: an index lookup per match costs several times a row read in order.
 */
export const STATS_SEARCH_LIMIT = 50_000

/**
 * The sums of the succeeded payments `where` selects, per unit: those within 63 bits summed
 * in SQL, the larger ones listed. SQL sums of 63-bit values overflow past 2^63; summing the
 * high and low parts of each value apart cannot (until a billion rows), and the parts
 * recombine exactly. The sums come back as text: a 63-bit total read as a JS number would
 * lose digits.
 */
const sumsSql = (where: Where) => {
  const succeeded = `FROM ${where.from} WHERE ${where.sql} AND p.status = 'succeeded'`
  return [
    `SELECT p.amount_unit AS unit, count(*) AS n,
        CAST(sum(p.amount_minor / ${SPLIT}) AS TEXT) AS high,
        CAST(sum(p.amount_minor % ${SPLIT}) AS TEXT) AS low
      ${succeeded} AND p.amount_minor IS NOT NULL GROUP BY p.amount_unit`,
    `SELECT p.amount_unit AS unit, p.amount_value AS value ${succeeded}
      AND p.amount_minor IS NULL`
  ] as const
}

/** The distinct buyers of the succeeded payments `where` selects. */
const customersSql = (where: Where) =>
  `SELECT count(DISTINCT p.buyer_key) AS n FROM ${where.from}
    WHERE ${where.sql} AND p.status = 'succeeded'`

/** The store's `list` and `stats`. */
export const makeSqlitePaymentQueries = (
  db: SqliteConnection,
  /** Matches past which a search reads the payments instead; tests move them to try both paths. */
  limits: { readonly list: number; readonly stats: number } = {
    list: LIST_SEARCH_LIMIT,
    stats: STATS_SEARCH_LIMIT
  },
  statementCacheSize: number = STATEMENT_CACHE_SIZE
) => {
  /**
   * Listing SQL varies with the filters used (a placeholder per merchant, status, network,
   * asset): each shape is prepared once and kept while recently used. Bounded, so a client
   * varying its filters cannot grow it; an evicted statement is finalized (bun:sqlite; a
   * better-sqlite3 statement is freed with its object) and prepared again if asked for.
   */
  const cache = makeLruCache<string, SqliteStatement>(statementCacheSize, (_, statement) =>
    statement.finalize?.()
  )
  const prepared = (sql: string) => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      cache.set(sql, statement)
    }
    return statement
  }

  /** How many payments the trigram index finds for a needle, counted up to `limit`. */
  const searchMatches = (needle: string, limit: number) =>
    (
      prepared(
        `SELECT count(*) AS n FROM (SELECT 1 FROM payment_references_fts
          WHERE payment_references_fts MATCH ? LIMIT ?)`
      ).get(ftsPhrase(needle), limit) as { n: number }
    ).n

  /**
   * How many payments the partner, merchant and time terms of a filter select, counted up to
   * `limit` on their index (the rows a search through the payments reads at most).
   */
  const boundedRows = (filter: PaymentFilter, limit: number) => {
    const where = whereOf({
      partnerId: filter.partnerId,
      merchantIds: filter.merchantIds,
      from: filter.from,
      before: filter.before,
      now: filter.now
    })
    return (
      prepared(
        `SELECT count(*) AS n FROM (SELECT 1 FROM ${where.from} WHERE ${where.sql} LIMIT ?)`
      ).get(...where.params, limit) as { n: number }
    ).n
  }

  /**
   * The path of a filter's reference search: through the trigram index unless it finds more
   * than `limit` payments, or more than the filter's merchants and times select (a merchant's
   * month is then read whole, sooner than every match of a common needle).
   */
  const searchOf = (filter: PaymentFilter, limit: number): SearchPath => {
    const needle = filter.referenceId?.toLowerCase()
    if (needle === undefined || !indexable(needle)) return "scan"
    const matches = searchMatches(needle, limit + 1)
    if (matches > limit) return "scan"
    return boundedRows(filter, matches) < matches ? "scan" : "index"
  }

  /** Revenue per unit and the count of succeeded payments among those `where` selects. */
  const succeededSums = (where: Where, totals: ReturnType<typeof statsTotals>) => {
    const [sums, large] = sumsSql(where)
    for (const row of prepared(sums).all(...where.params) as Array<{
      unit: string
      n: number
      high: string
      low: string
    }>) {
      totals.add(row.unit, BigInt(row.high) * BigInt(SPLIT) + BigInt(row.low), row.n)
    }
    for (const row of prepared(large).all(...where.params) as Array<{
      unit: string
      value: string
    }>) {
      totals.add(row.unit, BigInt(row.value), 1)
    }
  }

  /** Distinct buyers of the succeeded payments `where` selects. */
  const succeededCustomers = (where: Where) =>
    (prepared(customersSql(where)).get(...where.params) as { n: number }).n

  /**
   * For filters the aggregates do not break down by: the succeeded matches read through the
   * trigram index or the succeeded payments by token. The status terms are left out: only
   * succeeded payments count, and the plan is Empty unless the filter lets them through.
   */
  const matchesWhere = (filter: PaymentFilter) =>
    whereOf({ ...filter, statuses: undefined }, searchOf(filter, limits.stats))

  const matchesStats = (filter: PaymentFilter): PaymentStats => {
    const where = matchesWhere(filter)
    const totals = statsTotals()
    succeededSums(where, totals)
    return totals.result(succeededCustomers(where))
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
        ? succeededCustomers(
            whereOf({
              partnerId: filter.partnerId,
              merchantIds: merchants,
              from: plan.customers.from,
              before: plan.customers.before,
              now: filter.now
            })
          )
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

  /** A page's statement and its parameters. */
  const pageOf = (q: PaymentPageQuery, search: SearchPath) => {
    const where = whereOf(q.filter, search)
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
    // One chain, all merchants, by date: the network index holds exactly the matches in page
    // order. Without planner statistics SQLite may prefer the partner's index (the same
    // estimate once a time range bounds both), which reads every other chain's rows too.
    const f = q.filter
    const oneChain =
      (f.networks ?? (f.assets === undefined ? undefined : chainsOf(f.assets)))?.length === 1
    const from =
      oneChain && q.sortBy === "date" && f.merchantIds === undefined && where.from === FROM_PAYMENTS
        ? "payments p INDEXED BY payments_by_partner_chain_date"
        : where.from
    const sql = `${selectFrom(from)} WHERE ${where.sql}${keyset}
      ORDER BY ${keyColumn} ${dir}, p.id ${dir} LIMIT ?`
    return { sql, params }
  }

  const listNow = (q: PaymentPageQuery): Array<Payment> => {
    const { sql, params } = pageOf(q, searchOf(q.filter, limits.list))
    return (prepared(sql).all(...params) as Array<PaymentRow>).map(toPayment)
  }

  const statsNow = (filter: PaymentFilter): PaymentStats => {
    const plan = planStats(filter)
    if (plan._tag === "Empty") return noStats
    // One read transaction: every part of the answer from the same snapshot.
    return db.transaction(() =>
      plan._tag === "Matches" ? matchesStats(filter) : aggregateStats(filter, plan)
    )
  }

  return {
    /** How many listing statements are prepared and kept now (at most the cache's size). */
    cachedStatements: () => cache.size(),
    /** For the query-plan tests: the statements a page and statistics run. */
    statements: {
      page: (q: PaymentPageQuery) => pageOf(q, searchOf(q.filter, limits.list)),
      /** The statistics of a filter the aggregates do not break down by. */
      matches: (filter: PaymentFilter) => {
        const where = matchesWhere(filter)
        return [...sumsSql(where), customersSql(where)].map((sql) => ({
          sql,
          params: where.params
        }))
      }
    },

    list: (q: PaymentPageQuery) => Effect.sync(() => listNow(q)),

    stats: (filter: PaymentFilter) => Effect.sync(() => statsNow(filter)),

    /** `list` run now, on the caller's thread (SqliteReadWorker.ts runs it on its own). */
    listNow,

    /** `stats` run now, on the caller's thread. */
    statsNow
  }
}
