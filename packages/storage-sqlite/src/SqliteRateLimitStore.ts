/**
 * The shared rate limit buckets on SQLite: a sync is one transaction (shared
 * with concurrent writes by the group commit) of one upsert per key, each
 * refilling the row as it is, then taking the instance's takes, which reach
 * the update through the proposed row's `last_taken`.
 */
import { MILLITOKENS_PER_TOKEN, RateLimitStore } from "@pay/core"
import { Effect } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import type { SqliteConnection } from "./SqliteDatabase.js"

export const makeSqliteRateLimitStore = (db: SqliteConnection, writes: GroupCommit) => {
  const upsert = db.prepare(`INSERT INTO rate_limit_buckets
      (key, millitokens, updated_ms, per_second, capacity, last_taken) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET
      millitokens = (CASE WHEN excluded.updated_ms > updated_ms
          THEN min(excluded.capacity, millitokens + (excluded.updated_ms - updated_ms) * excluded.per_second)
          ELSE millitokens END)
        - excluded.last_taken * ${MILLITOKENS_PER_TOKEN},
      updated_ms = max(updated_ms, excluded.updated_ms),
      per_second = excluded.per_second,
      capacity = excluded.capacity,
      last_taken = excluded.last_taken
    RETURNING millitokens`)
  const purge = db.prepare("DELETE FROM rate_limit_buckets WHERE full_ms <= ?")
  return RateLimitStore.of({
    sync: (uses, at) =>
      uses.length === 0
        ? Effect.succeed([])
        : writes.write(() =>
            uses.map(({ key, taken, perSecond, burst }) => {
              const capacity = burst * MILLITOKENS_PER_TOKEN
              const row = upsert.get(
                key,
                capacity - taken * MILLITOKENS_PER_TOKEN,
                at.getTime(),
                perSecond,
                capacity,
                taken
              ) as { readonly millitokens: number | bigint }
              return { key, millitokens: Number(row.millitokens) }
            })
          ),
    purge: (at) => Effect.sync(() => Number(purge.run(at.getTime()).changes))
  })
}
