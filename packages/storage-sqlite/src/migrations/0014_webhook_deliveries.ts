/**
 * Webhook deliveries (core webhooks/WebhookDelivery.ts): one per event and
 * endpoint, queued with the event; `event_seq` orders an endpoint's
 * deliveries of one payment.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE webhook_deliveries (
    endpoint_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_seq INTEGER NOT NULL,
    payment_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (endpoint_id, event_id)
  ) STRICT`,
  "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)",
  "CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, event_seq)"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
