/**
 * The events outbox (core events/Event.ts): written in the transaction of
 * the change each describes; `seq` is the order they were written in.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE events (
    seq bigserial PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    partner_id text COLLATE "C" NOT NULL,
    type text NOT NULL,
    payment_id text COLLATE "C",
    merchant_id text COLLATE "C",
    data text NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  "CREATE INDEX events_by_partner ON events (partner_id, seq)",
  "CREATE INDEX events_by_payment ON events (payment_id, seq) WHERE payment_id IS NOT NULL"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
