/**
 * The webhook endpoint rules: a partner registers, sees and changes only its
 * own endpoints (another partner's id is not found, never forbidden: no
 * existence oracle); a URL passes the WebhookUrlGuard; an endpoint limited to
 * a merchant must name one of the partner's live merchants; the signing
 * secret is made here, shown once, and kept sealed under the engine's secret.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { type EventId, EventStore, type EventType, PING } from "../events/Event.js"
import { eventOf, stamp } from "../events/NewEvent.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { Partner } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import { Merchants } from "../merchants/Merchants.js"
import { EngineSecret, WEBHOOK_SECRET_PURPOSE } from "../secrets/EngineSecret.js"
import type { ApiVersion } from "../shared/ApiVersion.js"
import { InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import { generateWebhookSecret } from "./Signature.js"
import { WebhookUrlGuard } from "./UrlGuard.js"
import { type WebhookDeliveryState, WebhookDeliveryStore } from "./WebhookDelivery.js"
import {
  WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointId,
  type WebhookEndpointStatus,
  WebhookEndpointStore
} from "./WebhookEndpoint.js"
import { WebhookDeliveryConfig } from "./WebhookWorkConfig.js"

export class WebhookEndpointNotFound extends Schema.TaggedError<WebhookEndpointNotFound>()(
  "WebhookEndpointNotFound",
  { endpointId: Schema.String }
) {}

export class WebhookEventNotFound extends Schema.TaggedError<WebhookEventNotFound>()(
  "WebhookEventNotFound",
  { eventId: Schema.String }
) {}

export interface NewWebhookEndpoint {
  readonly url: string
  readonly events?: ReadonlyArray<EventType> | undefined
  readonly merchantId?: MerchantId | undefined
  readonly description?: string | undefined
  readonly apiVersion?: ApiVersion | undefined
}

export interface WebhookEndpointUpdate {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<EventType> | undefined
  readonly description?: string | null | undefined
  readonly status?: WebhookEndpointStatus | undefined
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()(
  "@pay/core/WebhookEndpoints",
  {
    effect: Effect.gen(function* () {
      const store = yield* WebhookEndpointStore
      const guard = yield* WebhookUrlGuard
      const secrets = yield* EngineSecret
      const merchants = yield* Merchants
      const events = yield* EventStore
      const deliveries = yield* WebhookDeliveryStore
      const { maxEndpointsPerPartner } = yield* WebhookDeliveryConfig

      const checkUrl = guard.check

      /** The partner's live endpoint; any other is not found. */
      const get = (partner: Partner, id: WebhookEndpointId) =>
        Effect.flatMap(store.find(id), (found) =>
          Option.isSome(found) &&
          found.value.partnerId === partner.id &&
          found.value.deletedAt === null
            ? Effect.succeed(found.value)
            : Effect.fail(new WebhookEndpointNotFound({ endpointId: id }))
        )

      const create = (
        partner: Partner,
        input: NewWebhookEndpoint,
        complete?: (
          endpoint: WebhookEndpoint,
          secret: string
        ) => Effect.Effect<IdempotencyCompletion>
      ) =>
        Effect.gen(function* () {
          // Counted before the URL's look-up: a partner at the cap costs no DNS.
          const live = (yield* store.list(partner.id)).filter((e) => e.deletedAt === null)
          if (live.length >= maxEndpointsPerPartner) {
            return yield* Effect.fail(
              InvalidInput.of(
                "url",
                `this partner account already has ${live.length} webhook endpoints, the most it may have (maxEndpointsPerPartner, ${maxEndpointsPerPartner}); delete one first`
              )
            )
          }
          yield* checkUrl(input.url)
          if (input.merchantId !== undefined) {
            yield* merchants
              .get(partner, input.merchantId)
              .pipe(
                Effect.catchAll(() =>
                  Effect.fail(
                    InvalidInput.of("merchantId", "names no merchant of this partner account")
                  )
                )
              )
          }
          const secret = generateWebhookSecret()
          const at = yield* now
          const endpoint = new WebhookEndpoint({
            id: yield* newId<WebhookEndpointId>("whep"),
            partnerId: partner.id,
            url: input.url,
            events: input.events ?? null,
            merchantId: input.merchantId ?? null,
            description: input.description ?? null,
            apiVersion: input.apiVersion ?? partner.apiVersion,
            status: "enabled",
            disabledReason: null,
            secret: yield* secrets.seal(WEBHOOK_SECRET_PURPOSE, secret),
            previousSecret: null,
            previousSecretExpiresAt: null,
            createdAt: at,
            updatedAt: at,
            deletedAt: null
          })
          yield* store.insert(endpoint, complete ? yield* complete(endpoint, secret) : undefined)
          return { endpoint, secret }
        })

      const list = (partner: Partner) => store.list(partner.id)

      const update = (partner: Partner, id: WebhookEndpointId, update: WebhookEndpointUpdate) =>
        Effect.gen(function* () {
          yield* get(partner, id)
          if (update.url !== undefined) yield* checkUrl(update.url)
          const changes: WebhookEndpointChanges = {
            url: update.url,
            events: update.events,
            description: update.description,
            status: update.status,
            // Enabled again by the partner: the reason it was disabled is over.
            ...(update.status === undefined
              ? {}
              : { disabledReason: update.status === "enabled" ? null : "disabled by the partner" })
          }
          const updated = yield* store.update(id, changes, yield* now)
          return yield* Option.match(updated, {
            onNone: () => new WebhookEndpointNotFound({ endpointId: id }),
            onSome: Effect.succeed
          })
        })

      /**
       * A new secret, shown once; the current one keeps signing beside it for
       * `overlapSeconds` (deliveries carry both signatures meanwhile).
       */
      const rotateSecret = (
        partner: Partner,
        id: WebhookEndpointId,
        overlapSeconds: number,
        complete?: (
          endpoint: WebhookEndpoint,
          secret: string
        ) => Effect.Effect<IdempotencyCompletion>
      ) =>
        Effect.gen(function* () {
          const current = yield* get(partner, id)
          const secret = generateWebhookSecret()
          const at = yield* now
          const rotation = {
            secret: yield* secrets.seal(WEBHOOK_SECRET_PURPOSE, secret),
            previousSecret: overlapSeconds > 0 ? current.secret : null,
            previousSecretExpiresAt:
              overlapSeconds > 0 ? new Date(at.getTime() + overlapSeconds * 1000) : null
          }
          const written = new WebhookEndpoint({ ...current, ...rotation, updatedAt: at })
          const completion = complete ? yield* complete(written, secret) : undefined
          const rotated = yield* store.rotateSecret(id, rotation, at, completion)
          return yield* Option.match(rotated, {
            onNone: () => new WebhookEndpointNotFound({ endpointId: id }),
            onSome: (endpoint) => Effect.succeed({ endpoint, secret })
          })
        })

      const remove = (partner: Partner, id: WebhookEndpointId) =>
        Effect.gen(function* () {
          const found = yield* store.find(id)
          if (Option.isNone(found) || found.value.partnerId !== partner.id) {
            return yield* new WebhookEndpointNotFound({ endpointId: id })
          }
          yield* store.markDeleted(id, yield* now)
        })

      /** The endpoint's deliveries with their attempts, newest event first. */
      const listDeliveries = (
        partner: Partner,
        id: WebhookEndpointId,
        query: {
          readonly state?: WebhookDeliveryState | undefined
          readonly before?: EventId | undefined
          readonly limit: number
        }
      ) => Effect.flatMap(get(partner, id), () => deliveries.list({ endpointId: id, ...query }))

      /**
       * Sends one of the partner's events to the endpoint again, whether or not
       * it was sent there before, with a fresh retry schedule.
       */
      const redeliver = (partner: Partner, id: WebhookEndpointId, eventId: EventId) =>
        Effect.gen(function* () {
          yield* get(partner, id)
          const event = yield* events.find(eventId)
          if (Option.isNone(event) || event.value.partnerId !== partner.id) {
            return yield* new WebhookEventNotFound({ eventId })
          }
          yield* deliveries.redeliver(id, event.value, yield* now)
          // With the attempts kept from before.
          return Option.getOrThrow(yield* deliveries.find(id, eventId))
        })

      /** A `ping` event, written and queued to this endpoint only. */
      const ping = (partner: Partner, id: WebhookEndpointId) =>
        Effect.gen(function* () {
          const endpoint = yield* get(partner, id)
          const event = eventOf(yield* stamp, partner.id, PING, {
            endpointId: endpoint.id,
            url: endpoint.url
          })
          const delivery = yield* deliveries.queueDirect(event, endpoint.id)
          return { event, delivery }
        })

      return {
        create: spanned("WebhookEndpoints.create", create),
        listDeliveries,
        redeliver: spanned("WebhookEndpoints.redeliver", redeliver),
        ping: spanned("WebhookEndpoints.ping", ping),
        list,
        get,
        update: spanned("WebhookEndpoints.update", update),
        rotateSecret: spanned("WebhookEndpoints.rotateSecret", rotateSecret),
        remove: spanned("WebhookEndpoints.remove", remove)
      } as const
    }),
    dependencies: [Merchants.Default]
  }
) {}
