/**
 * Webhook deliveries on PostgreSQL: queued by the events outbox
 * (PgEventStore.ts), claimed under leases, recorded fenced by the lease's
 * token. A claim first locks the endpoints it will take deliveries of
 * (`FOR UPDATE SKIP LOCKED`: an endpoint another instance is claiming for is
 * skipped, not waited for), then, in a statement that sees every claim
 * committed before, leases at most `perEndpoint` minus what is in flight to
 * each: so no delivery is leased twice, and no endpoint gets more than its
 * limit across instances. Partners are taken in turn the same way (an advisory
 * lock each), so no partner gets more than `perPartner` across instances.
 */
import type { SqlClient } from "@effect/sql"
import {
  type ClaimedDelivery,
  type EventId,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryLeaseLost,
  type WebhookDeliveryRecord,
  WebhookDeliveryStore,
  type WebhookEndpointId
} from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"
import { type EventRow, toEvent } from "./PgEventStore.js"
import { type EndpointRow, toEndpoint } from "./PgWebhookEndpointStore.js"

interface DeliveryRow {
  readonly endpoint_id: string
  readonly event_id: string
  readonly payment_id: string | null
  readonly state: string
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly created_at: Date
}

interface AttemptRow {
  readonly endpoint_id: string
  readonly event_id: string
  readonly attempted_at: Date
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
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at
  })

const toAttempt = (r: AttemptRow) =>
  new WebhookAttempt({
    attemptedAt: r.attempted_at,
    durationMs: r.duration_ms,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    error: r.error
  })

type ListedRow = DeliveryRow & { readonly event_type: string }

export const makePgWebhookDeliveryStore = (sql: SqlClient.SqlClient) => {
  /** The rows with their attempts, newest first. */
  const records = (rows: ReadonlyArray<ListedRow>) =>
    Effect.gen(function* () {
      if (rows.length === 0) return []
      const attempts = yield* sql<AttemptRow>`SELECT * FROM webhook_attempts
        WHERE endpoint_id = ${rows[0]!.endpoint_id}
          AND event_id = ANY(${rows.map((r) => r.event_id)}::text[])
        ORDER BY attempted_at DESC`
      return rows.map(
        (r): WebhookDeliveryRecord => ({
          delivery: toDelivery(r),
          eventType: r.event_type as WebhookDeliveryRecord["eventType"],
          attempts: attempts.filter((a) => a.event_id === r.event_id).map(toAttempt)
        })
      )
    })

  const byKey = (endpointId: string, eventId: string) =>
    Effect.map(
      sql<DeliveryRow>`SELECT * FROM webhook_deliveries
        WHERE endpoint_id = ${endpointId} AND event_id = ${eventId}`,
      (rows) => toDelivery(rows[0]!)
    )

  const add = (endpointId: string, eventId: string, at: Date) =>
    sql`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, payment_id, state,
        attempts, next_attempt_at, created_at)
      SELECT ${endpointId}, id, seq, payment_id, 'pending', 0, ${at}, ${at}
      FROM events WHERE id = ${eventId}`

  return WebhookDeliveryStore.of({
    list: (q) =>
      Effect.gen(function* () {
        const rows = yield* sql<ListedRow>`SELECT d.*, e.type AS event_type
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE ${sql.and([
            sql`d.endpoint_id = ${q.endpointId}`,
            ...(q.state === undefined ? [] : [sql`d.state = ${q.state}`]),
            ...(q.before === undefined
              ? []
              : [sql`d.event_seq < (SELECT seq FROM events WHERE id = ${q.before})`])
          ])}
          ORDER BY d.event_seq DESC LIMIT ${q.limit}`
        return yield* records(rows)
      }).pipe(orDieSql),

    find: (endpointId, eventId) =>
      Effect.gen(function* () {
        const rows = yield* sql<ListedRow>`SELECT d.*, e.type AS event_type
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.endpoint_id = ${endpointId} AND d.event_id = ${eventId}`
        return Option.fromNullable((yield* records(rows))[0])
      }).pipe(orDieSql),

    claimDue: (now, limit, leaseMs, perEndpoint, perPartner = 1_000_000) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const locked = yield* sql<{
              id: string
              partner_id: string
            }>`SELECT w.id, w.partner_id FROM webhook_endpoints w
              WHERE w.status = 'enabled' AND w.deleted_at IS NULL AND EXISTS (
                SELECT 1 FROM webhook_deliveries d
                WHERE d.endpoint_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= ${now})
              ORDER BY w.id
              FOR UPDATE SKIP LOCKED`
            if (locked.length === 0) return []
            // Two instances locking different endpoints of one partner would each count only
            // the other's committed claims, and together pass `perPartner` by a batch: so a
            // claim also takes its partners in turn (skipped, not waited for, when another
            // instance holds one; a hash collision only skips a partner until the next pass).
            const partners = yield* sql<{ partner_id: string }>`SELECT p.partner_id
              FROM unnest(${[...new Set(locked.map((l) => l.partner_id))]}::text[]) AS p(partner_id)
              WHERE pg_try_advisory_xact_lock(hashtextextended('webhook-partner:' || p.partner_id, 0))`
            const taken = new Set(partners.map((p) => p.partner_id))
            const ids = locked.filter((l) => taken.has(l.partner_id)).map((l) => l.id)
            if (ids.length === 0) return []
            // A new statement: it sees every claim committed before the locks were taken.
            // Endpoint by endpoint, an index range cut at the limit: the cost follows the
            // endpoints and the batch, not the history or a backlog.
            // Partners count every endpoint of theirs in flight, locked here or not.
            const claimed = yield* sql<DeliveryRow & { lease_token: string }>`WITH busy AS (
                SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
                WHERE endpoint_id = ANY(${ids}::text[]) AND lease_until > ${now}
                GROUP BY endpoint_id
              ), partners AS (
                SELECT DISTINCT partner_id FROM webhook_endpoints WHERE id = ANY(${ids}::text[])
              ), partner_busy AS (
                SELECT w.partner_id, count(*) AS n
                FROM partners p JOIN webhook_endpoints w ON w.partner_id = p.partner_id
                  JOIN webhook_deliveries d ON d.endpoint_id = w.id
                WHERE d.lease_until > ${now}
                GROUP BY w.partner_id
              ), due AS (
                SELECT d.* FROM unnest(${ids}::text[]) AS e(id) CROSS JOIN LATERAL (
                  SELECT d.endpoint_id, d.event_id, d.next_attempt_at, d.event_seq,
                    row_number() OVER (ORDER BY d.next_attempt_at, d.event_seq) AS place
                  FROM webhook_deliveries d
                  WHERE d.endpoint_id = e.id AND d.state = 'pending'
                    AND d.next_attempt_at <= ${now}
                    AND (d.lease_until IS NULL OR d.lease_until <= ${now})
                    AND (d.payment_id IS NULL OR NOT EXISTS (
                      SELECT 1 FROM webhook_deliveries p
                      WHERE p.endpoint_id = d.endpoint_id AND p.payment_id = d.payment_id
                        AND p.state = 'pending' AND p.event_seq < d.event_seq))
                  ORDER BY d.next_attempt_at, d.event_seq LIMIT ${perEndpoint}
                ) d
              ), room AS (
                SELECT due.*, w.partner_id FROM due LEFT JOIN busy ON busy.endpoint_id = due.endpoint_id
                  JOIN webhook_endpoints w ON w.id = due.endpoint_id
                WHERE due.place + coalesce(busy.n, 0) <= ${perEndpoint}
              ), ranked AS (
                SELECT room.*, row_number() OVER (PARTITION BY room.partner_id
                  ORDER BY room.next_attempt_at, room.event_seq) AS partner_place
                FROM room
              ), picked AS (
                SELECT ranked.* FROM ranked
                  LEFT JOIN partner_busy pb ON pb.partner_id = ranked.partner_id
                WHERE ranked.partner_place + coalesce(pb.n, 0) <= ${perPartner}
                ORDER BY ranked.next_attempt_at, ranked.event_seq LIMIT ${Math.max(0, limit)}
              )
              UPDATE webhook_deliveries t SET lease_token = gen_random_uuid()::text,
                lease_until = ${new Date(now.getTime() + leaseMs)}
              FROM picked
              WHERE t.endpoint_id = picked.endpoint_id AND t.event_id = picked.event_id
              RETURNING t.*`
            if (claimed.length === 0) return []
            const events = yield* sql<EventRow>`SELECT * FROM events
              WHERE id = ANY(${claimed.map((c) => c.event_id)}::text[])`
            const endpoints = yield* sql<EndpointRow>`SELECT * FROM webhook_endpoints
              WHERE id = ANY(${[...new Set(claimed.map((c) => c.endpoint_id))]}::text[])`
            return [...claimed]
              .sort(
                (a: DeliveryRow, b: DeliveryRow) =>
                  a.next_attempt_at.getTime() - b.next_attempt_at.getTime() ||
                  (a.event_id < b.event_id ? -1 : 1)
              )
              .map(
                (c: DeliveryRow & { lease_token: string }): ClaimedDelivery => ({
                  lease: {
                    endpointId: c.endpoint_id as WebhookEndpointId,
                    eventId: c.event_id as EventId,
                    token: c.lease_token
                  },
                  attempts: c.attempts,
                  event: toEvent(events.find((e) => e.id === c.event_id)!),
                  endpoint: toEndpoint(endpoints.find((e) => e.id === c.endpoint_id)!)
                })
              )
          })
        )
        .pipe(orDieSql),

    record: (lease, outcome) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const { attempt } = outcome
            const settled = yield* sql`UPDATE webhook_deliveries SET state = ${outcome.state},
                attempts = attempts + 1, next_attempt_at = ${outcome.nextAttemptAt},
                lease_token = NULL, lease_until = NULL
              WHERE endpoint_id = ${lease.endpointId} AND event_id = ${lease.eventId}
                AND lease_token = ${lease.token}
              RETURNING 1 AS settled`
            if (settled.length !== 1) {
              return yield* new WebhookDeliveryLeaseLost({ eventId: lease.eventId })
            }
            yield* sql`INSERT INTO webhook_attempts ${sql.insert({
              endpoint_id: lease.endpointId,
              event_id: lease.eventId,
              attempted_at: attempt.attemptedAt,
              duration_ms: attempt.durationMs,
              response_status: attempt.responseStatus,
              response_body: attempt.responseBody,
              error: attempt.error
            })}`
            const at = attempt.attemptedAt
            const verdict = outcome.endpoint
            const disable = (failingSince: Date | null) =>
              sql`UPDATE webhook_endpoints SET status = 'disabled',
                  disabled_reason = ${verdict._tag === "Succeeded" ? null : verdict.reason},
                  updated_at = ${at}
                WHERE id = ${lease.endpointId} AND status = 'enabled' AND deleted_at IS NULL
                  AND (${failingSince}::timestamptz IS NULL
                    OR failing_since <= ${failingSince}::timestamptz)`
            if (verdict._tag === "Succeeded") {
              yield* sql`UPDATE webhook_endpoints SET failing_since = NULL
                WHERE id = ${lease.endpointId} AND failing_since IS NOT NULL`
            } else if (verdict._tag === "Gone") {
              yield* disable(null)
            } else {
              yield* sql`UPDATE webhook_endpoints SET failing_since = ${at}
                WHERE id = ${lease.endpointId} AND failing_since IS NULL`
              yield* disable(verdict.disableIfFailingSince)
            }
          })
        )
        .pipe(orDieSql, Effect.asVoid),

    release: (lease, now) =>
      sql`UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL,
          next_attempt_at = ${now}
        WHERE endpoint_id = ${lease.endpointId} AND event_id = ${lease.eventId}
          AND lease_token = ${lease.token}`.pipe(Effect.asVoid, orDieSql),

    redeliver: (endpointId, event, now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            // A fresh schedule for the one it has, or a new one; its attempts stay in the log.
            yield* sql`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
                payment_id, state, attempts, next_attempt_at, created_at)
              SELECT ${endpointId}, id, seq, payment_id, 'pending', 0, ${now}, ${now}
              FROM events WHERE id = ${event.id}
              ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = 'pending', attempts = 0,
                next_attempt_at = excluded.next_attempt_at`
            return yield* byKey(endpointId, event.id)
          })
        )
        .pipe(orDieSql),

    queueDirect: (event, endpointId) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO events ${sql.insert({
              id: event.id,
              partner_id: event.partnerId,
              type: event.type,
              payment_id: event.paymentId,
              merchant_id: event.merchantId,
              data: event.data,
              created_at: event.createdAt
            })}`
            yield* add(endpointId, event.id, event.createdAt)
            return yield* byKey(endpointId, event.id)
          })
        )
        .pipe(orDieSql)
  })
}
