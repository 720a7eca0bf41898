/**
 * Webhook deliveries: one per event and endpoint, made with the event, in the
 * change's transaction, for every endpoint that wanted it at that moment
 * (enabled, not deleted, of the event's partner, its merchant if it names
 * one, its types if it lists them). A committed change thus always has its
 * deliveries queued, and an endpoint registered later receives no past
 * events. Sending them (durable jobs, retries, order per payment) comes next.
 */
import { Context, type Effect, Schema } from "effect"
import { EventId } from "../events/Event.js"
import { WebhookEndpointId } from "./WebhookEndpoint.js"

export const WebhookDeliveryState = Schema.Literal("pending", "delivered", "failed")
export type WebhookDeliveryState = typeof WebhookDeliveryState.Type

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  endpointId: WebhookEndpointId,
  eventId: EventId,
  /** The event's payment: deliveries of one payment to one endpoint go in order. */
  paymentId: Schema.NullOr(Schema.String),
  state: WebhookDeliveryState,
  attempts: Schema.Number,
  nextAttemptAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf
}) {}

export class WebhookDeliveryStore extends Context.Tag("@pay/core/WebhookDeliveryStore")<
  WebhookDeliveryStore,
  {
    /** An endpoint's deliveries, newest event first. */
    readonly listByEndpoint: (
      endpointId: WebhookEndpointId,
      limit: number
    ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  }
>() {}
