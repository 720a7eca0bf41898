/**
 * The rate limit buckets every instance shares (issue 20; RateLimitStore in
 * core): one row per key in use, its level in millitokens as of `updated_ms`,
 * with the settings it was last written with, so `full_ms` (when it is full
 * again, and says nothing a new bucket would not) can be computed in the row
 * and purged by index. `last_taken`, the tokens the last sync took, is how an
 * upsert hands its take from the row it proposes to the row it updates. Times are epoch milliseconds, as the core's token
 * bucket counts them: the refill is whole-number arithmetic in SQL.
 * UNLOGGED: the levels are soft state, rewritten every second by the
 * instances; a crash that empties the table only refills the buckets.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE UNLOGGED TABLE rate_limit_buckets (
    key text PRIMARY KEY,
    millitokens bigint NOT NULL,
    updated_ms bigint NOT NULL,
    per_second bigint NOT NULL CHECK (per_second > 0),
    capacity bigint NOT NULL,
    last_taken bigint NOT NULL,
    full_ms bigint GENERATED ALWAYS AS
      (updated_ms + (GREATEST(0, capacity - millitokens) + per_second - 1) / per_second) STORED
  )`,
  "CREATE INDEX rate_limit_buckets_by_full ON rate_limit_buckets (full_ms)"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
