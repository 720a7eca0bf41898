/**
 * Webhook endpoints (core webhooks/WebhookEndpoint.ts): `events` is a JSON
 * array of types, or null for all; secrets are sealed under the engine's secret.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE webhook_endpoints (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL,
    url text NOT NULL,
    events text,
    merchant_id text COLLATE "C",
    description text,
    api_version text NOT NULL,
    status text NOT NULL,
    disabled_reason text,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz
  )`,
  "CREATE INDEX webhook_endpoints_by_partner ON webhook_endpoints (partner_id, id)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
