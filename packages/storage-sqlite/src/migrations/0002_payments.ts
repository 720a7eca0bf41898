/**
 * Payments and refunds. Amounts are exact: the decimal string, a 63-bit
 * integer copy for SQL sums when it fits, and a zero-padded copy that sorts
 * numerically as text (token amounts go up to 2^256 - 1).
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE payments (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners (id),
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    reference_id TEXT NOT NULL,
    reference_folded TEXT NOT NULL,
    amount_unit TEXT NOT NULL,
    amount_value TEXT NOT NULL,
    amount_minor INTEGER,
    amount_sort TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
      ('requires_action', 'processing', 'succeeded', 'failed', 'expired', 'cancelled')),
    failure_code TEXT,
    cancelled_reason TEXT,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    final_at INTEGER,
    checkout TEXT,
    token_asset TEXT,
    token_chain TEXT,
    token_value TEXT,
    buyer_account TEXT,
    buyer_key TEXT,
    buyer_provider_name TEXT,
    buyer_provider_icon TEXT,
    tx_network TEXT,
    tx_hash TEXT,
    tx_nonce INTEGER,
    tx_id TEXT
  ) STRICT`,
  `CREATE INDEX payments_by_partner_date ON payments (partner_id, created_at, id)`,
  `CREATE INDEX payments_by_merchant_date ON payments (merchant_id, created_at, id)`,
  `CREATE INDEX payments_by_partner_amount ON payments (partner_id, amount_sort, id)`,
  `CREATE INDEX payments_due ON payments (expires_at) WHERE status = 'requires_action'`,
  `CREATE TABLE refunds (
    id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL UNIQUE REFERENCES payments (id),
    created_at INTEGER NOT NULL
  ) STRICT`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
