/**
 * The events outbox on PostgreSQL: `writeEvents` runs inside the transaction
 * of the change (the stores call it), the reads list a partner's events
 * newest first in the order they were written.
 */
import type { SqlClient } from "@effect/sql"
import { type EventId, EventStore, type Outbox, type PartnerId, PayEvent } from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

interface EventRow {
  readonly id: string
  readonly partner_id: string
  readonly type: string
  readonly payment_id: string | null
  readonly merchant_id: string | null
  readonly data: string
  readonly created_at: Date
}

const toEvent = (r: EventRow) =>
  new PayEvent({
    id: r.id as EventId,
    partnerId: r.partner_id as PartnerId,
    type: r.type as PayEvent["type"],
    paymentId: r.payment_id,
    merchantId: r.merchant_id,
    data: r.data,
    createdAt: r.created_at
  })

/** Inside the caller's transaction: the events its outbox makes of what it wrote. */
export const writeEvents = <A>(
  sql: SqlClient.SqlClient,
  outbox: Outbox<A> | undefined,
  written: A
) => {
  const events = outbox?.(written) ?? []
  if (events.length === 0) return Effect.void
  return sql`INSERT INTO events ${sql.insert(
    events.map((e) => ({
      id: e.id,
      partner_id: e.partnerId,
      type: e.type,
      payment_id: e.paymentId,
      merchant_id: e.merchantId,
      data: e.data,
      created_at: e.createdAt
    }))
  )}`.pipe(Effect.asVoid)
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
