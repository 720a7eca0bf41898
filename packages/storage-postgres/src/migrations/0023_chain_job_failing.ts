/**
 * A chain job's failing steps (issue 34): how many in a row, since when, and
 * when it was marked stuck, so the back-off survives a release and a restart,
 * `/ready` names stuck jobs and the oldest-due gauge counts from the first
 * failure. Transfers are found by nonce across jobs (NonceGaps.ts). Each
 * chain's run is recorded, for chains that start fresh (the sandbox). As on
 * SQLite; constant defaults add the columns without rewriting a row.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  "ALTER TABLE chain_jobs ADD COLUMN failures integer NOT NULL DEFAULT 0",
  "ALTER TABLE chain_jobs ADD COLUMN failing_since timestamptz",
  "ALTER TABLE chain_jobs ADD COLUMN stuck_since timestamptz",
  `CREATE INDEX chain_jobs_stuck ON chain_jobs (stuck_since, id)
    WHERE state = 'active' AND stuck_since IS NOT NULL`,
  "CREATE INDEX chain_transfers_by_nonce ON chain_transfers (chain_id, sender, nonce)",
  `CREATE TABLE chain_instances (
    chain_id text COLLATE "C" PRIMARY KEY,
    instance text NOT NULL,
    since timestamptz NOT NULL
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
