/**
 * The webhook endpoint routes of the partner API. Neither SPEC.md nor the
 * reference has them; they follow the merchant routes' style.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EventView, PageCursor, PageLimit } from "../events/Api.js"
import { EventId, EventType, PayEventType } from "../events/Event.js"
import { failsWith, IdempotentHeaders, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { PartnerApiKey } from "../identity/PartnerAuth.js"
import { MerchantId } from "../merchants/Merchant.js"
import { ApiVersion } from "../shared/ApiVersion.js"
import { boundedText } from "../shared/Text.js"
import { WebhookDeliveryState } from "./WebhookDelivery.js"
import { WebhookEndpointId, WebhookEndpointStatus } from "./WebhookEndpoint.js"

export const WebhookEndpointView = Schema.Struct({
  id: Schema.String.annotations({ examples: ["whep_0Mg3vLwE9kTq2xHbY7pA"] }),
  url: Schema.String,
  events: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "The event types delivered; null for all"
  }),
  merchantId: Schema.NullOr(Schema.String).annotations({
    description: "Only this merchant's events; null for all the partner's"
  }),
  description: Schema.NullOr(Schema.String),
  apiVersion: Schema.String.annotations({ description: "The version events are rendered in" }),
  status: WebhookEndpointStatus,
  disabledReason: Schema.NullOr(Schema.String),
  createdAt: Schema.String.annotations({ description: "RFC 3339" })
}).annotations({ identifier: "WebhookEndpoint" })

export const CreatedWebhookEndpoint = Schema.Struct({
  ...WebhookEndpointView.fields,
  secret: Schema.String.annotations({
    description:
      "The signing secret (whsec_…, Standard Webhooks): shown only here and in a replay of this request"
  })
}).annotations({ identifier: "CreatedWebhookEndpoint" })

const Url = boundedText(1, 2048).annotations({
  description:
    "An https:// URL whose host is on the public internet (a refused one is 400 invalid_webhook_url)"
})

const Events = Schema.Array(EventType).pipe(
  Schema.minItems(1, { message: () => "give at least one event type, or leave events out for all" })
)

export const CreateWebhookEndpointRequest = Schema.Struct({
  url: Url,
  events: Schema.optional(Events),
  merchantId: Schema.optional(MerchantId),
  description: Schema.optional(boundedText(1, 500)),
  apiVersion: Schema.optional(ApiVersion)
}).annotations({ identifier: "CreateWebhookEndpointRequest" })

export const UpdateWebhookEndpointRequest = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  description: Schema.optional(Schema.NullOr(boundedText(1, 500))),
  status: Schema.optional(WebhookEndpointStatus)
}).annotations({
  identifier: "UpdateWebhookEndpointRequest",
  description: "At least one field"
})

export const WebhookEndpointPath = pathOf(
  { id: WebhookEndpointId },
  { error: ApiErrors.NotFound, nouns: { id: "webhook endpoint" } }
)

export const createWebhookEndpoint = HttpApiEndpoint.post("create", "/v1/webhook-endpoints")
  .setHeaders(IdempotentHeaders)
  .setPayload(CreateWebhookEndpointRequest)
  .addSuccess(CreatedWebhookEndpoint, { status: 201 })
  .annotate(OpenApi.Summary, "Register a webhook endpoint")
  .pipe(failsWith(ApiErrors.InvalidWebhookUrl, ApiErrors.IdempotencyConflict))

export const listWebhookEndpoints = HttpApiEndpoint.get("list", "/v1/webhook-endpoints")
  .setHeaders(VersionHeaders)
  .addSuccess(Schema.Struct({ data: Schema.Array(WebhookEndpointView) }))
  .annotate(OpenApi.Summary, "List the webhook endpoints, newest first")
  .pipe(failsWith())

export const getWebhookEndpoint = HttpApiEndpoint.get("get", "/v1/webhook-endpoints/:id")
  .setHeaders(VersionHeaders)
  .setPath(WebhookEndpointPath)
  .addSuccess(WebhookEndpointView)
  .annotate(OpenApi.Summary, "Fetch a webhook endpoint")
  .pipe(failsWith(ApiErrors.NotFound))

export const updateWebhookEndpoint = HttpApiEndpoint.patch("update", "/v1/webhook-endpoints/:id")
  .setHeaders(VersionHeaders)
  .setPath(WebhookEndpointPath)
  .setPayload(UpdateWebhookEndpointRequest)
  .addSuccess(WebhookEndpointView)
  .annotate(OpenApi.Summary, "Change a webhook endpoint's URL, events, description or status")
  .pipe(failsWith(ApiErrors.NotFound, ApiErrors.InvalidWebhookUrl))

export const deleteWebhookEndpoint = HttpApiEndpoint.del("delete", "/v1/webhook-endpoints/:id")
  .setHeaders(VersionHeaders)
  .setPath(WebhookEndpointPath)
  .addSuccess(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))
  .annotate(OpenApi.Summary, "Delete a webhook endpoint (idempotent)")
  .pipe(failsWith(ApiErrors.NotFound))

/** Default overlap of a rotation: 24 hours; at most 7 days. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400

export const RotateSecretRequest = Schema.Struct({
  expireCurrentInSeconds: Schema.optional(
    Schema.Int.pipe(
      Schema.between(0, 7 * 86_400, {
        message: () => "must be a whole number of seconds from 0 (at once) to 604800 (7 days)"
      })
    ).annotations({
      description: "How long the current secret keeps signing beside the new one; default 86400"
    })
  )
}).annotations({ identifier: "RotateWebhookSecretRequest" })

export const RotatedWebhookEndpoint = Schema.Struct({
  ...CreatedWebhookEndpoint.fields,
  previousSecretExpiresAt: Schema.NullOr(Schema.String).annotations({
    description: "RFC 3339: until when the previous secret still signs; null if it stopped at once"
  })
}).annotations({ identifier: "RotatedWebhookEndpoint" })

export const rotateWebhookSecret = HttpApiEndpoint.post(
  "rotateSecret",
  "/v1/webhook-endpoints/:id/rotate-secret"
)
  .setHeaders(IdempotentHeaders)
  .setPath(WebhookEndpointPath)
  .setPayload(RotateSecretRequest)
  .addSuccess(RotatedWebhookEndpoint)
  .annotate(OpenApi.Summary, "Rotate a webhook endpoint's signing secret")
  .pipe(failsWith(ApiErrors.NotFound, ApiErrors.IdempotencyConflict))

export const WebhookAttemptView = Schema.Struct({
  attemptedAt: Schema.String.annotations({ description: "RFC 3339" }),
  durationMs: Schema.Number,
  responseStatus: Schema.NullOr(Schema.Number).annotations({
    description: "The receiver's HTTP status; null when no response came"
  }),
  responseBody: Schema.NullOr(Schema.String).annotations({
    description: "The response body, cut at 64 KB; null without a response"
  }),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why the attempt did not succeed; null for a 2xx"
  })
}).annotations({ identifier: "WebhookAttempt" })

export const WebhookDeliveryView = Schema.Struct({
  endpointId: Schema.String,
  eventId: Schema.String,
  eventType: PayEventType,
  paymentId: Schema.NullOr(Schema.String),
  status: WebhookDeliveryState.annotations({
    description:
      "pending: not yet delivered, next attempt at nextAttemptAt; delivered: a 2xx came; failed: its retries are used up (redeliver it to try again)"
  }),
  nextAttemptAt: Schema.NullOr(Schema.String).annotations({
    description: "RFC 3339; null unless pending"
  }),
  createdAt: Schema.String.annotations({ description: "RFC 3339: when it was queued" }),
  attempts: Schema.Array(WebhookAttemptView).annotations({
    description: "Every attempt, newest first"
  })
}).annotations({ identifier: "WebhookDelivery" })

export const DeliveriesQuery = Schema.Struct({
  status: Schema.optional(WebhookDeliveryState),
  cursor: PageCursor,
  limit: Schema.optionalWith(PageLimit, { default: () => 20 })
})

export const listWebhookDeliveries = HttpApiEndpoint.get(
  "deliveries",
  "/v1/webhook-endpoints/:id/deliveries"
)
  .setHeaders(VersionHeaders)
  .setPath(WebhookEndpointPath)
  .setUrlParams(DeliveriesQuery)
  .addSuccess(
    Schema.Struct({
      data: Schema.Array(WebhookDeliveryView),
      nextCursor: Schema.NullOr(Schema.String)
    })
  )
  .annotate(OpenApi.Summary, "List an endpoint's deliveries and their attempts, newest first")
  .pipe(failsWith(ApiErrors.NotFound))

export const redeliverWebhookEvent = HttpApiEndpoint.post(
  "redeliver",
  "/v1/webhook-endpoints/:id/events/:eventId/redeliver"
)
  .setHeaders(VersionHeaders)
  .setPath(
    pathOf(
      { id: WebhookEndpointId, eventId: EventId },
      { error: ApiErrors.NotFound, nouns: { id: "webhook endpoint", eventId: "event" } }
    )
  )
  .addSuccess(WebhookDeliveryView, { status: 202 })
  .annotate(
    OpenApi.Summary,
    "Send one of your events to this endpoint again (queued now, with a fresh retry schedule)"
  )
  .pipe(failsWith(ApiErrors.NotFound))

export const testWebhookEndpoint = HttpApiEndpoint.post("test", "/v1/webhook-endpoints/:id/test")
  .setHeaders(VersionHeaders)
  .setPath(WebhookEndpointPath)
  .addSuccess(
    Schema.Struct({ event: EventView, delivery: WebhookDeliveryView }).annotations({
      identifier: "WebhookTest"
    }),
    { status: 202 }
  )
  .annotate(OpenApi.Summary, "Send a ping event to this endpoint only")
  .pipe(failsWith(ApiErrors.NotFound))

export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .annotate(OpenApi.Title, "Webhook endpoints")
  .add(createWebhookEndpoint)
  .add(listWebhookEndpoints)
  .add(getWebhookEndpoint)
  .add(updateWebhookEndpoint)
  .add(deleteWebhookEndpoint)
  .add(rotateWebhookSecret)
  .add(listWebhookDeliveries)
  .add(redeliverWebhookEvent)
  .add(testWebhookEndpoint)
  .middleware(PartnerApiKey) {}
