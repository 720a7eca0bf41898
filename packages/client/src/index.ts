/**
 * @pay/client: a typed client for the engine's partner API, derived from its
 * HttpApi definition (`PayApi` in @pay/core). The Effect form is the
 * platform's `HttpApiClient` with the partner key; the Promise facade takes
 * wire values, decodes them with the definition's schemas, and rejects with
 * typed errors.
 */

/** Verifying a webhook delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`). */
export {
  DEFAULT_TOLERANCE_SECONDS,
  verifyWebhook,
  WebhookVerificationError
} from "@pay/core/webhooks"
export type { WireRequest } from "./Call.js"
export { retryable } from "./Call.js"
export type {
  Endpoint,
  EndpointName,
  ErrorBody,
  ErrorCode,
  GroupName,
  LocalValidationCode,
  Success
} from "./Definition.js"
export {
  type FieldIssue,
  PayApiError,
  type PayClientError,
  PayNetworkError,
  PayResponseError
} from "./Errors.js"
export { makePayClient, type PayApiClient, PayClient, type PayClientOptions } from "./PayClient.js"
export {
  type ApiErrorOf,
  type CallOptions,
  type CreateOptions,
  type CreatePayClientOptions,
  createPayClient,
  type Method,
  type PayPromiseClient
} from "./PromiseClient.js"
