/**
 * The events outbox on SQLite: `writeEvents` runs inside the transaction of
 * the change (the stores call it) and queues each event's webhook deliveries;
 * the reads list a partner's events newest first in the order they were
 * written. Sending the deliveries is SqliteWebhookDeliveryStore.ts.
 */
import { type EventId, EventStore, type PartnerId, PayEvent } from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

export interface EventRow {
  readonly id: string
  readonly partner_id: string
  readonly type: string
  readonly payment_id: string | null
  readonly merchant_id: string | null
  readonly data: string
  readonly created_at: number
}

export const toEvent = (r: EventRow) =>
  new PayEvent({
    id: r.id as EventId,
    partnerId: r.partner_id as PartnerId,
    type: r.type as PayEvent["type"],
    paymentId: r.payment_id,
    merchantId: r.merchant_id,
    data: r.data,
    createdAt: new Date(r.created_at)
  })

export const makeSqliteEventStore = (db: SqliteConnection) => {
  const insert = db.prepare(`INSERT INTO events (id, partner_id, type, payment_id, merchant_id,
    data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const byId = db.prepare("SELECT * FROM events WHERE id = ?")
  // Plain `?` only (better-sqlite3 and bun:sqlite read numbered ones differently); the type
  // filter is a JSON array of the types asked for, or null for all.
  const page = db.prepare(`SELECT * FROM events WHERE partner_id = ?
      AND (? IS NULL OR type IN (SELECT value FROM json_each(?)))
      AND (? IS NULL OR payment_id = ?)
      AND (? IS NULL OR created_at >= ?)
      AND (? IS NULL OR created_at < ?)
      AND (? IS NULL OR seq < (SELECT seq FROM events WHERE id = ?))
    ORDER BY seq DESC LIMIT ?`)

  // Every endpoint that wants the event now: its deliveries, queued with it.
  const fanOut = db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
      payment_id, state, attempts, next_attempt_at, created_at)
    SELECT w.id, ?, (SELECT seq FROM events WHERE id = ?), ?, 'pending', 0, ?, ?
    FROM webhook_endpoints w
    WHERE w.partner_id = ? AND w.deleted_at IS NULL AND w.status = 'enabled'
      AND (w.merchant_id IS NULL OR w.merchant_id = ?)
      AND (w.events IS NULL OR EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ?))`)

  /** Inside the caller's transaction: the events, and each one's deliveries. */
  const writeEvents = (events: ReadonlyArray<PayEvent>) => {
    for (const e of events) {
      const at = e.createdAt.getTime()
      insert.run(e.id, e.partnerId, e.type, e.paymentId, e.merchantId, e.data, at)
      fanOut.run(e.id, e.id, e.paymentId, at, at, e.partnerId, e.merchantId, e.type)
    }
  }

  const store = EventStore.of({
    find: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(byId.get(id) as EventRow | undefined), toEvent)
      ),
    list: (q) =>
      Effect.sync(() => {
        const types = q.types === undefined ? null : JSON.stringify(q.types)
        const payment = q.paymentId ?? null
        const from = q.from?.getTime() ?? null
        const to = q.to?.getTime() ?? null
        const before = q.before ?? null
        const rows = page.all(
          q.partnerId,
          types,
          types,
          payment,
          payment,
          from,
          from,
          to,
          to,
          before,
          before,
          q.limit
        ) as Array<EventRow>
        return rows.map(toEvent)
      })
  })
  /** An event alone, queued to no endpoint (the caller queues its one delivery). */
  const insertEvent = (e: PayEvent) =>
    insert.run(e.id, e.partnerId, e.type, e.paymentId, e.merchantId, e.data, e.createdAt.getTime())

  return { store, writeEvents, insertEvent }
}
