/**
 * The purge's deletes on SQLite, in one place (core retention/Purge.ts calls
 * them through RetentionStore, GatewayStore and IdempotencyStore). Each batch
 * reads its rows through a range of an index its statement names (`INDEXED
 * BY`: SQLite refuses to prepare the statement rather than scan; migrations
 * 0001, 0019 and 0029) and deletes at most `limit` rows, in one
 * transaction of its own, never a group commit's.
 *
 * Where they run: on the read worker's thread, with a write connection of its
 * own, when the engine has one (SqliteReadWorker.ts): a batch, its commit's
 * fsync and the WAL checkpoints its pages bring about then never hold up the
 * engine's thread, which every request shares; reads go on beside it (WAL),
 * and a write of the engine's waits at most for the batch's transaction
 * (`busy_timeout`). Else on the engine's connection (`purgeWrite`).
 */
import type { DeliveriesPurged, OptionsPurged } from "@pay/core"
import { Context, Effect } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

/** What each purge answers. */
export interface PurgeResults {
  readonly events: number
  readonly webhookDeliveries: DeliveriesPurged
  readonly auditTrail: number
  readonly idempotencyKeys: number
  readonly options: OptionsPurged
  readonly collectedData: number
}
export type PurgeKind = keyof PurgeResults

/** The purges, wherever they run. `before` is the cutoff in ms. */
export interface SqlitePurges {
  readonly run: <K extends PurgeKind>(
    kind: K,
    before: number,
    limit: number
  ) => Effect.Effect<PurgeResults[K]>
}

/** The purges on the read worker's thread, when the engine has one. */
export class SqlitePurgeWorker extends Context.Tag("@pay/storage-sqlite/SqlitePurgeWorker")<
  SqlitePurgeWorker,
  SqlitePurges
>() {}

interface DeliveryKey {
  readonly r: number
  readonly endpoint_id: string
  readonly event_id: string
}

/**
 * `body` in a transaction that holds the write lock from its start (`BEGIN
 * IMMEDIATE`, waiting its turn through the busy timeout): a batch reads, then
 * writes, and a read transaction that another connection's commit overtook
 * could not be upgraded.
 */
export const immediateTransaction = <A>(db: SqliteConnection, body: () => A): A => {
  db.exec("BEGIN IMMEDIATE")
  try {
    const value = body()
    db.exec("COMMIT")
    return value
  } catch (error) {
    db.exec("ROLLBACK")
    throw error
  }
}

/**
 * The statements on `db`: `run` does one batch, synchronously, in a
 * transaction of its own (`transact`: an immediate one, or `purgeWrite`).
 */
export const makeSqlitePurgeStatements = (
  db: SqliteConnection,
  transact: <A>(body: () => A) => A = (body) => immediateTransaction(db, body)
) => {
  const sql = {
    // Finished deliveries by their last attempt (migration 0029's partial index).
    finished: db.prepare(`SELECT rowid AS r, endpoint_id, event_id FROM webhook_deliveries
      INDEXED BY webhook_deliveries_finished
      WHERE state <> 'pending' AND next_attempt_at < ? ORDER BY next_attempt_at LIMIT ?`),
    attempts: db.prepare("DELETE FROM webhook_attempts WHERE endpoint_id = ? AND event_id = ?"),
    delivery: db.prepare("DELETE FROM webhook_deliveries WHERE rowid = ?"),
    // Events by time, each checked for a delivery still holding it (migration 0029's indexes).
    events: db.prepare(`DELETE FROM events WHERE seq IN (
        SELECT e.seq FROM events e INDEXED BY events_by_time
        WHERE e.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d INDEXED BY webhook_deliveries_by_event
            WHERE d.event_id = e.id)
        ORDER BY e.created_at LIMIT ?)`),
    audit: db.prepare(`DELETE FROM audit_log WHERE seq IN (
        SELECT seq FROM audit_log INDEXED BY audit_log_by_time WHERE at < ? ORDER BY at LIMIT ?)`),
    // The index of finished keys by age (migration 0001).
    keys: db.prepare(`DELETE FROM idempotency_keys WHERE rowid IN (
        SELECT rowid FROM idempotency_keys INDEXED BY idempotency_keys_finished
        WHERE response_status IS NOT NULL AND created_at < ? ORDER BY created_at LIMIT ?)`),
    // Expired options not yet kept, oldest first (migration 0029's index leaves the kept out),
    // each with whether its payment was paid with it: the option its collect or deploy job names.
    options: db.prepare(`SELECT o.rowid AS r, EXISTS (
          SELECT 1 FROM chain_jobs j WHERE j.payment_id = o.payment_id
            AND j.kind IN ('collect', 'deploy') AND json_extract(j.payload, '$.optionId') = o.id
        ) AS paid
      FROM payment_options o INDEXED BY payment_options_purgeable
        JOIN payments p ON p.id = o.payment_id
      WHERE o.kept = 0 AND o.expires_at < ? AND p.status <> 'processing'
      ORDER BY o.expires_at LIMIT ?`),
    keepOption: db.prepare("UPDATE payment_options SET kept = 1 WHERE rowid = ?"),
    deleteOption: db.prepare("DELETE FROM payment_options WHERE rowid = ?"),
    // Data collected before the cutoff (migration 0029's index): a payment's data is collected
    // before it is final, so what the range holds that is kept is a payment still open.
    collected: db.prepare(`DELETE FROM collected_data WHERE rowid IN (
        SELECT c.rowid FROM collected_data c INDEXED BY collected_data_by_time
          JOIN payments p ON p.id = c.payment_id
        WHERE c.collected_at < ?
          AND (p.final_at < ? OR (p.status = 'requires_action' AND p.expires_at < ?))
        ORDER BY c.collected_at LIMIT ?)`)
  }
  const changes = (result: { readonly changes: number | bigint }) => Number(result.changes)
  const batch: { readonly [K in PurgeKind]: (before: number, limit: number) => PurgeResults[K] } = {
    webhookDeliveries: (before, limit) => {
      const rows = sql.finished.all(before, limit) as Array<DeliveryKey>
      let attempts = 0
      for (const row of rows) {
        attempts += changes(sql.attempts.run(row.endpoint_id, row.event_id))
        sql.delivery.run(row.r)
      }
      return { deliveries: rows.length, attempts }
    },
    events: (before, limit) => changes(sql.events.run(before, limit)),
    auditTrail: (before, limit) => changes(sql.audit.run(before, limit)),
    idempotencyKeys: (before, limit) => changes(sql.keys.run(before, limit)),
    options: (before, limit) => {
      const found = sql.options.all(before, limit) as Array<{ r: number; paid: number }>
      let kept = 0
      for (const { r, paid } of found) {
        if (paid === 1) {
          sql.keepOption.run(r)
          kept++
        } else sql.deleteOption.run(r)
      }
      return { deleted: found.length - kept, kept }
    },
    collectedData: (before, limit) => changes(sql.collected.run(before, before, before, limit))
  }
  return {
    run: <K extends PurgeKind>(kind: K, before: number, limit: number): PurgeResults[K] =>
      transact(() => batch[kind](before, limit))
  }
}

/**
 * A purge batch's transaction on the engine's connection, committed without
 * waiting for the disk (`synchronous = NORMAL` for its commit, then FULL
 * again, as every connection runs: CONNECTION_PRAGMAS): a delete lost to a
 * power cut is done again by the next pass, and nothing was acknowledged on
 * it, while the fsync a FULL commit waits for is most of a small batch's time
 * on the thread every request shares. The next FULL commit (a request's)
 * syncs the purge's pages with its own, in order: no acknowledged write is
 * any weaker.
 */
export const purgeWrite = <A>(db: SqliteConnection, body: () => A): A => {
  db.exec("PRAGMA synchronous = NORMAL")
  try {
    return immediateTransaction(db, body)
  } finally {
    db.exec("PRAGMA synchronous = FULL")
  }
}

/** The purges on the engine's own connection. */
export const localPurges = (db: SqliteConnection): SqlitePurges => {
  const statements = makeSqlitePurgeStatements(db, (body) => purgeWrite(db, body))
  return { run: (kind, before, limit) => Effect.sync(() => statements.run(kind, before, limit)) }
}
