/**
 * Aggregates for payment statistics, kept exact by the payment store in the
 * transaction of each payment that succeeds (payments never leave succeeded):
 * revenue and count per merchant, UTC day and unit; the distinct customers
 * (buyer addresses) of each partner and of each merchant. Revenue is an exact
 * decimal (a day's total may pass 2^63, token amounts go up to 2^256 - 1), with
 * a 63-bit copy while it fits, for sums in SQL. Partial indexes over succeeded
 * payments serve the edges of a time range and its distinct customers. Existing
 * succeeded payments are counted in.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const DAY_MS = 86_400_000
const MAX_I63 = 2n ** 63n - 1n
const SPLIT = 1_000_000_000
/** Written into the SQL, not bound: a bound JS number divides as a real. */
const SPLIT_SQL = String(SPLIT)

const statements = [
  `CREATE TABLE payment_daily_revenue (
    partner_id TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    day INTEGER NOT NULL,
    unit TEXT NOT NULL,
    transactions INTEGER NOT NULL,
    revenue TEXT NOT NULL,
    revenue_i63 INTEGER,
    PRIMARY KEY (partner_id, merchant_id, day, unit)
  ) STRICT, WITHOUT ROWID`,
  `CREATE INDEX payment_daily_revenue_by_partner_day
    ON payment_daily_revenue (partner_id, day, unit, transactions, revenue_i63, revenue)`,
  `CREATE TABLE partner_customers (
    partner_id TEXT NOT NULL,
    customer_key TEXT NOT NULL,
    payments INTEGER NOT NULL,
    PRIMARY KEY (partner_id, customer_key)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE merchant_customers (
    merchant_id TEXT NOT NULL,
    customer_key TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    payments INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, customer_key)
  ) STRICT, WITHOUT ROWID`,
  `CREATE INDEX payments_succeeded_by_partner_date
    ON payments (partner_id, created_at, buyer_key) WHERE status = 'succeeded'`,
  `CREATE INDEX payments_succeeded_by_merchant_date
    ON payments (merchant_id, created_at, buyer_key, partner_id) WHERE status = 'succeeded'`,
  `INSERT INTO partner_customers (partner_id, customer_key, payments)
    SELECT partner_id, buyer_key, count(*) FROM payments
    WHERE status = 'succeeded' AND buyer_key IS NOT NULL GROUP BY partner_id, buyer_key`,
  `INSERT INTO merchant_customers (merchant_id, customer_key, partner_id, payments)
    SELECT merchant_id, buyer_key, partner_id, count(*) FROM payments
    WHERE status = 'succeeded' AND buyer_key IS NOT NULL GROUP BY merchant_id, buyer_key`
]

/** The UTC day of a time in ms, rounded down also before 1970 (SQLite's `/` truncates). */
const DAY = `((created_at - ((created_at % ${DAY_MS}) + ${DAY_MS}) % ${DAY_MS}) / ${DAY_MS})`

interface DailyRow {
  readonly partner_id: string
  readonly merchant_id: string
  readonly day: number
  readonly unit: string
  readonly transactions: number
  readonly high: string | null
  readonly low: string | null
}

/** The daily revenue of the payments already succeeded, summed exactly. */
const backfillDailyRevenue = (db: SqliteConnection): void => {
  const daily = new Map<
    string,
    { partner_id: string; merchant_id: string; day: number; unit: string; n: number; total: bigint }
  >()
  const add = (r: Omit<DailyRow, "high" | "low" | "transactions">, n: number, amount: bigint) => {
    const key = JSON.stringify([r.partner_id, r.merchant_id, r.day, r.unit])
    const entry = daily.get(key)
    if (entry === undefined) daily.set(key, { ...r, n, total: amount })
    else {
      entry.n += n
      entry.total += amount
    }
  }
  // 63-bit amounts summed in SQL by their high and low parts (as in the store's own sums).
  const sums = db
    .prepare(`SELECT partner_id, merchant_id, ${DAY} AS day,
      amount_unit AS unit, count(*) AS transactions,
      CAST(sum(amount_minor / ${SPLIT_SQL}) AS TEXT) AS high,
      CAST(sum(amount_minor % ${SPLIT_SQL}) AS TEXT) AS low
    FROM payments WHERE status = 'succeeded' AND amount_minor IS NOT NULL
    GROUP BY partner_id, merchant_id, day, amount_unit`)
    .all() as ReadonlyArray<DailyRow>
  for (const r of sums) {
    add(r, r.transactions, BigInt(r.high ?? 0) * BigInt(SPLIT) + BigInt(r.low ?? 0))
  }
  const large = db
    .prepare(`SELECT partner_id, merchant_id, ${DAY} AS day, amount_unit AS unit,
      amount_value AS value
    FROM payments WHERE status = 'succeeded' AND amount_minor IS NULL`)
    .all() as ReadonlyArray<
    Omit<DailyRow, "high" | "low" | "transactions"> & { readonly value: string }
  >
  for (const r of large) add(r, 1, BigInt(r.value))
  const insert = db.prepare(
    `INSERT INTO payment_daily_revenue
      (partner_id, merchant_id, day, unit, transactions, revenue, revenue_i63)
    VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  for (const r of daily.values()) {
    insert.run(
      r.partner_id,
      r.merchant_id,
      r.day,
      r.unit,
      r.n,
      r.total.toString(),
      r.total <= MAX_I63 ? r.total : null
    )
  }
}

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
  backfillDailyRevenue(db)
}
