/**
 * Aggregates for payment statistics, kept exact by the payment store in the
 * statement that makes a payment succeeded (payments never leave succeeded):
 * revenue and count per merchant, UTC day and unit; the distinct customers
 * (buyer addresses) of each partner and of each merchant. Revenue is an
 * unconstrained `numeric`: a day's total of amounts up to 2^256 - 1 can pass
 * the 78 digits of a single amount. Partial indexes over succeeded payments
 * serve the edges of a time range and its distinct customers (index-only, with
 * the buyer included). Existing succeeded payments are counted in.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The UTC day of `created_at`, counted from 1970-01-01 (the store's own `utcDay`). */
export const DAY_OF_CREATED_AT = "floor(extract(epoch FROM created_at) / 86400)::integer"

const statements = [
  // Room on each page, so the frequent increments stay heap-only (no index writes).
  `CREATE TABLE payment_daily_revenue (
    partner_id text COLLATE "C" NOT NULL,
    merchant_id text COLLATE "C" NOT NULL,
    day integer NOT NULL,
    unit text NOT NULL,
    transactions bigint NOT NULL,
    revenue numeric NOT NULL,
    PRIMARY KEY (partner_id, merchant_id, day, unit)
  ) WITH (fillfactor = 80)`,
  `CREATE INDEX payment_daily_revenue_by_partner_day ON payment_daily_revenue (partner_id, day)`,
  `CREATE TABLE partner_customers (
    partner_id text COLLATE "C" NOT NULL,
    customer_key text COLLATE "C" NOT NULL,
    payments bigint NOT NULL,
    PRIMARY KEY (partner_id, customer_key)
  ) WITH (fillfactor = 80)`,
  `CREATE TABLE merchant_customers (
    merchant_id text COLLATE "C" NOT NULL,
    customer_key text COLLATE "C" NOT NULL,
    partner_id text COLLATE "C" NOT NULL,
    payments bigint NOT NULL,
    PRIMARY KEY (merchant_id, customer_key)
  ) WITH (fillfactor = 80)`,
  `CREATE INDEX payments_succeeded_by_partner_date ON payments (partner_id, created_at)
    INCLUDE (buyer_key) WHERE status = 'succeeded'`,
  `CREATE INDEX payments_succeeded_by_merchant_date ON payments (merchant_id, created_at)
    INCLUDE (partner_id, buyer_key) WHERE status = 'succeeded'`,
  `INSERT INTO payment_daily_revenue (partner_id, merchant_id, day, unit, transactions, revenue)
    SELECT partner_id, merchant_id, ${DAY_OF_CREATED_AT}, amount_unit, count(*), sum(amount_value)
    FROM payments WHERE status = 'succeeded' GROUP BY 1, 2, 3, 4`,
  `INSERT INTO partner_customers (partner_id, customer_key, payments)
    SELECT partner_id, buyer_key, count(*) FROM payments
    WHERE status = 'succeeded' AND buyer_key IS NOT NULL GROUP BY 1, 2`,
  `INSERT INTO merchant_customers (merchant_id, customer_key, partner_id, payments)
    SELECT merchant_id, buyer_key, min(partner_id), count(*) FROM payments
    WHERE status = 'succeeded' AND buyer_key IS NOT NULL GROUP BY 1, 2`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
