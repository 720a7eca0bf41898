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
      sql<{ readonly active: string; readonly due: string; readonly oldest: Date | null }>`
        SELECT count(*) AS active,
          count(*) FILTER (WHERE run_at <= ${now}) AS due,
          min(run_at) FILTER (WHERE run_at <= ${now}) AS oldest
        FROM chain_jobs WHERE state = 'active'`.pipe(
        Effect.map(([row]) => ({
          active: Number(row?.active ?? 0),
          due: Number(row?.due ?? 0),
          oldestDueAt: row?.oldest == null ? null : new Date(row.oldest)
        })),
        Effect.mapError(unavailable)
      )
  })
