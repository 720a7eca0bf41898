/**
 * The operations probe (core health/StorageProbe.ts) on SQLite: the
 * migrations table, and the chain job queue through its partial index of
 * active jobs (`chain_jobs_due`), so neither reads a table that grows with
 * the payments.
 */
import { StorageProbe, StorageUnavailable } from "@pay/core"
import { Effect } from "effect"
import { migrations } from "./Migrations.js"
import type { SqliteConnection } from "./SqliteDatabase.js"

const latestKnown = Math.max(...migrations.map((m) => m.id))

const unavailable = (error: unknown) =>
  new StorageUnavailable({ message: error instanceof Error ? error.message : String(error) })

export const makeSqliteStorageProbe = (db: SqliteConnection) => {
  // Prepared on first use: a database not yet migrated has no chain_jobs table.
  let queue: ReturnType<SqliteConnection["prepare"]> | undefined
  let stuck: ReturnType<SqliteConnection["prepare"]> | undefined
  return StorageProbe.of({
    migrations: Effect.try({
      try: () => {
        const row = db
          .prepare("SELECT count(*) AS applied, max(migration_id) AS latest FROM pay_migrations")
          .get() as { readonly applied: number; readonly latest: number | null }
        return {
          applied: Number(row.applied),
          latestApplied: row.latest === null ? null : Number(row.latest),
          latestKnown,
          known: migrations.length
        }
      },
      catch: unavailable
    }),
    chainJobQueue: (now) =>
      Effect.try({
        try: () => {
          // A failing job is due since its first failure, whenever its back-off lets it run.
          queue ??= db.prepare(
            `SELECT count(*) AS active,
               count(*) FILTER (WHERE run_at <= ?) AS due,
               min(coalesce(failing_since, CASE WHEN run_at <= ? THEN run_at END)) AS oldest,
               count(stuck_since) AS stuck
             FROM chain_jobs WHERE state = 'active'`
          )
          const row = queue.get(now.getTime(), now.getTime()) as {
            readonly active: number
            readonly due: number
            readonly oldest: number | null
            readonly stuck: number
          }
          return {
            active: Number(row.active),
            due: Number(row.due),
            oldestDueAt: row.oldest === null ? null : new Date(Number(row.oldest)),
            stuck: Number(row.stuck)
          }
        },
        catch: unavailable
      }),
    stuckJobs: (limit) =>
      Effect.try({
        try: () => {
          stuck ??= db.prepare(
            `SELECT id, kind, payment_id, chain_id, stuck_since, failing_since, failures, last_error
             FROM chain_jobs WHERE state = 'active' AND stuck_since IS NOT NULL
             ORDER BY stuck_since, id LIMIT ?`
          )
          return (stuck.all(limit) as Array<Record<string, unknown>>).map((r) => ({
            id: r.id as string,
            kind: r.kind as string,
            paymentId: r.payment_id as string,
            chainId: r.chain_id as string,
            stuckSince: new Date(Number(r.stuck_since)),
            failingSince: r.failing_since === null ? null : new Date(Number(r.failing_since)),
            failures: Number(r.failures),
            lastError: r.last_error as string | null
          }))
        },
        catch: unavailable
      })
  })
}
