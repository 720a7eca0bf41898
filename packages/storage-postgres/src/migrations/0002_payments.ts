/**
 * Payments and refunds. Amounts are `numeric(78,0)`: exact, wide enough for
 * 2^256 - 1, and they sort and sum numerically in SQL. Indexes follow the
 * listings: (partner or merchant, creation time, id), (partner, amount, id),
 * and the unpaid ones by expiry for the sweeper.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE payments (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL REFERENCES partners (id),
    merchant_id text COLLATE "C" NOT NULL REFERENCES merchants (id),
    reference_id text NOT NULL,
    reference_folded text NOT NULL,
    amount_unit text NOT NULL,
    amount_value numeric(78, 0) NOT NULL,
    status text NOT NULL CHECK (status IN
      ('requires_action', 'processing', 'succeeded', 'failed', 'expired', 'cancelled')),
    failure_code text,
    cancelled_reason text,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    final_at timestamptz,
    checkout jsonb,
    token_asset text,
    token_chain text,
    token_value numeric(78, 0),
    buyer_account text,
    buyer_key text,
    buyer_provider_name text,
    buyer_provider_icon text,
    tx_network text,
    tx_hash text,
    tx_nonce bigint,
    tx_id text
  )`,
  `CREATE INDEX payments_by_partner_date ON payments (partner_id, created_at, id)`,
  `CREATE INDEX payments_by_merchant_date ON payments (merchant_id, created_at, id)`,
  `CREATE INDEX payments_by_partner_amount ON payments (partner_id, amount_value, id)`,
  `CREATE INDEX payments_due ON payments (expires_at, id) WHERE status = 'requires_action'`,
  `CREATE TABLE refunds (
    id text COLLATE "C" PRIMARY KEY,
    payment_id text COLLATE "C" NOT NULL REFERENCES payments (id),
    created_at timestamptz NOT NULL,
    CONSTRAINT refunds_one_per_payment UNIQUE (payment_id)
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
