/**
 * Events: what happened to a partner's resources, written in the same
 * database transaction as the change they describe (an outbox), so a
 * committed change always has its event and a rolled-back one never does.
 * Webhook endpoints receive them; `GET /v1/events` lists them.
 *
 * An event's `data` is a snapshot, taken when the change happened, of what
 * the API returns for the resource (a merchant's view, a settlement as
 * listed, `{id, deleted: true}` for a deletion), kept as JSON text.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { PartnerId } from "../identity/Partner.js"
import { prefixedId } from "../shared/Ids.js"

export const EventId = prefixedId("evt", "EventId")
export type EventId = typeof EventId.Type

export const EVENT_TYPES = [
  "payment.processing",
  "payment.succeeded",
  "payment.failed",
  "payment.expired",
  "payment.cancelled",
  "payment.settled",
  "payment.settlement_held",
  "refund.requested",
  "merchant.created",
  "merchant.updated",
  "merchant.deleted",
  "settlement.created",
  "settlement.updated",
  "settlement.deleted"
] as const
export const EventType = Schema.Literal(...EVENT_TYPES)
export type EventType = typeof EventType.Type

/** Sent by `POST /v1/webhook-endpoints/{id}/test` to that endpoint only: not subscribed to. */
export const PING = "ping"
/** Every type an event may have: the ones endpoints subscribe to, and `ping`. */
export const PayEventType = Schema.Literal(...EVENT_TYPES, PING)
export type PayEventType = typeof PayEventType.Type

export class PayEvent extends Schema.Class<PayEvent>("PayEvent")({
  id: EventId,
  partnerId: PartnerId,
  type: PayEventType,
  createdAt: Schema.DateFromSelf,
  /** The payment it is about, for `paymentId` filters and per-payment delivery order. */
  paymentId: Schema.NullOr(Schema.String),
  merchantId: Schema.NullOr(Schema.String),
  /** The resource's snapshot, JSON. */
  data: Schema.String
}) {}

/**
 * The events a store write adds in its own transaction, made from what it
 * wrote (the updated row): called only when the write changed something.
 */
export type Outbox<A> = (written: A) => ReadonlyArray<PayEvent>

export interface EventQuery {
  readonly partnerId: PartnerId
  readonly types?: ReadonlyArray<PayEventType> | undefined
  readonly paymentId?: string | undefined
  /** Inclusive. */
  readonly from?: Date | undefined
  /** Exclusive. */
  readonly to?: Date | undefined
  /** Keyset: only events written before this one (newest first). */
  readonly before?: EventId | undefined
  readonly limit: number
}

export class EventStore extends Context.Tag("@pay/core/EventStore")<
  EventStore,
  {
    readonly find: (id: EventId) => Effect.Effect<Option.Option<PayEvent>>
    /** Newest first, in the order they were written. */
    readonly list: (query: EventQuery) => Effect.Effect<ReadonlyArray<PayEvent>>
  }
>() {}
