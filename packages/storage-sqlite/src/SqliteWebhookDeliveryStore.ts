/**
 * Webhook deliveries on SQLite: queued by the events outbox
 * (SqliteEventStore.ts), claimed under leases, recorded fenced by the
 * lease's token. A claim's first statement is a write (it clears lapsed
 * leases), so its transaction holds SQLite's one write lock from the start
 * and no other connection claims the same rows in between. It reads the due
 * deliveries in one bounded statement (`claimScan` rows at most), skipping
 * endpoints and partners at their in-flight caps: its cost follows the batch,
 * not the number of endpoints, the history or the backlog of a busy endpoint.
 */
import {
  type ClaimedDelivery,
  type EventId,
  type PayEvent,
  WebhookAttempt,
  WebhookDelivery,
  type WebhookDeliveryLease,
  WebhookDeliveryLeaseLost,
  type WebhookDeliveryRecord,
  WebhookDeliveryStore,
  type WebhookEndpointId
} from "@pay/core"
import { Effect, Option } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import type { SqliteConnection } from "./SqliteDatabase.js"
import { type EventRow, toEvent } from "./SqliteEventStore.js"
import { type EndpointRow, toEndpoint } from "./SqliteWebhookEndpointStore.js"

interface DeliveryRow {
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_seq: number
  readonly payment_id: string | null
  readonly state: string
  readonly attempts: number
  readonly next_attempt_at: number
  readonly created_at: number
}

interface AttemptRow {
  readonly attempted_at: number
  readonly duration_ms: number
  readonly response_status: number | null
  readonly response_body: string | null
  readonly error: string | null
}

const toDelivery = (r: DeliveryRow) =>
  new WebhookDelivery({
    endpointId: r.endpoint_id as WebhookEndpointId,
    eventId: r.event_id as EventId,
    paymentId: r.payment_id,
    state: r.state as WebhookDelivery["state"],
    attempts: r.attempts,
    nextAttemptAt: new Date(r.next_attempt_at),
    createdAt: new Date(r.created_at)
  })

const toAttempt = (r: AttemptRow) =>
  new WebhookAttempt({
    attemptedAt: new Date(r.attempted_at),
    durationMs: r.duration_ms,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    error: r.error
  })

/** A due delivery as the claim reads it, with what its endpoint and partner have in flight. */
interface DueRow {
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_seq: number
  readonly attempts: number
  readonly next_attempt_at: number
  readonly partner_id: string
  readonly endpoint_busy: number
  readonly partner_busy: number
}

/**
 * How many due rows one claim reads: room for the batch when its endpoints
 * bring more than they may take (rows past an endpoint's room are skipped;
 * at its cap, the next claim skips it in the statement), and bounded, so a
 * claim's cost never follows the number of endpoints.
 */
export const claimScan = (limit: number, perEndpoint: number): number =>
  Math.max(0, Math.min(limit * Math.max(1, perEndpoint), 4_096))

export const makeSqliteWebhookDeliveryStore = (
  db: SqliteConnection,
  /** Where the claims, attempts and releases go: one commit for concurrent ones (GroupCommit.ts). */
  writes: GroupCommit,
  /** Writes an event row alone, without queueing its deliveries. */
  insertEvent: (event: PayEvent) => void
) => {
  const sql = {
    // Plain `?` only (better-sqlite3 and bun:sqlite read numbered ones differently).
    page: db.prepare(`SELECT d.*, e.type AS event_type FROM webhook_deliveries d
        JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = ? AND (? IS NULL OR d.state = ?)
        AND (? IS NULL OR d.event_seq < (SELECT seq FROM events WHERE id = ?))
      ORDER BY d.event_seq DESC LIMIT ?`),
    one: db.prepare(`SELECT d.*, e.type AS event_type FROM webhook_deliveries d
        JOIN events e ON e.id = d.event_id
      WHERE d.endpoint_id = ? AND d.event_id = ?`),
    attemptsOf: db.prepare(`SELECT * FROM webhook_attempts WHERE endpoint_id = ? AND event_id = ?
      ORDER BY attempted_at DESC, rowid DESC`),
    clearLapsed: db.prepare(`UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL
      WHERE lease_until IS NOT NULL AND lease_until <= ?`),
    // One statement whatever the number of endpoints: the due deliveries in due order (one
    // index range), skipping those of endpoints and partners already at their in-flight caps
    // (counted from the leased rows, which the caps keep few), and cut at `scan` rows. The
    // outer loop is the due index (CROSS JOIN keeps that order), so endpoints with nothing
    // due cost nothing; a backlog costs only the rows of endpoints at their cap it steps over.
    due: db.prepare(`WITH busy AS MATERIALIZED (
        SELECT l.endpoint_id, count(*) AS n
        FROM webhook_deliveries l INDEXED BY webhook_deliveries_leased
        WHERE l.lease_until IS NOT NULL GROUP BY l.endpoint_id
      ), busy_partner AS MATERIALIZED (
        SELECT x.partner_id, sum(b.n) AS n
        FROM busy b JOIN webhook_endpoints x ON x.id = b.endpoint_id GROUP BY x.partner_id
      )
      SELECT d.endpoint_id, d.event_id, d.event_seq, d.attempts, d.next_attempt_at,
        w.partner_id, coalesce(b.n, 0) AS endpoint_busy, coalesce(bp.n, 0) AS partner_busy
      FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
        CROSS JOIN webhook_endpoints w ON w.id = d.endpoint_id
        LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
        LEFT JOIN busy_partner bp ON bp.partner_id = w.partner_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND d.lease_until IS NULL
        AND w.status = 'enabled' AND w.deleted_at IS NULL
        AND coalesce(b.n, 0) < ? AND coalesce(bp.n, 0) < ?
        AND (d.payment_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM webhook_deliveries p INDEXED BY webhook_deliveries_pending_order
          WHERE p.endpoint_id = d.endpoint_id AND p.payment_id = d.payment_id
            AND p.state = 'pending' AND p.event_seq < d.event_seq))
      ORDER BY d.next_attempt_at, d.event_seq LIMIT ?`),
    lease: db.prepare(`UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
      WHERE endpoint_id = ? AND event_id = ?`),
    event: db.prepare("SELECT * FROM events WHERE id = ?"),
    endpoint: db.prepare("SELECT * FROM webhook_endpoints WHERE id = ?"),
    settle: db.prepare(`UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1,
        next_attempt_at = ?, lease_token = NULL, lease_until = NULL
      WHERE endpoint_id = ? AND event_id = ? AND lease_token = ?`),
    attempt: db.prepare(`INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at,
      duration_ms, response_status, response_body, error) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    succeeded: db.prepare(`UPDATE webhook_endpoints SET failing_since = NULL
      WHERE id = ? AND failing_since IS NOT NULL`),
    failing: db.prepare(`UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?)
      WHERE id = ?`),
    disable: db.prepare(`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?,
        updated_at = ?
      WHERE id = ? AND status = 'enabled' AND deleted_at IS NULL
        AND (? IS NULL OR failing_since <= ?)`),
    release: db.prepare(`UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL,
        next_attempt_at = ?
      WHERE endpoint_id = ? AND event_id = ? AND lease_token = ?`),
    again: db.prepare(`UPDATE webhook_deliveries SET state = 'pending', attempts = 0,
        next_attempt_at = ?
      WHERE endpoint_id = ? AND event_id = ?`),
    add: db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
        payment_id, state, attempts, next_attempt_at, created_at)
      SELECT ?, id, seq, payment_id, 'pending', 0, ?, ? FROM events WHERE id = ?`),
    byKey: db.prepare("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?")
  }

  const recordOf = (r: DeliveryRow & { readonly event_type: string }): WebhookDeliveryRecord => ({
    delivery: toDelivery(r),
    eventType: r.event_type as WebhookDeliveryRecord["eventType"],
    attempts: (sql.attemptsOf.all(r.endpoint_id, r.event_id) as Array<AttemptRow>).map(toAttempt)
  })
  const byKey = (endpointId: string, eventId: string) =>
    toDelivery(sql.byKey.get(endpointId, eventId) as DeliveryRow)

  const lost = (lease: WebhookDeliveryLease) =>
    new WebhookDeliveryLeaseLost({ eventId: lease.eventId })

  return WebhookDeliveryStore.of({
    list: (q) =>
      Effect.sync(() => {
        const state = q.state ?? null
        const before = q.before ?? null
        const rows = sql.page.all(q.endpointId, state, state, before, before, q.limit) as Array<
          DeliveryRow & { event_type: string }
        >
        return rows.map(recordOf)
      }),

    find: (endpointId, eventId) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable(
            sql.one.get(endpointId, eventId) as (DeliveryRow & { event_type: string }) | undefined
          ),
          recordOf
        )
      ),

    claimDue: (now, limit, leaseMs, perEndpoint, perPartner = Number.MAX_SAFE_INTEGER) =>
      writes.write(() =>
        db.transaction((): ReadonlyArray<ClaimedDelivery> => {
          const at = now.getTime()
          sql.clearLapsed.run(at)
          const rows = sql.due.all(
            at,
            perEndpoint,
            perPartner,
            claimScan(limit, perEndpoint)
          ) as Array<DueRow>
          // The rows come in due order; each endpoint and partner takes what it has room for.
          const takenBy = new Map<string, number>()
          const due: Array<DueRow> = []
          for (const r of rows) {
            if (due.length >= limit) break
            const onEndpoint = takenBy.get(r.endpoint_id) ?? 0
            const onPartner = takenBy.get(r.partner_id) ?? 0
            if (r.endpoint_busy + onEndpoint >= perEndpoint) continue
            if (r.partner_busy + onPartner >= perPartner) continue
            takenBy.set(r.endpoint_id, onEndpoint + 1)
            takenBy.set(r.partner_id, onPartner + 1)
            due.push(r)
          }
          return due.map((r) => {
            const token = crypto.randomUUID()
            sql.lease.run(token, at + leaseMs, r.endpoint_id, r.event_id)
            return {
              lease: {
                endpointId: r.endpoint_id as WebhookEndpointId,
                eventId: r.event_id as EventId,
                token
              },
              attempts: r.attempts,
              event: toEvent(sql.event.get(r.event_id) as EventRow),
              endpoint: toEndpoint(sql.endpoint.get(r.endpoint_id) as EndpointRow)
            }
          })
        })
      ),

    record: (lease, outcome) =>
      writes
        .write(() => {
          const { attempt } = outcome
          const changed = sql.settle.run(
            outcome.state,
            outcome.nextAttemptAt.getTime(),
            lease.endpointId,
            lease.eventId,
            lease.token
          )
          if (Number(changed.changes) !== 1) return false
          sql.attempt.run(
            lease.endpointId,
            lease.eventId,
            attempt.attemptedAt.getTime(),
            attempt.durationMs,
            attempt.responseStatus,
            attempt.responseBody,
            attempt.error
          )
          const at = attempt.attemptedAt.getTime()
          const verdict = outcome.endpoint
          if (verdict._tag === "Succeeded") sql.succeeded.run(lease.endpointId)
          else if (verdict._tag === "Gone") {
            sql.disable.run(verdict.reason, at, lease.endpointId, null, null)
          } else {
            sql.failing.run(at, lease.endpointId)
            const since = verdict.disableIfFailingSince.getTime()
            sql.disable.run(verdict.reason, at, lease.endpointId, since, since)
          }
          return true
        })
        .pipe(Effect.flatMap((held) => (held ? Effect.void : Effect.fail(lost(lease))))),

    release: (lease, now) =>
      writes.write(() => {
        sql.release.run(now.getTime(), lease.endpointId, lease.eventId, lease.token)
      }),

    redeliver: (endpointId, event, now) =>
      writes.write(() =>
        db.transaction(() => {
          const at = now.getTime()
          const { changes } = sql.again.run(at, endpointId, event.id)
          if (Number(changes) === 0) sql.add.run(endpointId, at, at, event.id)
          return byKey(endpointId, event.id)
        })
      ),

    queueDirect: (event, endpointId) =>
      writes.write(() =>
        db.transaction(() => {
          const at = event.createdAt.getTime()
          insertEvent(event)
          sql.add.run(endpointId, at, at, event.id)
          return byKey(endpointId, event.id)
        })
      )
  })
}
