/**
 * Webhook deliveries: one per event and endpoint, made with the event, in the
 * change's transaction, for every endpoint that wanted it at that moment
 * (enabled, not deleted, of the event's partner, its merchant if it names
 * one, its types if it lists them). A committed change thus always has its
 * deliveries queued, and an endpoint registered later receives no past
 * events (a partner can still redeliver one to it).
 *
 * Sending them is durable work like the chain jobs: a due delivery is claimed
 * under a lease with a fresh token, and what its attempt found is recorded
 * only while that token still holds it (`WebhookDeliveryLeaseLost`
 * otherwise), so two instances never both record one attempt, and a killed
 * instance's deliveries are claimed again once their lease has run out.
 *
 * Order: per endpoint and payment, a delivery is claimed only when no earlier
 * one (by the event's write order) is still pending, so a later event waits
 * while an earlier one is retried and goes on once it has been delivered or
 * has failed for good. Events of no payment, and different payments, do not
 * wait for each other.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { EventId, type PayEvent } from "../events/Event.js"
import type { WebhookEndpoint } from "./WebhookEndpoint.js"
import { WebhookEndpointId } from "./WebhookEndpoint.js"

export const WebhookDeliveryState = Schema.Literal("pending", "delivered", "failed")
export type WebhookDeliveryState = typeof WebhookDeliveryState.Type

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  endpointId: WebhookEndpointId,
  eventId: EventId,
  /** The event's payment: deliveries of one payment to one endpoint go in order. */
  paymentId: Schema.NullOr(Schema.String),
  state: WebhookDeliveryState,
  /** Attempts since it was queued (or redelivered): where it is in the retry schedule. */
  attempts: Schema.Number,
  nextAttemptAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf
}) {}

/** One request made for a delivery, and what came of it. */
export class WebhookAttempt extends Schema.Class<WebhookAttempt>("WebhookAttempt")({
  attemptedAt: Schema.DateFromSelf,
  durationMs: Schema.Number,
  /** The receiver's HTTP status; null when none came (refused, timed out, unreachable). */
  responseStatus: Schema.NullOr(Schema.Number),
  /** The response body, cut at 64 KB; null without a response. */
  responseBody: Schema.NullOr(Schema.String),
  /** Why it did not succeed, in words; null for a 2xx. */
  error: Schema.NullOr(Schema.String)
}) {}

/** A delivery as listed: its event's type and every attempt, newest first. */
export interface WebhookDeliveryRecord {
  readonly delivery: WebhookDelivery
  readonly eventType: PayEvent["type"]
  readonly attempts: ReadonlyArray<WebhookAttempt>
}

export interface WebhookDeliveryLease {
  readonly endpointId: WebhookEndpointId
  readonly eventId: EventId
  readonly token: string
}

/** A delivery claimed to be attempted now, with what the attempt needs. */
export interface ClaimedDelivery {
  readonly lease: WebhookDeliveryLease
  /** Attempts made before this one. */
  readonly attempts: number
  readonly event: PayEvent
  readonly endpoint: WebhookEndpoint
}

/** What an attempt does to its endpoint, in the same write as the attempt. */
export type EndpointVerdict =
  /** A 2xx: its run of failures, if any, is over. */
  | { readonly _tag: "Succeeded" }
  /**
   * It failed: its run of failures starts now unless one is going on; the
   * endpoint is disabled, with `reason`, if that run began at or before
   * `disableIfFailingSince`.
   */
  | { readonly _tag: "Failed"; readonly disableIfFailingSince: Date; readonly reason: string }
  /** The receiver said it is gone (410): disabled at once. */
  | { readonly _tag: "Gone"; readonly reason: string }

export interface AttemptOutcome {
  readonly attempt: WebhookAttempt
  readonly state: WebhookDeliveryState
  /** When a pending delivery is due again. */
  readonly nextAttemptAt: Date
  readonly endpoint: EndpointVerdict
}

export interface DeliveryQuery {
  readonly endpointId: WebhookEndpointId
  readonly state?: WebhookDeliveryState | undefined
  /** Keyset: only deliveries of events written before this one (newest first). */
  readonly before?: EventId | undefined
  readonly limit: number
}

/** The delivery's lease ran out and another holder took it: record nothing. */
export class WebhookDeliveryLeaseLost extends Schema.TaggedError<WebhookDeliveryLeaseLost>()(
  "WebhookDeliveryLeaseLost",
  { eventId: Schema.String }
) {}

export class WebhookDeliveryStore extends Context.Tag("@pay/core/WebhookDeliveryStore")<
  WebhookDeliveryStore,
  {
    /** Deliveries with their attempts, newest event first, optionally of one state. */
    readonly list: (query: DeliveryQuery) => Effect.Effect<ReadonlyArray<WebhookDeliveryRecord>>
    /**
     * Leases up to `limit` deliveries due at `now` (pending, next attempt
     * reached, no live lease, endpoint enabled and not deleted, no earlier
     * pending delivery of the same payment to the same endpoint), each to a
     * new token until `now + leaseMs`, oldest due first; never more than
     * `perEndpoint` leased at once to one endpoint, nor more than
     * `perPartner` (none if left out) to one partner's endpoints together,
     * across every instance. Deliveries another instance is claiming at the
     * same moment are skipped.
     */
    readonly claimDue: (
      now: Date,
      limit: number,
      leaseMs: number,
      perEndpoint: number,
      perPartner?: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /**
     * Records an attempt and its outcome, lets go of the lease and applies
     * the verdict to the endpoint, in one write, only while the lease holds.
     */
    readonly record: (
      lease: WebhookDeliveryLease,
      outcome: AttemptOutcome
    ) => Effect.Effect<void, WebhookDeliveryLeaseLost>
    /** Lets go of a lease without an attempt (the instance is stopping): due again at `now`. */
    readonly release: (lease: WebhookDeliveryLease, now: Date) => Effect.Effect<void>
    /**
     * Queues the event to the endpoint again, due at `now`, with a fresh
     * retry schedule: a new delivery if it had none, else the same one made
     * pending (its attempts are kept in the log).
     */
    readonly redeliver: (
      endpointId: WebhookEndpointId,
      event: PayEvent,
      now: Date
    ) => Effect.Effect<WebhookDelivery>
    /** Writes an event delivered to this one endpoint only (a `ping`), and its delivery. */
    readonly queueDirect: (
      event: PayEvent,
      endpointId: WebhookEndpointId
    ) => Effect.Effect<WebhookDelivery>
    readonly find: (
      endpointId: WebhookEndpointId,
      eventId: EventId
    ) => Effect.Effect<Option.Option<WebhookDeliveryRecord>>
  }
>() {}
