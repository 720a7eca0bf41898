/**
 * The audit trail (core audit/AuditEntry.ts): key and settlement changes,
 * each written in the transaction of the change it records; `seq` is the
 * order they were written in. Never purged by the engine (kept at least a
 * year: docs/operations.md); `audit_log_by_time` lets an operator archive
 * the oldest rows.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    at INTEGER NOT NULL,
    partner_id TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor_key_id TEXT,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    merchant_id TEXT,
    before_value TEXT,
    after_value TEXT
  ) STRICT`,
  "CREATE INDEX audit_log_by_partner ON audit_log (partner_id, seq)",
  "CREATE INDEX audit_log_by_time ON audit_log (at)"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
