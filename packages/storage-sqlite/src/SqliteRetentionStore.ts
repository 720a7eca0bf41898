/**
 * The purge's port on SQLite (core retention/RetentionStore.ts): its deletes
 * are SqlitePurge.ts's, wherever those run; the lease is a row of `leases`
 * (migration 0029) on the engine's connection, taken in one upsert.
 */
import { RetentionStore } from "@pay/core"
import { Effect } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"
import type { SqlitePurges } from "./SqlitePurge.js"

export const makeSqliteRetentionStore = (db: SqliteConnection, purges: SqlitePurges) => {
  const take = db.prepare(`INSERT INTO leases (name, holder, held_until) VALUES (?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
    WHERE leases.held_until <= ? OR leases.holder = excluded.holder`)
  const extend = db.prepare("UPDATE leases SET held_until = ? WHERE name = ? AND holder = ?")
  return RetentionStore.of({
    purgeWebhookDeliveries: (before, limit) =>
      purges.run("webhookDeliveries", before.getTime(), limit),
    purgeEvents: (before, limit) => purges.run("events", before.getTime(), limit),
    purgeAuditTrail: (before, limit) => purges.run("auditTrail", before.getTime(), limit),
    takeLease: (name, holder, now, until) =>
      Effect.sync(
        () => Number(take.run(name, holder, until.getTime(), now.getTime()).changes) === 1
      ),
    extendLease: (name, holder, until) =>
      Effect.sync(() => Number(extend.run(until.getTime(), name, holder).changes) === 1)
  })
}
