/**
 * The purge's deletes and lease on PostgreSQL (core retention/RetentionStore.ts).
 * Each batch is one statement: its rows found through a range of an index
 * (migrations 0019 and 0030) in the index's order (so the planner walks the
 * index from the oldest end rather than scan the table: most of a backlog
 * matches), `LIMIT`ed and locked `FOR UPDATE SKIP LOCKED` (a row a request
 * is changing is left for the next pass, never waited for), then deleted by
 * key or `ctid` from an array (`= ANY (ARRAY(…))`: looked up one by one,
 * where a join would let the planner hash the whole table when it is small,
 * and its dead rows with it). Row locks on a thousand rows for a few
 * milliseconds: nothing a request waits on for long.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { RetentionStore } from "@pay/core"
import { Effect } from "effect"
import { orDieSql } from "./PgErrors.js"

const counted = ([row]: ReadonlyArray<{ readonly n: string | number }>) => Number(row?.n ?? 0)

/**
 * A batch's size written into the statement, not bound: a prepared statement's generic plan
 * (which PostgreSQL may switch to after a few runs) then still knows it reads a few rows in
 * the index's order, and never picks a scan and a sort; the purge uses one size, so one text.
 */
export const batchLimit = (sql: SqlClient, limit: number) =>
  sql.literal(String(Math.max(1, Math.floor(limit))))

export const makePgRetentionStore = (sql: SqlClient) =>
  RetentionStore.of({
    // A delivery and its attempts in one statement: none is left without the other.
    purgeWebhookDeliveries: (before, limit) =>
      sql<{ readonly deliveries: string; readonly attempts: string }>`WITH found AS (
          SELECT ctid AS t, endpoint_id, event_id FROM webhook_deliveries
          WHERE state <> 'pending' AND next_attempt_at < ${before}
          ORDER BY next_attempt_at LIMIT ${batchLimit(sql, limit)} FOR UPDATE SKIP LOCKED
        ), deliveries AS (
          DELETE FROM webhook_deliveries WHERE ctid = ANY (ARRAY(SELECT t FROM found))
          RETURNING 1
        ), attempts AS (
          DELETE FROM webhook_attempts WHERE ctid = ANY (ARRAY(
            SELECT a.t FROM found f CROSS JOIN LATERAL (
              SELECT x.ctid AS t FROM webhook_attempts x
              WHERE x.endpoint_id = f.endpoint_id AND x.event_id = f.event_id OFFSET 0
            ) a))
          RETURNING 1
        ) SELECT (SELECT count(*) FROM deliveries) AS deliveries,
          (SELECT count(*) FROM attempts) AS attempts`.pipe(
        Effect.map(([row]) => ({
          deliveries: Number(row?.deliveries ?? 0),
          attempts: Number(row?.attempts ?? 0)
        })),
        orDieSql
      ),

    purgeEvents: (before, limit) =>
      sql<{ readonly n: string }>`WITH gone AS (
          DELETE FROM events WHERE seq = ANY (ARRAY(
            SELECT e.seq FROM events e
            WHERE e.created_at < ${before}
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
            ORDER BY e.created_at LIMIT ${batchLimit(sql, limit)} FOR UPDATE OF e SKIP LOCKED))
          RETURNING 1
        ) SELECT count(*) AS n FROM gone`.pipe(Effect.map(counted), orDieSql),

    purgeAuditTrail: (before, limit) =>
      sql<{ readonly n: string }>`WITH gone AS (
          DELETE FROM audit_log WHERE seq = ANY (ARRAY(
            SELECT seq FROM audit_log WHERE at < ${before}
            ORDER BY at LIMIT ${batchLimit(sql, limit)} FOR UPDATE SKIP LOCKED))
          RETURNING 1
        ) SELECT count(*) AS n FROM gone`.pipe(Effect.map(counted), orDieSql),

    // The row's lock decides between instances taking it at once: the second one's
    // condition is checked against the first one's committed row.
    takeLease: (name, holder, now, until) =>
      sql`INSERT INTO leases (name, holder, held_until) VALUES (${name}, ${holder}, ${until})
        ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
        WHERE leases.held_until <= ${now} OR leases.holder = excluded.holder
        RETURNING 1 AS taken`.pipe(
        Effect.map((rows) => rows.length === 1),
        orDieSql
      ),

    extendLease: (name, holder, until) =>
      sql`UPDATE leases SET held_until = ${until} WHERE name = ${name} AND holder = ${holder}
        RETURNING 1 AS extended`.pipe(
        Effect.map((rows) => rows.length === 1),
        orDieSql
      )
  })
