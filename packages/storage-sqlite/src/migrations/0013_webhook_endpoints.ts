/**
 * Webhook endpoints (core webhooks/WebhookEndpoint.ts): `events` is a JSON
 * array of types, or null for all; secrets are sealed under the engine's secret.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT,
    merchant_id TEXT,
    description TEXT,
    api_version TEXT NOT NULL,
    status TEXT NOT NULL,
    disabled_reason TEXT,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_expires_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
  ) STRICT`,
  "CREATE INDEX webhook_endpoints_by_partner ON webhook_endpoints (partner_id, id)"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
