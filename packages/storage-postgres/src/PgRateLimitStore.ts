/**
 * The shared rate limit buckets on PostgreSQL: one statement per sync for
 * every key, its uses passed as arrays. The refill is computed from the row
 * as it is when the statement reaches it (the upsert locks it), so concurrent
 * instances each add their takes, none lost. The take reaches the update
 * through the proposed row's `last_taken`.
 */
import type { SqlClient } from "@effect/sql"
import { MILLITOKENS_PER_TOKEN, RateLimitStore } from "@pay/core"
import { Effect } from "effect"
import { orDieSql } from "./PgErrors.js"

export const makePgRateLimitStore = (sql: SqlClient.SqlClient) =>
  RateLimitStore.of({
    sync: (uses, at) => {
      if (uses.length === 0) return Effect.succeed([])
      const now = at.getTime()
      return sql<{ readonly key: string; readonly millitokens: string }>`
        INSERT INTO rate_limit_buckets AS b
          (key, millitokens, updated_ms, per_second, capacity, last_taken)
        SELECT u.key, u.capacity - u.taken * ${MILLITOKENS_PER_TOKEN}, ${now}::bigint,
          u.per_second, u.capacity, u.taken
        FROM unnest(${uses.map((u) => u.key)}::text[], ${uses.map((u) => u.taken)}::bigint[],
          ${uses.map((u) => u.perSecond)}::bigint[],
          ${uses.map((u) => u.burst * MILLITOKENS_PER_TOKEN)}::bigint[])
          AS u(key, taken, per_second, capacity)
        ON CONFLICT (key) DO UPDATE SET
          millitokens = (CASE WHEN EXCLUDED.updated_ms > b.updated_ms
              THEN LEAST(EXCLUDED.capacity,
                b.millitokens + (EXCLUDED.updated_ms - b.updated_ms) * EXCLUDED.per_second)
              ELSE b.millitokens END)
            - EXCLUDED.last_taken * ${MILLITOKENS_PER_TOKEN},
          updated_ms = GREATEST(b.updated_ms, EXCLUDED.updated_ms),
          per_second = EXCLUDED.per_second,
          capacity = EXCLUDED.capacity,
          last_taken = EXCLUDED.last_taken
        RETURNING key, millitokens`.pipe(
        Effect.map((rows) => rows.map((r) => ({ key: r.key, millitokens: Number(r.millitokens) }))),
        orDieSql
      )
    },
    // A row an instance's sync holds is skipped, not waited for: the purge never deadlocks one.
    purge: (at) =>
      sql<{ readonly purged: string }>`WITH purged AS (
          DELETE FROM rate_limit_buckets WHERE key IN (
            SELECT key FROM rate_limit_buckets WHERE full_ms <= ${at.getTime()}::bigint
            FOR UPDATE SKIP LOCKED
          ) RETURNING 1
        ) SELECT count(*) AS purged FROM purged`.pipe(
        Effect.map(([row]) => Number(row?.purged ?? 0)),
        orDieSql
      )
  })
