/**
 * The rate limit buckets every instance shares (issue 20; RateLimitStore in
 * core): one row per key in use, its level in millitokens as of `updated_ms`,
 * with the settings it was last written with, so `full_ms` (when it is full
 * again, and says nothing a new bucket would not) can be computed in the row
 * and purged by index. `last_taken`, the tokens the last sync took, is how an
 * upsert hands its take from the row it proposes to the row it updates.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY NOT NULL,
    millitokens INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    per_second INTEGER NOT NULL CHECK (per_second > 0),
    capacity INTEGER NOT NULL,
    last_taken INTEGER NOT NULL,
    full_ms INTEGER GENERATED ALWAYS AS
      (updated_ms + (max(0, capacity - millitokens) + per_second - 1) / per_second) STORED
  ) WITHOUT ROWID`,
  "CREATE INDEX rate_limit_buckets_by_full ON rate_limit_buckets (full_ms)"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
