/**
 * Indexes for the gateway's bounds (issue 20): a payment's options by expiry,
 * so a capped options request deletes its oldest expired ones (replacing the
 * index by payment alone, which this one covers), and every option by expiry,
 * for the background purge of expired options. Collected buyer data is purged
 * from its own table (small: one row per payment and account) joined to the
 * payments by id, and needs no new index.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  "CREATE INDEX payment_options_by_payment_expiry ON payment_options (payment_id, expires_at)",
  "DROP INDEX payment_options_by_payment",
  "CREATE INDEX payment_options_by_expiry ON payment_options (expires_at)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
