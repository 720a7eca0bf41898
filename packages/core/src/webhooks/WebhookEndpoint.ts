/**
 * Webhook endpoints: where a partner wants its events delivered. The signing
 * secret is kept sealed under the engine's secret (secrets/EngineSecret.ts),
 * with the previous one during a rotation's overlap, so deliveries carry both
 * signatures until it ends.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { EventType } from "../events/Event.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import { PartnerId } from "../identity/Partner.js"
import { ApiVersion } from "../shared/ApiVersion.js"
import { prefixedId } from "../shared/Ids.js"

export const WebhookEndpointId = prefixedId("whep", "WebhookEndpointId")
export type WebhookEndpointId = typeof WebhookEndpointId.Type

export const WebhookEndpointStatus = Schema.Literal("enabled", "disabled")
export type WebhookEndpointStatus = typeof WebhookEndpointStatus.Type

export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: WebhookEndpointId,
  partnerId: PartnerId,
  url: Schema.String,
  /** The event types it receives; null for all. */
  events: Schema.NullOr(Schema.Array(EventType)),
  /** Only this merchant's events; null for all the partner's. */
  merchantId: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  /** The version its events' objects are rendered in. */
  apiVersion: ApiVersion,
  status: WebhookEndpointStatus,
  /** Why it was disabled (a 410 answer, five days of failures, the partner); null when enabled. */
  disabledReason: Schema.NullOr(Schema.String),
  /** The signing secret (`whsec_…`), sealed under the engine's secret. */
  secret: Schema.String,
  /** The secret before the last rotation, sealed, while it still signs. */
  previousSecret: Schema.NullOr(Schema.String),
  previousSecretExpiresAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  deletedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

export interface WebhookEndpointChanges {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<EventType> | null | undefined
  readonly description?: string | null | undefined
  readonly status?: WebhookEndpointStatus | undefined
  readonly disabledReason?: string | null | undefined
}

export interface SecretRotation {
  /** The new secret, sealed. */
  readonly secret: string
  /**
   * The current one, sealed, kept signing until `previousSecretExpiresAt`;
   * null for none. Stores keep the stored `secret` as it is at the write, not
   * this copy read before: the same secret, unless a re-seal (secrets/Reseal.ts)
   * rewrote it meanwhile, whose work would otherwise be undone.
   */
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: Date | null
}

export class WebhookEndpointStore extends Context.Tag("@pay/core/WebhookEndpointStore")<
  WebhookEndpointStore,
  {
    /** Inserts, with the idempotent response in the same transaction. */
    readonly insert: (
      endpoint: WebhookEndpoint,
      completion?: IdempotencyCompletion
    ) => Effect.Effect<void>
    /** Deleted ones too: callers decide what a deleted one means. */
    readonly find: (id: WebhookEndpointId) => Effect.Effect<Option.Option<WebhookEndpoint>>
    /** The partner's endpoints that are not deleted, newest first. */
    readonly list: (partnerId: PartnerId) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
    /** None when there is no such endpoint, or it is deleted. */
    readonly update: (
      id: WebhookEndpointId,
      changes: WebhookEndpointChanges,
      at: Date
    ) => Effect.Effect<Option.Option<WebhookEndpoint>>
    /** Replaces the secret, keeping the current one as the previous; none when deleted. */
    readonly rotateSecret: (
      id: WebhookEndpointId,
      rotation: SecretRotation,
      at: Date,
      completion?: IdempotencyCompletion
    ) => Effect.Effect<Option.Option<WebhookEndpoint>>
    /** Sets `deletedAt` once; later calls keep the first time. */
    readonly markDeleted: (
      id: WebhookEndpointId,
      at: Date
    ) => Effect.Effect<Option.Option<WebhookEndpoint>>
  }
>() {}
