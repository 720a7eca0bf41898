/**
 * The purge's indexes and lease (issue 40, core retention/Purge.ts): every
 * batch of it a range of an index, never a scan of what it keeps.
 *
 * - `payment_options.kept`: true once the purge found the option is the one
 *   its payment was paid with (kept as long as the payment: refunds read its
 *   rate). The purge reads expired options through `payment_options_purgeable`,
 *   which leaves the kept ones out, so they are never read again; it replaces
 *   migration 0020's index of every option by expiry. A constant default
 *   rewrites no rows.
 * - `collected_data_by_time`: buyer data by when it was collected (always
 *   before its payment is final), so the purge reads only data old enough.
 * - `events_by_time`: events by when they were written.
 * - `webhook_deliveries_by_event`: whether a delivery still holds an event;
 *   `webhook_deliveries_finished`: deliveries that are over, by their last
 *   attempt (a pending one's next attempt is due later: left out).
 * - `leases`: one row per lease instances take turns with (the purge's), its
 *   holder and until when.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  "ALTER TABLE payment_options ADD COLUMN kept boolean NOT NULL DEFAULT false",
  "DROP INDEX payment_options_by_expiry",
  "CREATE INDEX payment_options_purgeable ON payment_options (expires_at) WHERE NOT kept",
  "CREATE INDEX collected_data_by_time ON collected_data (collected_at)",
  "CREATE INDEX events_by_time ON events (created_at)",
  "CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id)",
  `CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (next_attempt_at)
    WHERE state <> 'pending'`,
  `CREATE TABLE leases (
    name text COLLATE "C" PRIMARY KEY,
    holder text COLLATE "C" NOT NULL,
    held_until timestamptz NOT NULL
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
