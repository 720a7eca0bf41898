/**
 * Making events for a store write's outbox. The id and time are drawn before
 * the write (an Effect), the snapshot is made from what the write wrote,
 * inside its transaction (a plain function): `stamp` then `eventOf`.
 */
import { Clock, Effect } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import { newId } from "../shared/Ids.js"
import { type EventId, PayEvent, type PayEventType } from "./Event.js"

export interface EventStamp {
  readonly id: EventId
  readonly createdAt: Date
}

/** A new event id and the time of the change. */
export const stamp: Effect.Effect<EventStamp> = Effect.gen(function* () {
  return {
    id: yield* newId<EventId>("evt"),
    createdAt: new Date(yield* Clock.currentTimeMillis)
  }
})

/** Several stamps: one per event a write may make. */
export const stamps = (n: number) => Effect.all(Array.from({ length: n }, () => stamp))

export const eventOf = (
  { id, createdAt }: EventStamp,
  partnerId: PartnerId,
  type: PayEventType,
  object: unknown,
  about: { readonly merchantId?: string | null; readonly paymentId?: string | null } = {}
): PayEvent =>
  new PayEvent({
    id,
    partnerId,
    type,
    createdAt,
    paymentId: about.paymentId ?? null,
    merchantId: about.merchantId ?? null,
    data: JSON.stringify(object)
  })
