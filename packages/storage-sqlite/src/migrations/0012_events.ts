/**
 * The events outbox (core events/Event.ts): written in the transaction of
 * the change each describes; `seq` is the order they were written in.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    partner_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payment_id TEXT,
    merchant_id TEXT,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`,
  "CREATE INDEX events_by_partner ON events (partner_id, seq)",
  "CREATE INDEX events_by_payment ON events (payment_id, seq) WHERE payment_id IS NOT NULL"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
