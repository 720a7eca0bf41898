/**
 * The payment store on PostgreSQL. Transitions and expiries are single
 * compare-and-set statements (the WHERE clause holds the expected status), so
 * with any number of instances each change applies once; the expiry sweep
 * skips rows another instance has locked. Listings are keyset pages over the
 * indexes on (partner or merchant, sort key, id); statistics are exact
 * `numeric` sums read back as text, from aggregates kept by the very statement
 * that makes a payment succeeded (see PaymentStatsPlan), so their cost does not
 * grow with the number of matches.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import {
  type AmountUnit,
  type Caip10,
  type Caip19,
  chainOfCaip19,
  feesFromColumns,
  findCurrency,
  formatUnit,
  type MerchantId,
  noStats,
  type PartnerId,
  type Payment,
  type PaymentFilter,
  type PaymentId,
  type PaymentStats,
  type PaymentStatus,
  type PaymentStatusRecord,
  PaymentStore,
  planStats,
  RefundExists,
  type RefundId,
  type StatsPlan,
  settlementFromColumns,
  statsTotals
} from "@pay/core"
import { Effect, Option } from "effect"
import { DAY_OF_CREATED_AT } from "./migrations/0004_payment_aggregates.js"
import { JOB_COLUMNS, jobValues } from "./PgChainJobStore.js"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { withCompletion, writeCompletion } from "./PgIdempotencyStore.js"

interface StatusRow {
  readonly id: string
  readonly partner_id: string
  readonly merchant_id: string
  readonly status: string
  readonly expires_at: Date
  readonly failure_code: string | null
  readonly token_asset: string | null
  /** numeric comes back as text: exact at any size. */
  readonly token_value: string | null
  readonly tx_id: string | null
}

interface PaymentRow extends StatusRow {
  readonly reference_id: string
  readonly amount_unit: string
  readonly amount_value: string
  readonly cancelled_reason: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly final_at: Date | null
  readonly checkout: Payment["checkout"]
  readonly buyer_account: string | null
  readonly buyer_provider_name: string | null
  readonly buyer_provider_icon: string | null
  readonly tx_network: string | null
  readonly tx_hash: string | null
  /** bigint comes back as text. */
  readonly tx_nonce: string | null
  /** numeric comes back as text. */
  readonly fee_fixed: string | null
  readonly fee_percentage: string | null
  readonly fee_total: string | null
  readonly settlement_amount: string | null
  readonly settlement_status: string | null
  readonly settlement_destination: string | null
  readonly settlement_tx_hash: string | null
  readonly settled_at: Date | null
  readonly refund_id: string | null
  readonly refund_created_at: Date | null
}

/** Stored units were validated on the way in: read them back without re-validating. */
const unitFromStorage = (unit: string): AmountUnit => {
  if (unit.startsWith("iso4217/")) {
    const currency = findCurrency(unit.slice("iso4217/".length))
    if (currency === undefined) throw new Error(`stored payment has an unknown currency: ${unit}`)
    return { kind: "fiat", currency }
  }
  return { kind: "token", asset: unit.slice("caip19/".length) as Caip19 }
}

const toStatusRecord = (r: StatusRow): PaymentStatusRecord => ({
  id: r.id as PaymentId,
  partnerId: r.partner_id as PartnerId,
  merchantId: r.merchant_id as MerchantId,
  status: r.status as PaymentStatus,
  expiresAt: r.expires_at,
  failureCode: r.failure_code as Payment["failureCode"],
  tokenAmount:
    r.token_asset === null || r.token_value === null
      ? null
      : { asset: r.token_asset as Caip19, value: BigInt(r.token_value) },
  txId: r.tx_id
})

const toPayment = (r: PaymentRow): Payment => ({
  ...toStatusRecord(r),
  referenceId: r.reference_id,
  amount: { unit: unitFromStorage(r.amount_unit), value: BigInt(r.amount_value) },
  cancelledReason: r.cancelled_reason as Payment["cancelledReason"],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  finalAt: r.final_at,
  checkout: r.checkout,
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
      : {
          networkId: r.tx_network,
          hash: r.tx_hash,
          nonce: r.tx_nonce === null ? null : Number(r.tx_nonce)
        },
  refund:
    r.refund_id === null || r.refund_created_at === null
      ? null
      : { id: r.refund_id as RefundId, createdAt: r.refund_created_at },
  fees: feesFromColumns(r.fee_fixed, r.fee_percentage, r.fee_total),
  settlement: settlementFromColumns({
    status: r.settlement_status,
    amount: r.settlement_amount,
    destination: r.settlement_destination,
    txHash: r.settlement_tx_hash,
    settledAt: r.settled_at
  })
})

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

/** A customer is an address, the same one on any chain counting once. */
const buyerKey = (account: string) => account.slice(account.lastIndexOf(":") + 1).toLowerCase()

export const makePgPaymentStore = (sql: SqlClient) => {
  /** Rows of `payments` (here, or a CTE of updated ones) with their refund. */
  const withRefund = (source: Fragment) => sql`SELECT p.*, r.id AS refund_id,
      r.created_at AS refund_created_at
    FROM ${source} p LEFT JOIN refunds r ON r.payment_id = p.id`

  /**
   * Data-modifying CTEs that count the rows of `source` (a CTE of one written payment) into
   * the aggregates when that row is succeeded, in the statement that wrote it: atomic with the
   * change, and each increment is one row-locked `ON CONFLICT DO UPDATE`, so concurrent
   * successes add up. Their locks come in the same order in every statement.
   */
  const countSucceeded = (source: string) => {
    const rows = sql.literal(source)
    return sql`, counted_revenue AS (
        INSERT INTO payment_daily_revenue AS d
          (partner_id, merchant_id, day, unit, transactions, revenue)
        SELECT partner_id, merchant_id, ${sql.literal(DAY_OF_CREATED_AT)}, amount_unit, 1,
          amount_value
        FROM ${rows} WHERE status = 'succeeded'
        ON CONFLICT (partner_id, merchant_id, day, unit) DO UPDATE SET
          transactions = d.transactions + excluded.transactions,
          revenue = d.revenue + excluded.revenue
      ), counted_partner_customer AS (
        INSERT INTO partner_customers AS c (partner_id, customer_key, payments)
        SELECT partner_id, buyer_key, 1 FROM ${rows}
        WHERE status = 'succeeded' AND buyer_key IS NOT NULL
        ON CONFLICT (partner_id, customer_key) DO UPDATE SET payments = c.payments + 1
      ), counted_merchant_customer AS (
        INSERT INTO merchant_customers AS c (merchant_id, customer_key, partner_id, payments)
        SELECT merchant_id, buyer_key, partner_id, 1 FROM ${rows}
        WHERE status = 'succeeded' AND buyer_key IS NOT NULL
        ON CONFLICT (merchant_id, customer_key) DO UPDATE SET payments = c.payments + 1
      )`
  }

  const findRows = (id: string) =>
    sql<PaymentRow>`${withRefund(sql.literal("payments"))} WHERE p.id = ${id}`

  /**
   * `column` is one of `values`. One value is an equality, so a page of one merchant walks its
   * index in order (PostgreSQL before 17 cannot order an index scan over `= ANY(…)`).
   */
  const oneOf = (column: string, values: ReadonlyArray<string>) =>
    values.length === 1
      ? sql`${sql.literal(column)} = ${values[0]!}`
      : sql`${sql.literal(column)} = ANY(${values}::text[])`

  /** The WHERE clause of a filter: fixed fragments, values always bound. */
  const whereOf = (f: PaymentFilter) =>
    sql.and([
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
      ...(f.assets === undefined ? [] : [sql`p.token_asset = ANY(${f.assets}::text[])`]),
      ...(f.networks === undefined ? [] : [sql`p.token_chain = ANY(${f.networks}::text[])`]),
      // strpos, not LIKE: the search is a literal substring, `%` and `_` included.
      ...(f.referenceId === undefined
        ? []
        : [sql`strpos(p.reference_folded, ${f.referenceId.toLowerCase()}) > 0`])
    ])

  /** Every match read: for filters the aggregates do not break down by. */
  const scanStats = (filter: PaymentFilter) => {
    const succeeded = sql`FROM payments p WHERE ${whereOf(filter)} AND p.status = 'succeeded'`
    return sql<StatsRow>`SELECT 'revenue' AS part, p.amount_unit AS unit,
        count(*)::text AS n, sum(p.amount_value)::text AS total ${succeeded}
        GROUP BY p.amount_unit
      UNION ALL SELECT 'customers', NULL, count(DISTINCT p.buyer_key)::text, NULL
        ${succeeded}`.pipe(Effect.map(toStats))
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
    return sql<StatsRow>`${sql.join(" UNION ALL ", false)(parts)}`.pipe(Effect.map(toStats))
  }

  return PaymentStore.of({
    insert: (p, completion) => {
      const row = sql`INSERT INTO payments ${sql.insert({
        id: p.id,
        partner_id: p.partnerId,
        merchant_id: p.merchantId,
        reference_id: p.referenceId,
        reference_folded: p.referenceId.toLowerCase(),
        amount_unit: formatUnit(p.amount.unit),
        amount_value: p.amount.value.toString(),
        status: p.status,
        failure_code: p.failureCode,
        cancelled_reason: p.cancelledReason,
        expires_at: p.expiresAt,
        created_at: p.createdAt,
        updated_at: p.updatedAt,
        final_at: p.finalAt,
        checkout: p.checkout === null ? null : JSON.stringify(p.checkout),
        token_asset: p.tokenAmount?.asset ?? null,
        token_chain: p.tokenAmount ? chainOfCaip19(p.tokenAmount.asset) : null,
        token_value: p.tokenAmount?.value.toString() ?? null,
        buyer_account: p.buyer?.account ?? null,
        buyer_key: p.buyer ? buyerKey(p.buyer.account) : null,
        buyer_provider_name: p.buyer?.providerName ?? null,
        buyer_provider_icon: p.buyer?.providerIcon ?? null,
        tx_network: p.transaction?.networkId ?? null,
        tx_hash: p.transaction?.hash ?? null,
        tx_nonce: p.transaction?.nonce ?? null,
        tx_id: p.txId,
        fee_fixed: p.fees?.fixed.toString() ?? null,
        fee_percentage: p.fees?.percentage ?? null,
        fee_total: p.fees?.total.toString() ?? null,
        settlement_amount: p.settlement?.amount.toString() ?? null,
        settlement_status: p.settlement?.status ?? null,
        settlement_destination: p.settlement?.destination ?? null,
        settlement_tx_hash: p.settlement?.txHash ?? null,
        settled_at: p.settlement?.settledAt ?? null
      })}`
      // A payment stored already succeeded is counted as one that succeeds later.
      const statement =
        p.status === "succeeded"
          ? sql`WITH inserted AS (${row} RETURNING *)${countSucceeded("inserted")} SELECT 1`
          : row
      return withCompletion(sql, statement, completion).pipe(Effect.asVoid, orDieSql)
    },

    find: (id) =>
      findRows(id).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toPayment)),
        orDieSql
      ),

    findStatus: (id) =>
      sql<StatusRow>`SELECT id, partner_id, merchant_id, status, expires_at, failure_code,
          token_asset, token_value, tx_id
        FROM payments WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toStatusRecord)),
        orDieSql
      ),

    transition: (id, from, c, completion) => {
      // A given buyer or transaction replaces the stored one whole (applyChange's meaning).
      const buyer = c.buyer ?? null
      const tx = c.transaction ?? null
      // Given fees or a given settlement replace the stored ones whole, too.
      const fees = c.fees ?? null
      const settlement = c.settlement ?? null
      const updated = sql`(UPDATE payments SET
          status = ${c.status},
          updated_at = ${c.at},
          final_at = coalesce(${c.finalAt}::timestamptz, final_at),
          failure_code = coalesce(${c.failureCode ?? null}::text, failure_code),
          cancelled_reason = coalesce(${c.cancelledReason ?? null}::text, cancelled_reason),
          token_asset = coalesce(${c.tokenAmount?.asset ?? null}::text, token_asset),
          token_chain = coalesce(${c.tokenAmount ? chainOfCaip19(c.tokenAmount.asset) : null}::text,
            token_chain),
          token_value = coalesce(${c.tokenAmount?.value.toString() ?? null}::numeric, token_value),
          buyer_account = coalesce(${buyer?.account ?? null}::text, buyer_account),
          buyer_key = coalesce(${buyer ? buyerKey(buyer.account) : null}::text, buyer_key),
          buyer_provider_name = CASE WHEN ${buyer !== null}::boolean
            THEN ${buyer?.providerName ?? null}::text ELSE buyer_provider_name END,
          buyer_provider_icon = CASE WHEN ${buyer !== null}::boolean
            THEN ${buyer?.providerIcon ?? null}::text ELSE buyer_provider_icon END,
          tx_network = CASE WHEN ${tx !== null}::boolean
            THEN ${tx?.networkId ?? null}::text ELSE tx_network END,
          tx_hash = CASE WHEN ${tx !== null}::boolean THEN ${tx?.hash ?? null}::text ELSE tx_hash END,
          tx_nonce = CASE WHEN ${tx !== null}::boolean
            THEN ${tx?.nonce ?? null}::bigint ELSE tx_nonce END,
          tx_id = coalesce(${c.txId ?? null}::text, tx_id),
          fee_fixed = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.fixed.toString() ?? null}::numeric ELSE fee_fixed END,
          fee_percentage = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.percentage ?? null}::text ELSE fee_percentage END,
          fee_total = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.total.toString() ?? null}::numeric ELSE fee_total END,
          settlement_amount = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.amount.toString() ?? null}::numeric ELSE settlement_amount END,
          settlement_status = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.status ?? null}::text ELSE settlement_status END,
          settlement_destination = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.destination ?? null}::text ELSE settlement_destination END,
          settlement_tx_hash = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.txHash ?? null}::text ELSE settlement_tx_hash END,
          settled_at = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.settledAt ?? null}::timestamptz ELSE settled_at END
        WHERE id = ${id} AND status = ${from}
        RETURNING *)`
      const succeeds = c.status === "succeeded" && from !== "succeeded"
      // The job goes in with the change, in its statement, only when the change applied; one
      // the payment has already of its kind is kept.
      const queued =
        c.enqueue === undefined
          ? sql``
          : sql`, queued AS (
              INSERT INTO chain_jobs ${sql.literal(JOB_COLUMNS)}
              SELECT ${jobValues(sql, c.enqueue)} FROM updated
              ON CONFLICT (payment_id, kind) DO NOTHING
            )`
      const apply =
        sql<PaymentRow>`WITH updated AS ${updated}${succeeds ? countSucceeded("updated") : sql``}${queued}
        ${withRefund(sql.literal("updated"))}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toPayment))
        )
      // The completion is written only when the change applied, in its transaction.
      return (
        completion === undefined
          ? apply
          : sql.withTransaction(
              Effect.tap(apply, (result) =>
                Option.isSome(result) ? writeCompletion(sql, completion) : Effect.void
              )
            )
      ).pipe(orDieSql)
    },

    expireDue: (now, limit) =>
      // The due rows are picked once (a materialized CTE, not a subquery the planner may run
      // again per row and, with LIMIT, pick other rows); rows another instance is expiring
      // right now are skipped, not waited for.
      sql<PaymentRow>`WITH due AS MATERIALIZED (
          SELECT id FROM payments
          WHERE status = 'requires_action' AND expires_at <= ${now}
          ORDER BY expires_at, id LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), updated AS (
          UPDATE payments p SET status = 'expired', updated_at = ${now}, final_at = ${now}
          FROM due WHERE p.id = due.id AND p.status = 'requires_action'
          RETURNING p.*
        ) ${withRefund(sql.literal("updated"))}`.pipe(
        Effect.map((rows) => rows.map(toPayment)),
        orDieSql
      ),

    addRefund: (id, refund, completion) =>
      withCompletion(
        sql,
        sql`INSERT INTO refunds (id, payment_id, created_at)
          VALUES (${refund.id}, ${id}, ${refund.createdAt})`,
        completion
      ).pipe(
        Effect.asVoid,
        onUniqueViolation("refunds_one_per_payment", () =>
          sql<{ readonly id: string }>`SELECT id FROM refunds WHERE payment_id = ${id}`.pipe(
            Effect.flatMap(([existing]) =>
              Effect.fail(new RefundExists({ paymentId: id, refundId: existing?.id ?? "" }))
            )
          )
        ),
        orDieSql
      ),

    list: (q) => {
      const where = whereOf(q.filter)
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
      return sql<PaymentRow>`${withRefund(sql.literal("payments"))} WHERE ${where} ${after}
        ORDER BY ${key} ${dir}, p.id ${dir} LIMIT ${q.limit}`.pipe(
        Effect.map((rows) => rows.map(toPayment)),
        orDieSql
      )
    },

    stats: (filter) => {
      const plan = planStats(filter)
      if (plan._tag === "Empty") return Effect.succeed(noStats)
      return (plan._tag === "Scan" ? scanStats(filter) : aggregateStats(filter, plan)).pipe(
        orDieSql
      )
    }
  })
}
