/**
 * The webhook endpoint route handlers: wire in, service call, wire out. The
 * signing secret appears in the create's answer only (and so in its replay).
 */
import { Effect } from "effect"
import { keptReply } from "../ApiFailures.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { json, type Reply } from "../http/Exchange.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { idempotently } from "../idempotency/Http.js"
import { CurrentPartner } from "../partners/PartnerAuth.js"
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  WebhookEndpointsApi,
  type WebhookEndpointView
} from "./Api.js"
import { WebhookUrlRefused } from "./UrlGuard.js"
import type { WebhookEndpoint } from "./WebhookEndpoint.js"
import { WebhookEndpoints } from "./WebhookEndpoints.js"

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

/** A refused URL is the request's answer: kept under its Idempotency-Key. */
const keptRefusal = <E>(error: E): Reply | undefined => {
  if (!(error instanceof WebhookUrlRefused)) return undefined
  return keptReply(error)
}

export const webhookEndpointHandlers = Effect.gen(function* () {
  const endpoints = yield* WebhookEndpoints
  return implement(WebhookEndpointsApi, {
    create: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const reply = (e: WebhookEndpoint, secret: string): Reply =>
          json(201, { ...webhookEndpointView(e), secret })
        return yield* idempotently(
          input,
          input.headers["idempotency-key"],
          (complete) =>
            endpoints
              .create(partner, input.payload, (e, secret) => complete(reply(e, secret)))
              .pipe(Effect.map(({ endpoint, secret }) => reply(endpoint, secret))),
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
        const reply = (e: WebhookEndpoint, secret: string): Reply =>
          json(200, {
            ...webhookEndpointView(e),
            secret,
            previousSecretExpiresAt: e.previousSecretExpiresAt?.toISOString() ?? null
          })
        return yield* idempotently(input, input.headers["idempotency-key"], (complete) =>
          endpoints
            .rotateSecret(
              partner,
              input.path.id,
              input.payload.expireCurrentInSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS,
              (e, secret) => complete(reply(e, secret))
            )
            .pipe(Effect.map(({ endpoint, secret }) => reply(endpoint, secret)))
        )
      }),

    delete: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        yield* endpoints.remove(partner, path.id)
        return json(200, { id: path.id, deleted: true })
      })
  })
})
