/**
 * The operations probe (core health/StorageProbe.ts) on PostgreSQL: the
 * migrations table, and the chain job queue through its partial index of
 * active jobs (`chain_jobs_due`), so neither reads a table that grows with
 * the payments.
 */
import type { SqlClient } from "@effect/sql"
import { StorageProbe, StorageUnavailable } from "@pay/core"
import { Effect } from "effect"
import { knownMigrationIds } from "./Migrations.js"

const latestKnown = Math.max(...knownMigrationIds)

const unavailable = (error: { readonly message: string }) =>
  new StorageUnavailable({ message: error.message })

export const makePgStorageProbe = (sql: SqlClient.SqlClient) =>
  StorageProbe.of({
    migrations: sql<{ readonly applied: string; readonly latest: number | null }>`
      SELECT count(*) AS applied, max(migration_id) AS latest FROM pay_migrations`.pipe(
      Effect.map(([row]) => ({
        applied: Number(row?.applied ?? 0),
        latestApplied: row?.latest ?? null,
        latestKnown,
        known: knownMigrationIds.length
      })),
      Effect.mapError(unavailable)
    ),
    chainJobQueue: (now) =>
      // A failing job is due since its first failure, whenever its back-off lets it run.
      sql<{
        readonly active: string
        readonly due: string
        readonly oldest: Date | null
        readonly stuck: string
      }>`
        SELECT count(*) AS active,
          count(*) FILTER (WHERE run_at <= ${now}) AS due,
          min(coalesce(failing_since, CASE WHEN run_at <= ${now} THEN run_at END)) AS oldest,
          count(stuck_since) AS stuck
        FROM chain_jobs WHERE state = 'active'`.pipe(
        Effect.map(([row]) => ({
          active: Number(row?.active ?? 0),
          due: Number(row?.due ?? 0),
          oldestDueAt: row?.oldest == null ? null : new Date(row.oldest),
          stuck: Number(row?.stuck ?? 0)
        })),
        Effect.mapError(unavailable)
      ),
    stuckJobs: (limit) =>
      sql<{
        readonly id: string
        readonly kind: string
        readonly payment_id: string
        readonly chain_id: string
        readonly stuck_since: Date
        readonly failing_since: Date | null
        readonly failures: number
        readonly last_error: string | null
      }>`SELECT id, kind, payment_id, chain_id, stuck_since, failing_since, failures, last_error
        FROM chain_jobs WHERE state = 'active' AND stuck_since IS NOT NULL
        ORDER BY stuck_since, id LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((r) => ({
            id: r.id,
            kind: r.kind,
            paymentId: r.payment_id,
            chainId: r.chain_id,
            stuckSince: new Date(r.stuck_since),
            failingSince: r.failing_since === null ? null : new Date(r.failing_since),
            failures: Number(r.failures),
            lastError: r.last_error
          }))
        ),
        Effect.mapError(unavailable)
      )
  })
