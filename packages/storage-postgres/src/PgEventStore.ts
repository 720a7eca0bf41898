/**
 * The events outbox on PostgreSQL: `writeEvents` runs inside the transaction
 * of the change (the stores call it), the reads list a partner's events
 * newest first in the order they were written.
 */
import type { SqlClient } from "@effect/sql"
import { type EventId, EventStore, type Outbox, type PartnerId, PayEvent } from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

export interface EventRow {
  readonly id: string
  readonly partner_id: string
  readonly type: string
  readonly payment_id: string | null
  readonly merchant_id: string | null
  readonly data: string
  readonly created_at: Date
}

export const toEvent = (r: EventRow) =>
  new PayEvent({
    id: r.id as EventId,
    partnerId: r.partner_id as PartnerId,
    type: r.type as PayEvent["type"],
    paymentId: r.payment_id,
    merchantId: r.merchant_id,
    data: r.data,
    createdAt: r.created_at
  })

/**
 * Inside the caller's transaction: the events its outbox makes of what it
 * wrote, and each one's webhook deliveries, one per endpoint that wants it now.
 */
export const writeEvents = <A>(
  sql: SqlClient.SqlClient,
  outbox: Outbox<A> | undefined,
  written: A
) => {
  const events = outbox?.(written) ?? []
  if (events.length === 0) return Effect.void
  return Effect.gen(function* () {
    yield* sql`INSERT INTO events ${sql.insert(
      events.map((e) => ({
        id: e.id,
        partner_id: e.partnerId,
        type: e.type,
        payment_id: e.paymentId,
        merchant_id: e.merchantId,
        data: e.data,
        created_at: e.createdAt
      }))
    )}`
    for (const e of events) {
      yield* sql`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, payment_id,
          state, attempts, next_attempt_at, created_at)
        SELECT w.id, ev.id, ev.seq, ev.payment_id, 'pending', 0, ev.created_at, ev.created_at
        FROM webhook_endpoints w, events ev
        WHERE ev.id = ${e.id} AND w.partner_id = ev.partner_id AND w.deleted_at IS NULL
          AND w.status = 'enabled'
          AND (w.merchant_id IS NULL OR w.merchant_id = ev.merchant_id)
          AND (w.events IS NULL OR EXISTS (
            SELECT 1 FROM jsonb_array_elements_text(w.events::jsonb) t WHERE t = ev.type))`
    }
  })
}

export const makePgEventStore = (sql: SqlClient.SqlClient) =>
  EventStore.of({
    find: (id) =>
      sql<EventRow>`SELECT * FROM events WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toEvent)),
        orDieSql
      ),
    list: (q) => {
      const filter = sql.and([
        sql`partner_id = ${q.partnerId}`,
        ...(q.types === undefined ? [] : [sql.in("type", [...q.types])]),
        ...(q.paymentId === undefined ? [] : [sql`payment_id = ${q.paymentId}`]),
        ...(q.from === undefined ? [] : [sql`created_at >= ${q.from}`]),
        ...(q.to === undefined ? [] : [sql`created_at < ${q.to}`]),
        ...(q.before === undefined
          ? []
          : [sql`seq < (SELECT seq FROM events WHERE id = ${q.before})`])
      ])
      return sql<EventRow>`SELECT * FROM events WHERE ${filter}
        ORDER BY seq DESC LIMIT ${q.limit}`.pipe(
        Effect.map((rows) => rows.map(toEvent)),
        orDieSql
      )
    }
  })
