/**
 * A chain job's failing steps (issue 34): how many in a row, since when, and
 * when it was marked stuck, so the back-off survives a release and a restart,
 * `/ready` names stuck jobs and the oldest-due gauge counts from the first
 * failure. Transfers are found by nonce across jobs (NonceGaps.ts). Each
 * chain's run is recorded, for chains that start fresh (the sandbox).
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  "ALTER TABLE chain_jobs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
  "ALTER TABLE chain_jobs ADD COLUMN failing_since INTEGER",
  "ALTER TABLE chain_jobs ADD COLUMN stuck_since INTEGER",
  `CREATE INDEX chain_jobs_stuck ON chain_jobs (stuck_since, id)
    WHERE state = 'active' AND stuck_since IS NOT NULL`,
  "CREATE INDEX chain_transfers_by_nonce ON chain_transfers (chain_id, sender, nonce)",
  `CREATE TABLE chain_instances (
    chain_id TEXT PRIMARY KEY,
    instance TEXT NOT NULL,
    since INTEGER NOT NULL
  ) STRICT`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
