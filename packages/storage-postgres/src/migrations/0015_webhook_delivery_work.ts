/**
 * Sending webhook deliveries (core webhooks/WebhookDelivery.ts): each
 * delivery's lease, every attempt's record, and when an endpoint's run of
 * failures began. The partial indexes find an endpoint's due deliveries
 * (claims go endpoint by endpoint, so a backlog on one costs the others
 * nothing), an earlier pending delivery of the same payment to the same
 * endpoint (order per payment), and the leased ones (the per-endpoint limit).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  'ALTER TABLE webhook_deliveries ADD COLUMN lease_token text COLLATE "C"',
  "ALTER TABLE webhook_deliveries ADD COLUMN lease_until timestamptz",
  `CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries
    (endpoint_id, payment_id, event_seq) WHERE state = 'pending'`,
  `CREATE INDEX webhook_deliveries_due_by_endpoint ON webhook_deliveries
    (endpoint_id, next_attempt_at, event_seq) WHERE state = 'pending'`,
  `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until)
    WHERE lease_until IS NOT NULL`,
  `CREATE TABLE webhook_attempts (
    endpoint_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    attempted_at timestamptz NOT NULL,
    duration_ms integer NOT NULL,
    response_status integer,
    response_body text,
    error text
  )`,
  "CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (endpoint_id, event_id)",
  "ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
