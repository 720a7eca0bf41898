/**
 * Durable chain work (core chainwork/ChainJob.ts): jobs, one per payment and
 * kind, claimed under a lease token that fences their writes (due active jobs
 * found through a partial index); the signed transactions each job recorded
 * before sending them; and each collector's nonce sequence per chain.
 * Payments get their fees and settlement. uint256 values are `numeric(78,0)`;
 * ids and hashes sort bytewise (COLLATE "C"), as "oldest first" ties rely on;
 * addresses are kept as given (checksummed).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE chain_jobs (
    id text COLLATE "C" PRIMARY KEY,
    payment_id text COLLATE "C" NOT NULL REFERENCES payments (id),
    kind text NOT NULL CHECK (kind IN ('collect', 'settle')),
    chain_id text NOT NULL,
    payload jsonb NOT NULL,
    state text NOT NULL CHECK (state IN ('active', 'done')),
    run_at timestamptz NOT NULL,
    lease_token text,
    lease_until timestamptz,
    nonce bigint,
    destination text,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT chain_jobs_one_per_payment_kind UNIQUE (payment_id, kind)
  )`,
  `CREATE INDEX chain_jobs_due ON chain_jobs (run_at, id) WHERE state = 'active'`,
  `CREATE TABLE chain_transfers (
    hash text COLLATE "C" PRIMARY KEY,
    job_id text COLLATE "C" NOT NULL REFERENCES chain_jobs (id),
    chain_id text NOT NULL,
    sender text NOT NULL,
    nonce bigint NOT NULL,
    purpose text NOT NULL CHECK (purpose IN ('call', 'cancel')),
    to_address text NOT NULL,
    data text NOT NULL,
    gas numeric(78, 0) NOT NULL,
    max_fee_per_gas numeric(78, 0) NOT NULL,
    max_priority_fee_per_gas numeric(78, 0) NOT NULL,
    raw text NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX chain_transfers_by_job ON chain_transfers (job_id, nonce)`,
  `CREATE TABLE chain_nonces (
    chain_id text COLLATE "C" NOT NULL,
    sender text COLLATE "C" NOT NULL,
    next_nonce bigint NOT NULL,
    PRIMARY KEY (chain_id, sender)
  )`,
  `ALTER TABLE payments
    ADD COLUMN fee_fixed numeric(78, 0),
    ADD COLUMN fee_percentage text,
    ADD COLUMN fee_total numeric(78, 0),
    ADD COLUMN settlement_amount numeric(78, 0),
    ADD COLUMN settlement_status text
      CHECK (settlement_status IN ('pending', 'settled', 'no_destination')),
    ADD COLUMN settlement_destination text,
    ADD COLUMN settlement_tx_hash text,
    ADD COLUMN settled_at timestamptz`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
