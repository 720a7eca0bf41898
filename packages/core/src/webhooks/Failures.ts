/**
 * The webhook endpoints' errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { WebhookUrlRefused } from "./UrlGuard.js"
import type { WebhookEndpointNotFound, WebhookEventNotFound } from "./WebhookEndpoints.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly WebhookUrlRefused: WebhookUrlRefused
    readonly WebhookEndpointNotFound: WebhookEndpointNotFound
    readonly WebhookEventNotFound: WebhookEventNotFound
  }
}

export const webhookFailures: FailureReplies<
  "WebhookUrlRefused" | "WebhookEndpointNotFound" | "WebhookEventNotFound"
> = {
  WebhookUrlRefused: (e) =>
    replyOf(ApiErrors.InvalidWebhookUrl, `url: ${e.reason}`, [{ field: "url", message: e.reason }]),
  WebhookEndpointNotFound: (e) =>
    replyOf(ApiErrors.NotFound, `No webhook endpoint ${e.endpointId}`),
  WebhookEventNotFound: (e) => replyOf(ApiErrors.NotFound, `No event ${e.eventId}`)
}
