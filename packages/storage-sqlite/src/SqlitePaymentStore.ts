/**
 * The payment store on SQLite. Listings are keyset-paginated on indexed
 * (partner or merchant, sort key, id). Statistics are exact (63-bit sums in
 * SQL, larger amounts summed as bigints) and read from aggregates the store
 * keeps in the transaction of each payment that succeeds (see PaymentStatsPlan),
 * so their cost does not grow with the number of matches.
 */
import {
  type AmountUnit,
  type Caip10,
  type Caip19,
  chainOfCaip19,
  feesFromColumns,
  findCurrency,
  type IdempotencyCompletion,
  type MerchantId,
  type NewChainJob,
  noStats,
  type PartnerId,
  type Payment,
  type PaymentFees,
  type PaymentFilter,
  type PaymentId,
  type PaymentStats,
  type PaymentStatus,
  PaymentStore,
  planStats,
  RefundExists,
  type RefundId,
  type StatsPlan,
  settlementFromColumns,
  statsTotals,
  utcDay
} from "@pay/core"
import { Effect, Option } from "effect"
import { settlementToStorage } from "./SqliteChainJobStore.js"
import type { SqliteConnection, SqliteStatement, SqliteValue } from "./SqliteDatabase.js"
import { isUniqueViolation } from "./SqliteErrors.js"

interface PaymentRow {
  id: string
  partner_id: string
  merchant_id: string
  reference_id: string
  amount_unit: string
  amount_value: string
  status: string
  failure_code: string | null
  cancelled_reason: string | null
  expires_at: number
  created_at: number
  updated_at: number
  final_at: number | null
  checkout: string | null
  token_asset: string | null
  token_value: string | null
  buyer_account: string | null
  buyer_provider_name: string | null
  buyer_provider_icon: string | null
  tx_network: string | null
  tx_hash: string | null
  tx_nonce: number | null
  tx_id: string | null
  fee_fixed: string | null
  fee_percentage: string | null
  fee_total: string | null
  settlement_amount: string | null
  settlement_status: string | null
  settlement_destination: string | null
  settlement_tx_hash: string | null
  settled_at: number | null
  refund_id: string | null
  refund_created_at: number | null
}

type StatusRow = Pick<
  PaymentRow,
  | "id"
  | "partner_id"
  | "merchant_id"
  | "status"
  | "expires_at"
  | "failure_code"
  | "token_asset"
  | "token_value"
  | "tx_id"
>

const MAX_I63 = 2n ** 63n - 1n
const SPLIT = 1_000_000_000
const SORT_WIDTH = 78 // digits of 2^256 - 1

const sortable = (value: bigint) => value.toString().padStart(SORT_WIDTH, "0")

/** Stored units were validated on the way in: read them back without re-validating. */
const unitFromStorage = (unit: string): AmountUnit => {
  if (unit.startsWith("iso4217/")) {
    const currency = findCurrency(unit.slice("iso4217/".length))
    if (currency === undefined) throw new Error(`stored payment has an unknown currency: ${unit}`)
    return { kind: "fiat", currency }
  }
  return { kind: "token", asset: unit.slice("caip19/".length) as Caip19 }
}

const unitToStorage = (unit: AmountUnit) =>
  unit.kind === "fiat" ? `iso4217/${unit.currency.code}` : `caip19/${unit.asset}`

const toPayment = (r: PaymentRow): Payment => ({
  id: r.id as PaymentId,
  partnerId: r.partner_id as PartnerId,
  merchantId: r.merchant_id as MerchantId,
  referenceId: r.reference_id,
  amount: { unit: unitFromStorage(r.amount_unit), value: BigInt(r.amount_value) },
  status: r.status as PaymentStatus,
  failureCode: r.failure_code as Payment["failureCode"],
  cancelledReason: r.cancelled_reason as Payment["cancelledReason"],
  expiresAt: new Date(r.expires_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  finalAt: r.final_at === null ? null : new Date(r.final_at),
  checkout: r.checkout === null ? null : (JSON.parse(r.checkout) as Payment["checkout"]),
  tokenAmount:
    r.token_asset === null || r.token_value === null
      ? null
      : { asset: r.token_asset as Caip19, value: BigInt(r.token_value) },
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
      : { networkId: r.tx_network, hash: r.tx_hash, nonce: r.tx_nonce },
  txId: r.tx_id,
  refund:
    r.refund_id === null || r.refund_created_at === null
      ? null
      : { id: r.refund_id as RefundId, createdAt: new Date(r.refund_created_at) },
  fees: feesFromColumns(r.fee_fixed, r.fee_percentage, r.fee_total),
  settlement: settlementFromColumns({
    status: r.settlement_status,
    amount: r.settlement_amount,
    destination: r.settlement_destination,
    txHash: r.settlement_tx_hash,
    settledAt: r.settled_at === null ? null : new Date(r.settled_at)
  })
})

/** The payment's fee columns: fixed, percentage, total. */
const feesToStorage = (f: PaymentFees | null): Array<SqliteValue> => [
  f?.fixed.toString() ?? null,
  f?.percentage ?? null,
  f?.total.toString() ?? null
]

const buyerKey = (account: string) => account.slice(account.lastIndexOf(":") + 1).toLowerCase()

const SELECT = `SELECT p.*, r.id AS refund_id, r.created_at AS refund_created_at
  FROM payments p LEFT JOIN refunds r ON r.payment_id = p.id`

const EFFECTIVE_STATUS = `CASE WHEN p.status = 'requires_action' AND p.expires_at <= ?
  THEN 'expired' ELSE p.status END`

/** `CASE WHEN ? = 1 THEN ? …` pairs: each column's new value, when one is given. */
const replacing = <A>(
  value: A | undefined,
  columns: (value: A | null) => Array<SqliteValue>
): Array<SqliteValue> =>
  columns(value ?? null).flatMap((column) => [value === undefined ? 0 : 1, column])

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")

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

export const makeSqlitePaymentStore = (
  db: SqliteConnection,
  complete: (completion: IdempotencyCompletion | undefined) => void,
  /** Queues a chain job in the caller's transaction (the chain job store's own insert). */
  enqueue: (job: NewChainJob) => void
) => {
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

  const insertSql = db.prepare(`INSERT INTO payments (id, partner_id, merchant_id, reference_id,
    reference_folded, amount_unit, amount_value, amount_minor, amount_sort, status, failure_code,
    cancelled_reason, expires_at, created_at, updated_at, final_at, checkout, token_asset,
    token_chain, token_value, buyer_account, buyer_key, buyer_provider_name, buyer_provider_icon,
    tx_network, tx_hash, tx_nonce, tx_id, fee_fixed, fee_percentage, fee_total, settlement_amount,
    settlement_status, settlement_destination, settlement_tx_hash, settled_at)
    VALUES (${placeholders(36)})`)
  const findSql = db.prepare(`${SELECT} WHERE p.id = ?`)
  const findStatusSql = db.prepare(`SELECT id, partner_id, merchant_id, status, expires_at,
    failure_code, token_asset, token_value, tx_id FROM payments WHERE id = ?`)
  const transitionSql = db.prepare(`UPDATE payments SET
      status = ?, updated_at = ?,
      final_at = coalesce(?, final_at),
      failure_code = coalesce(?, failure_code),
      cancelled_reason = coalesce(?, cancelled_reason),
      token_asset = coalesce(?, token_asset),
      token_chain = coalesce(?, token_chain),
      token_value = coalesce(?, token_value),
      buyer_account = coalesce(?, buyer_account),
      buyer_key = coalesce(?, buyer_key),
      buyer_provider_name = CASE WHEN ? = 1 THEN ? ELSE buyer_provider_name END,
      buyer_provider_icon = CASE WHEN ? = 1 THEN ? ELSE buyer_provider_icon END,
      tx_network = CASE WHEN ? = 1 THEN ? ELSE tx_network END,
      tx_hash = CASE WHEN ? = 1 THEN ? ELSE tx_hash END,
      tx_nonce = CASE WHEN ? = 1 THEN ? ELSE tx_nonce END,
      tx_id = coalesce(?, tx_id),
      fee_fixed = CASE WHEN ? = 1 THEN ? ELSE fee_fixed END,
      fee_percentage = CASE WHEN ? = 1 THEN ? ELSE fee_percentage END,
      fee_total = CASE WHEN ? = 1 THEN ? ELSE fee_total END,
      settlement_amount = CASE WHEN ? = 1 THEN ? ELSE settlement_amount END,
      settlement_status = CASE WHEN ? = 1 THEN ? ELSE settlement_status END,
      settlement_destination = CASE WHEN ? = 1 THEN ? ELSE settlement_destination END,
      settlement_tx_hash = CASE WHEN ? = 1 THEN ? ELSE settlement_tx_hash END,
      settled_at = CASE WHEN ? = 1 THEN ? ELSE settled_at END
    WHERE id = ? AND status = ?`)
  const dueSql = db.prepare(`SELECT id FROM payments
    WHERE status = 'requires_action' AND expires_at <= ? ORDER BY expires_at LIMIT ?`)
  const expireSql = db.prepare(`UPDATE payments SET status = 'expired', updated_at = ?, final_at = ?
    WHERE id = ? AND status = 'requires_action'`)
  const refundSql = db.prepare("INSERT INTO refunds (id, payment_id, created_at) VALUES (?, ?, ?)")
  const refundOfSql = db.prepare("SELECT id FROM refunds WHERE payment_id = ?")
  const dailyRevenueSql = db.prepare(`SELECT revenue FROM payment_daily_revenue
    WHERE partner_id = ? AND merchant_id = ? AND day = ? AND unit = ?`)
  const dailyPutSql = db.prepare(`INSERT INTO payment_daily_revenue
      (partner_id, merchant_id, day, unit, transactions, revenue, revenue_i63)
    VALUES (?, ?, ?, ?, 1, ?, ?)
    ON CONFLICT (partner_id, merchant_id, day, unit) DO UPDATE SET
      transactions = transactions + 1, revenue = excluded.revenue, revenue_i63 = excluded.revenue_i63`)
  const partnerCustomerSql = db.prepare(`INSERT INTO partner_customers
      (partner_id, customer_key, payments) VALUES (?, ?, 1)
    ON CONFLICT (partner_id, customer_key) DO UPDATE SET payments = payments + 1`)
  const merchantCustomerSql = db.prepare(`INSERT INTO merchant_customers
      (merchant_id, customer_key, partner_id, payments) VALUES (?, ?, ?, 1)
    ON CONFLICT (merchant_id, customer_key) DO UPDATE SET payments = payments + 1`)

  const find = (id: string) => {
    const row = findSql.get(id) as PaymentRow | undefined
    return row === undefined ? Option.none() : Option.some(toPayment(row))
  }

  /**
   * Counts a payment that has just become succeeded into the aggregates; called inside the
   * write transaction that made it so. The revenue is read, added to and written back: safe,
   * as that transaction began with its write to the payment, so it holds SQLite's one write
   * lock and reads the latest total, which nobody else can change before it commits.
   */
  const countSucceeded = (p: Payment) => {
    const unit = unitToStorage(p.amount.unit)
    const day = utcDay(p.createdAt)
    const stored = dailyRevenueSql.get(p.partnerId, p.merchantId, day, unit) as
      | { revenue: string }
      | undefined
    const total = (stored === undefined ? 0n : BigInt(stored.revenue)) + p.amount.value
    dailyPutSql.run(
      p.partnerId,
      p.merchantId,
      day,
      unit,
      total.toString(),
      total <= MAX_I63 ? total : null
    )
    if (p.buyer !== null) {
      const customer = buyerKey(p.buyer.account)
      partnerCustomerSql.run(p.partnerId, customer)
      merchantCustomerSql.run(p.merchantId, customer, p.partnerId)
    }
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

  return PaymentStore.of({
    insert: (p, completion) =>
      Effect.sync(() =>
        db.transaction(() => {
          const value = p.amount.value
          insertSql.run(
            p.id,
            p.partnerId,
            p.merchantId,
            p.referenceId,
            p.referenceId.toLowerCase(),
            unitToStorage(p.amount.unit),
            value.toString(),
            value <= MAX_I63 ? value : null,
            sortable(value),
            p.status,
            p.failureCode,
            p.cancelledReason,
            p.expiresAt.getTime(),
            p.createdAt.getTime(),
            p.updatedAt.getTime(),
            p.finalAt?.getTime() ?? null,
            p.checkout === null ? null : JSON.stringify(p.checkout),
            p.tokenAmount?.asset ?? null,
            p.tokenAmount ? chainOfCaip19(p.tokenAmount.asset) : null,
            p.tokenAmount?.value.toString() ?? null,
            p.buyer?.account ?? null,
            p.buyer ? buyerKey(p.buyer.account) : null,
            p.buyer?.providerName ?? null,
            p.buyer?.providerIcon ?? null,
            p.transaction?.networkId ?? null,
            p.transaction?.hash ?? null,
            p.transaction?.nonce ?? null,
            p.txId,
            ...feesToStorage(p.fees),
            ...settlementToStorage(p.settlement)
          )
          if (p.status === "succeeded") countSucceeded(p)
          complete(completion)
        })
      ),

    find: (id) => Effect.sync(() => find(id)),

    findStatus: (id) =>
      Effect.sync(() => {
        const r = findStatusSql.get(id) as StatusRow | undefined
        if (r === undefined) return Option.none()
        return Option.some({
          id: r.id as PaymentId,
          partnerId: r.partner_id as PartnerId,
          merchantId: r.merchant_id as MerchantId,
          status: r.status as PaymentStatus,
          expiresAt: new Date(r.expires_at),
          failureCode: r.failure_code as Payment["failureCode"],
          tokenAmount:
            r.token_asset === null || r.token_value === null
              ? null
              : { asset: r.token_asset as Caip19, value: BigInt(r.token_value) },
          txId: r.tx_id
        })
      }),

    transition: (id, from, c, completion) =>
      Effect.sync(() =>
        db.transaction(() => {
          const { changes } = transitionSql.run(
            c.status,
            c.at.getTime(),
            c.finalAt?.getTime() ?? null,
            c.failureCode ?? null,
            c.cancelledReason ?? null,
            c.tokenAmount?.asset ?? null,
            c.tokenAmount ? chainOfCaip19(c.tokenAmount.asset) : null,
            c.tokenAmount?.value.toString() ?? null,
            c.buyer?.account ?? null,
            c.buyer ? buyerKey(c.buyer.account) : null,
            c.buyer ? 1 : 0,
            c.buyer?.providerName ?? null,
            c.buyer ? 1 : 0,
            c.buyer?.providerIcon ?? null,
            // A new transaction replaces the old one whole (a null nonce included).
            c.transaction ? 1 : 0,
            c.transaction?.networkId ?? null,
            c.transaction ? 1 : 0,
            c.transaction?.hash ?? null,
            c.transaction ? 1 : 0,
            c.transaction?.nonce ?? null,
            c.txId ?? null,
            // Given fees or a given settlement replace the stored ones whole.
            ...replacing(c.fees, feesToStorage),
            ...replacing(c.settlement, settlementToStorage),
            id,
            from
          )
          if (Number(changes) !== 1) return Option.none()
          const updated = find(id)
          if (c.status === "succeeded" && from !== "succeeded" && Option.isSome(updated)) {
            countSucceeded(updated.value)
          }
          // Only with the change that applied; a job of the kind already queued is kept.
          if (c.enqueue !== undefined) enqueue(c.enqueue)
          complete(completion)
          return updated
        })
      ),

    expireDue: (now, limit) =>
      Effect.sync(() =>
        db.transaction(() => {
          const ids = (dueSql.all(now.getTime(), limit) as Array<{ id: string }>).map((r) => r.id)
          const expired: Array<Payment> = []
          for (const id of ids) {
            if (Number(expireSql.run(now.getTime(), now.getTime(), id).changes) === 1) {
              expired.push(...Option.toArray(find(id)))
            }
          }
          return expired
        })
      ),

    addRefund: (id, refund, completion) =>
      Effect.suspend(() => {
        try {
          db.transaction(() => {
            refundSql.run(refund.id, id, refund.createdAt.getTime())
            complete(completion)
          })
          return Effect.void
        } catch (error) {
          if (!isUniqueViolation(error)) throw error
          const existing = refundOfSql.get(id) as { id: string } | undefined
          return Effect.fail(new RefundExists({ paymentId: id, refundId: existing?.id ?? "" }))
        }
      }),

    list: (q) =>
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

    stats: (filter) =>
      Effect.sync(() => {
        const plan = planStats(filter)
        if (plan._tag === "Empty") return noStats
        // One read transaction: every part of the answer from the same snapshot.
        return db.transaction(() =>
          plan._tag === "Scan" ? scanStats(filter) : aggregateStats(filter, plan)
        )
      })
  })
}
