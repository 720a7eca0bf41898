/**
 * The one table of the errors the engine answers, each with its status, wire
 * code and body schema (WIRE.md section 3); the features' domain errors are
 * mapped to its rows where the API is assembled (ApiFailures.ts). Endpoints declare the entries they can answer
 * (`failsWith` in ApiDocs.ts), so the OpenAPI document and the typed client
 * read the same table the engine answers from. Every error body has one
 * shape: `{code, message, issues?}`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { FieldIssue } from "../shared/Errors.js"
import { json, type Reply } from "./Exchange.js"
import type { RequestError } from "./RequestError.js"

/** The body of one error code: `{code, message, issues?}` with `code` fixed. */
export interface ErrorBodyOf<Code extends string> {
  readonly code: Code
  readonly message: string
  readonly issues?: ReadonlyArray<FieldIssue> | undefined
}

/** One row of the table: an error the engine answers with this status and code. */
export interface ApiErrorSpec<Code extends string = string> {
  readonly status: number
  readonly code: Code
  /** `{code, message, issues?}` with `code` fixed: its type is `ErrorBodyOf<Code>`. */
  readonly schema: Schema.Schema.AnyNoContext
}

/**
 * A row: its body schema carries its status (as HttpApi reads it) and its name
 * (the OpenAPI component, `CancelRefusedError`).
 */
const row = <const Code extends string>(
  name: string,
  status: number,
  code: Code,
  description: string
): ApiErrorSpec<Code> => ({
  status,
  code,
  schema: Schema.Struct({
    code: Schema.Literal(code),
    message: Schema.String,
    issues: Schema.optional(Schema.Array(FieldIssue)).annotations({
      description: "Every offending field, on validation errors"
    })
  }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: name.endsWith("Error") ? name : `${name}Error`,
    description
  })
})

/** Every error the engine answers. */
export const ApiErrors = {
  // 400
  ParamsValidation: row(
    "ParamsValidation",
    400,
    "params_validation",
    "The body, or a header's value, is invalid; `issues` names each offending field"
  ),
  InvalidParams: row(
    "InvalidParams",
    400,
    "invalid_params",
    "A query parameter or header is invalid; `issues` names each offending field"
  ),
  MissingIdempotencyKey: row(
    "MissingIdempotencyKey",
    400,
    "missing_idempotency_key",
    "Idempotency-Key is required here"
  ),
  MissingMerchantId: row(
    "MissingMerchantId",
    400,
    "missing_merchant_id",
    "Merchant-Id is required here"
  ),
  UnknownApiVersion: row(
    "UnknownApiVersion",
    400,
    "unknown_api_version",
    "The requested API version is unknown"
  ),
  InvalidWebhookUrl: row(
    "InvalidWebhookUrl",
    400,
    "invalid_webhook_url",
    "The webhook endpoint's URL is refused: not https://, or its host is not on the public internet"
  ),
  CancelRefused: row(
    "CancelRefused",
    400,
    "invalid_state",
    "The payment's state does not allow this"
  ),
  // 401
  MissingApiKey: row("MissingApiKey", 401, "missing_api_key", "No API key was sent"),
  InvalidApiKey: row("InvalidApiKey", 401, "invalid_api_key", "The API key is not valid"),
  MissingAuthHeaders: row(
    "MissingAuthHeaders",
    401,
    "missing_auth_headers",
    "No wallet credentials were sent"
  ),
  MissingAppId: row("MissingAppId", 401, "missing_app_id", "Client-Id was sent without App-Id"),
  InvalidAppId: row("InvalidAppId", 401, "invalid_app_id", "The App-Id names no wallet app"),
  ConflictingAuthHeaders: row(
    "ConflictingAuthHeaders",
    401,
    "conflicting_auth_headers",
    "Api-Key and App-Id name different wallet apps"
  ),
  // 403
  Forbidden: row("Forbidden", 403, "forbidden", "A valid key used on another partner's resource"),
  InsufficientScope: row(
    "InsufficientScope",
    403,
    "insufficient_scope",
    "The API key lacks the scope the route needs, or would grant a key more scopes or a later end than its own"
  ),
  CollectTokenInvalid: row(
    "CollectTokenInvalid",
    403,
    "collect_token_invalid",
    "A data-collection page opened or posted without the token of its URL (`collectData.url`), or with one made for another payment or other accounts"
  ),
  AppDisabled: row(
    "AppDisabled",
    403,
    "app_disabled",
    "The wallet app (by its Api-Key or App-Id) is disabled by the operator"
  ),
  // 404
  NotFound: row("NotFound", 404, "not_found", "No such resource"),
  MerchantNotFound: row(
    "MerchantNotFound",
    404,
    "merchant_not_found",
    "The Merchant-Id header names no merchant"
  ),
  PaymentNotFound: row("PaymentNotFound", 404, "payment_not_found", "No such payment"),
  // 405
  MethodNotAllowed: row(
    "MethodNotAllowed",
    405,
    "method_not_allowed",
    "The path exists for other methods"
  ),
  // 409
  IdempotencyConflict: row(
    "IdempotencyConflict",
    409,
    "idempotency_conflict",
    "The key was used with another request, or its first request is still running"
  ),
  SettlementAssetConflict: row(
    "SettlementAssetConflict",
    409,
    "settlement_asset_conflict",
    "The merchant already has a settlement for this asset"
  ),
  MerchantInactive: row(
    "MerchantInactive",
    409,
    "merchant_inactive",
    "The merchant cannot accept payments"
  ),
  RefundExists: row("RefundExists", 409, "refund_exists", "The payment already has a refund"),
  LastActiveApiKey: row(
    "LastActiveApiKey",
    409,
    "last_active_api_key",
    "It is the partner's last active API key: create another first (the operator's CLI may revoke it)"
  ),
  ApiKeyInactive: row(
    "ApiKeyInactive",
    409,
    "api_key_inactive",
    "The API key is revoked or expired: only an active key can be rotated"
  ),
  InvalidState: row(
    "InvalidState",
    409,
    "invalid_state",
    "The payment's state does not allow this"
  ),
  QuoteExpired: row("QuoteExpired", 409, "quote_expired", "The option's price is no longer locked"),
  InsufficientBalance: row(
    "InsufficientBalance",
    409,
    "insufficient_balance",
    "The account holds less than the option needs"
  ),
  // 410
  PaymentExpired: row("PaymentExpired", 410, "payment_expired", "The payment expired"),
  // 413, 415
  PayloadTooLarge: row(
    "PayloadTooLarge",
    413,
    "payload_too_large",
    "The body is larger than the engine accepts"
  ),
  UnsupportedMediaType: row(
    "UnsupportedMediaType",
    415,
    "unsupported_media_type",
    "The body is not of the route's type"
  ),
  // 429
  RateLimited: row(
    "RateLimited",
    429,
    "rate_limited",
    "Too many requests with this API key, from this wallet app or about this payment (when the operator set rate limits); retry after `Retry-After` seconds"
  ),
  // 500, 503
  InternalError: row("InternalError", 500, "internal_error", "An unexpected failure"),
  ChainUnavailable: row(
    "ChainUnavailable",
    503,
    "chain_unavailable",
    "The network did not answer; nothing was submitted"
  ),
  TooManyLongPolls: row(
    "TooManyLongPolls",
    503,
    "too_many_long_polls",
    "The server holds as many long-polls as it may; retry after `Retry-After` seconds"
  )
} as const

/**
 * The failures a route may answer with, by tag: each feature registers its
 * own errors (its Failures.ts) through declaration merging, so the ground
 * floor names no feature; the engine is handed the mapping of each to its
 * reply, joined by the API's assembly (ApiFailures.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging
export interface ApiFailureRegistry {}

export type ApiFailure = RequestError | ApiFailureRegistry[keyof ApiFailureRegistry]

export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly issues?: ReadonlyArray<FieldIssue>
}

export interface ErrorReply {
  readonly status: number
  readonly body: ErrorBody
  readonly headers?: Readonly<Record<string, string>>
}

/** The reply of one table row. */
export const replyOf = (
  spec: ApiErrorSpec,
  message: string,
  issues?: ReadonlyArray<FieldIssue>
): ErrorReply => ({
  status: spec.status,
  body: { code: spec.code, message, ...(issues ? { issues } : {}) }
})

/** The reply of an exchange's own failure (RequestError). */
export const requestErrorReply = (e: RequestError): ErrorReply => ({
  status: e.status,
  body: { code: e.code, message: e.message, ...(e.issues ? { issues: e.issues } : {}) },
  ...(e.allow ? { headers: { allow: e.allow } } : {})
})

/** The replies of some of the registry's failures, by tag: what a feature declares for its own. */
export type FailureReplies<Tag extends keyof ApiFailureRegistry> = {
  readonly [T in Tag]: (failure: ApiFailureRegistry[T]) => ErrorReply
}

/**
 * A failure's reply as an idempotent route keeps it under its key
 * (`recordFailure`), replayed like a success: its status and body.
 */
export const keptReplyOf = ({ status, body }: ErrorReply): Reply => json(status, body)

export const INTERNAL_ERROR: ErrorReply = replyOf(ApiErrors.InternalError, "Internal Server Error")
