/**
 * The webhook endpoint route handlers: wire in, service call, wire out. The
 * signing secret appears in the create's answer only (and so in its replay).
 */
import { Effect } from "effect"
import { EventId } from "../events/Event.js"
import { eventView } from "../events/Http.js"
import { ApiErrors, keptReplyOf } from "../http/ErrorResponses.js"
import { json, type Reply } from "../http/Exchange.js"
import { cursorParam } from "../http/QueryParams.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { idempotentlyWithSecret } from "../idempotency/Http.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import { cursorCodec, keysetPage } from "../shared/Cursor.js"
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  type WebhookDeliveryView,
  WebhookEndpointsApi,
  type WebhookEndpointView
} from "./Api.js"
import { webhookFailures } from "./Failures.js"
import { WebhookUrlRefused } from "./UrlGuard.js"
import type { WebhookDelivery, WebhookDeliveryRecord } from "./WebhookDelivery.js"
import type { WebhookEndpoint } from "./WebhookEndpoint.js"
import { WebhookEndpoints } from "./WebhookEndpoints.js"
import { WebhookWork } from "./WebhookWork.js"

export const webhookEndpointView = (e: WebhookEndpoint): typeof WebhookEndpointView.Type => ({
  id: e.id,
  url: e.url,
  events: e.events,
  merchantId: e.merchantId,
  description: e.description,
  apiVersion: e.apiVersion,
  status: e.status,
  disabledReason: e.disabledReason,
  createdAt: e.createdAt.toISOString()
})

export const webhookDeliveryView = ({
  delivery: d,
  eventType,
  attempts
}: WebhookDeliveryRecord): typeof WebhookDeliveryView.Type => ({
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType,
  paymentId: d.paymentId,
  status: d.state,
  nextAttemptAt: d.state === "pending" ? d.nextAttemptAt.toISOString() : null,
  createdAt: d.createdAt.toISOString(),
  attempts: attempts.map((a) => ({
    attemptedAt: a.attemptedAt.toISOString(),
    durationMs: a.durationMs,
    responseStatus: a.responseStatus,
    responseBody: a.responseBody,
    error: a.error
  }))
})

/** A delivery just queued: no attempts yet. */
const queuedView = (delivery: WebhookDelivery, eventType: WebhookDeliveryRecord["eventType"]) =>
  webhookDeliveryView({ delivery, eventType, attempts: [] })

// Inside the opaque cursor: the event of the page's last delivery.
const cursors = cursorCodec("d1.", EventId)

/** A refused URL is the request's answer: kept under its Idempotency-Key. */
const keptRefusal = <E>(error: E): Reply | undefined => {
  if (!(error instanceof WebhookUrlRefused)) return undefined
  return keptReplyOf(webhookFailures.WebhookUrlRefused(error))
}

export const webhookEndpointHandlers = Effect.gen(function* () {
  const endpoints = yield* WebhookEndpoints
  const work = yield* WebhookWork
  return implement(WebhookEndpointsApi, {
    create: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const view = (e: WebhookEndpoint, secret: string) => ({
          ...webhookEndpointView(e),
          secret
        })
        return yield* idempotentlyWithSecret(
          input,
          input.headers["idempotency-key"],
          (keep) =>
            endpoints
              .create(partner, input.payload, (e, secret) => keep(201, view(e, secret)))
              .pipe(Effect.map(({ endpoint, secret }) => json(201, view(endpoint, secret)))),
          keptRefusal
        )
      }),

    list: () =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        return json(200, { data: (yield* endpoints.list(partner)).map(webhookEndpointView) })
      }),

    get: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        return json(200, webhookEndpointView(yield* endpoints.get(partner, path.id)))
      }),

    update: ({ path, payload }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        if (Object.keys(payload).length === 0) {
          return yield* RequestError.invalid(
            ApiErrors.ParamsValidation,
            "body",
            "give at least one of url, events, description, status"
          )
        }
        return json(200, webhookEndpointView(yield* endpoints.update(partner, path.id, payload)))
      }),

    rotateSecret: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const view = (e: WebhookEndpoint, secret: string) => ({
          ...webhookEndpointView(e),
          secret,
          previousSecretExpiresAt: e.previousSecretExpiresAt?.toISOString() ?? null
        })
        return yield* idempotentlyWithSecret(input, input.headers["idempotency-key"], (keep) =>
          endpoints
            .rotateSecret(
              partner,
              input.path.id,
              input.payload.expireCurrentInSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS,
              (e, secret) => keep(200, view(e, secret))
            )
            .pipe(Effect.map(({ endpoint, secret }) => json(200, view(endpoint, secret))))
        )
      }),

    deliveries: ({ path, urlParams }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const before = yield* cursorParam(cursors, urlParams.cursor)
        const fetched = yield* endpoints.listDeliveries(partner, path.id, {
          state: urlParams.status,
          before,
          limit: urlParams.limit + 1
        })
        const { rows, nextCursor } = keysetPage(fetched, urlParams.limit, (last) =>
          cursors.encode(last.delivery.eventId)
        )
        return json(200, { data: rows.map(webhookDeliveryView), nextCursor })
      }),

    redeliver: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const record = yield* endpoints.redeliver(partner, path.id, path.eventId)
        yield* work.wake
        return json(202, webhookDeliveryView(record))
      }),

    test: ({ path, version }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const { event, delivery } = yield* endpoints.ping(partner, path.id)
        yield* work.wake
        return json(202, {
          event: eventView(event, version),
          delivery: queuedView(delivery, event.type)
        })
      }),

    delete: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        yield* endpoints.remove(partner, path.id)
        return json(200, { id: path.id, deleted: true })
      })
  })
})
