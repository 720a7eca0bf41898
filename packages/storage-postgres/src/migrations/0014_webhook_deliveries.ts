/**
 * Webhook deliveries (core webhooks/WebhookDelivery.ts): one per event and
 * endpoint, queued with the event; `event_seq` orders an endpoint's
 * deliveries of one payment.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE webhook_deliveries (
    endpoint_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    event_seq bigint NOT NULL,
    payment_id text COLLATE "C",
    state text NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (endpoint_id, event_id)
  )`,
  "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)",
  "CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, event_seq)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
