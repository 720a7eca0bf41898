/**
 * A third kind of chain job, `deploy` (core chainwork/DeployStep.ts): a
 * buyer's account not deployed yet, deployed by the network's deployer before
 * it is collected. SQLite cannot alter a CHECK constraint, so `chain_jobs` is
 * rebuilt the SQLite way: a new table, the rows copied, the old one dropped
 * and the new one renamed, all in the migrator's transaction.
 *
 * `chain_transfers` is rebuilt with it: its foreign key names `chain_jobs`, and
 * with foreign keys enforced (every connection turns them on, and a
 * transaction cannot turn them off) dropping a parent table that children
 * still reference fails, deferred or not. So the children move to a new table
 * that references the new parent, both old tables are dropped (children
 * first) and both new ones renamed: renaming a parent rewrites its children's
 * references, so they end up naming `chain_jobs` again.
 *
 * Every index and trigger the two tables had is created again from its own
 * text as stored in the schema, so none is lost, whichever migration made it.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const JOB_COLUMNS = `id, payment_id, kind, chain_id, payload, state, run_at, lease_token,
  lease_until, nonce, destination, attempts, last_error, created_at, updated_at, failures,
  failing_since, stuck_since`

const TRANSFER_COLUMNS = `hash, job_id, chain_id, sender, nonce, purpose, to_address, data, gas,
  max_fee_per_gas, max_priority_fee_per_gas, raw, created_at`

const statements = [
  `CREATE TABLE chain_jobs_new (
    id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL REFERENCES payments (id),
    kind TEXT NOT NULL CHECK (kind IN ('collect', 'settle', 'deploy')),
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
    failures INTEGER NOT NULL DEFAULT 0,
    failing_since INTEGER,
    stuck_since INTEGER,
    UNIQUE (payment_id, kind)
  ) STRICT`,
  `INSERT INTO chain_jobs_new (${JOB_COLUMNS}) SELECT ${JOB_COLUMNS} FROM chain_jobs`,
  `CREATE TABLE chain_transfers_new (
    hash TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES chain_jobs_new (id),
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
  `INSERT INTO chain_transfers_new (${TRANSFER_COLUMNS})
    SELECT ${TRANSFER_COLUMNS} FROM chain_transfers`,
  "DROP TABLE chain_transfers",
  "DROP TABLE chain_jobs",
  "ALTER TABLE chain_jobs_new RENAME TO chain_jobs",
  "ALTER TABLE chain_transfers_new RENAME TO chain_transfers"
]

export default (db: SqliteConnection): void => {
  // Read before the drop takes them with the tables; the tables' own names are kept.
  const kept = db
    .prepare(
      `SELECT sql FROM sqlite_schema
        WHERE type IN ('index', 'trigger') AND tbl_name IN ('chain_jobs', 'chain_transfers')
          AND sql IS NOT NULL
        ORDER BY type, name`
    )
    .all() as Array<{ readonly sql: string }>
  for (const statement of statements) db.exec(statement)
  for (const { sql } of kept) db.exec(sql)
}
