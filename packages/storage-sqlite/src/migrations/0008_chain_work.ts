/**
 * Durable chain work (core chainwork/ChainJob.ts): jobs, one per payment and
 * kind, claimed under a lease token that fences their writes; the signed
 * transactions each job recorded before sending them; and each collector's
 * nonce sequence per chain. Payments get their fees and settlement. uint256
 * values are decimal TEXT (exact up to 2^256 - 1); addresses are kept as
 * given (checksummed); times are milliseconds.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE chain_jobs (
    id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL REFERENCES payments (id),
    kind TEXT NOT NULL CHECK (kind IN ('collect', 'settle')),
    chain_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'done')),
    run_at INTEGER NOT NULL,
    lease_token TEXT,
    lease_until INTEGER,
    nonce INTEGER,
    destination TEXT,
    attempts INTEGER NOT NULL,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (payment_id, kind)
  ) STRICT`,
  `CREATE INDEX chain_jobs_due ON chain_jobs (run_at, id) WHERE state = 'active'`,
  `CREATE TABLE chain_transfers (
    hash TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES chain_jobs (id),
    chain_id TEXT NOT NULL,
    sender TEXT NOT NULL,
    nonce INTEGER NOT NULL,
    purpose TEXT NOT NULL CHECK (purpose IN ('call', 'cancel')),
    to_address TEXT NOT NULL,
    data TEXT NOT NULL,
    gas TEXT NOT NULL,
    max_fee_per_gas TEXT NOT NULL,
    max_priority_fee_per_gas TEXT NOT NULL,
    raw TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE INDEX chain_transfers_by_job ON chain_transfers (job_id, nonce)`,
  `CREATE TABLE chain_nonces (
    chain_id TEXT NOT NULL,
    sender TEXT NOT NULL,
    next_nonce INTEGER NOT NULL,
    PRIMARY KEY (chain_id, sender)
  ) STRICT, WITHOUT ROWID`,
  "ALTER TABLE payments ADD COLUMN fee_fixed TEXT",
  "ALTER TABLE payments ADD COLUMN fee_percentage TEXT",
  "ALTER TABLE payments ADD COLUMN fee_total TEXT",
  "ALTER TABLE payments ADD COLUMN settlement_amount TEXT",
  `ALTER TABLE payments ADD COLUMN settlement_status TEXT
    CHECK (settlement_status IN ('pending', 'settled', 'no_destination'))`,
  "ALTER TABLE payments ADD COLUMN settlement_destination TEXT",
  "ALTER TABLE payments ADD COLUMN settlement_tx_hash TEXT",
  "ALTER TABLE payments ADD COLUMN settled_at INTEGER"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
