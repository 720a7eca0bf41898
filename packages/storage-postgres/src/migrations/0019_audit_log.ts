/**
 * The audit trail (core audit/AuditEntry.ts): key and settlement changes,
 * each written in the transaction of the change it records; `seq` is the
 * order they were written in. Never purged by the engine (kept at least a
 * year: docs/operations.md); `audit_log_by_time` lets an operator archive
 * the oldest rows. `before_value` and `after_value` are JSON text, as written
 * (`::jsonb` to query into them).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE audit_log (
    seq bigserial PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    at timestamptz NOT NULL,
    partner_id text COLLATE "C" NOT NULL,
    actor_kind text NOT NULL,
    actor_key_id text COLLATE "C",
    action text NOT NULL,
    subject text COLLATE "C" NOT NULL,
    merchant_id text COLLATE "C",
    before_value text,
    after_value text
  )`,
  "CREATE INDEX audit_log_by_partner ON audit_log (partner_id, seq)",
  "CREATE INDEX audit_log_by_time ON audit_log (at)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
