/**
 * Pieces of the HttpApi definition shared by every group: the error body
 * schemas per status, the partner key security scheme and the common headers.
 * They shape the OpenAPI document; the engine itself enforces them.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { API_VERSIONS } from "../shared/ApiVersion.js"
import { FieldIssue } from "../shared/Errors.js"

const errorBody = (
  identifier: string,
  description: string,
  codes: readonly [string, ...string[]]
) =>
  Schema.Struct({
    code: Schema.Literal(...codes),
    message: Schema.String,
    issues: Schema.optional(Schema.Array(FieldIssue)).annotations({
      description: "Every offending field, on validation errors"
    })
  }).annotations({ identifier, description })

export const BadRequestError = errorBody("BadRequestError", "Malformed or invalid input", [
  "params_validation",
  "invalid_params",
  "missing_idempotency_key",
  "missing_merchant_id",
  "unknown_api_version",
  "invalid_state"
])
export const UnauthorizedError = errorBody("UnauthorizedError", "Missing or wrong API key", [
  "missing_api_key",
  "invalid_api_key"
])
export const GatewayUnauthorizedError = errorBody(
  "GatewayUnauthorizedError",
  "Missing, wrong or conflicting wallet app credentials (Api-Key, App-Id)",
  [
    "missing_auth_headers",
    "missing_app_id",
    "invalid_api_key",
    "invalid_app_id",
    "conflicting_auth_headers"
  ]
)
export const ForbiddenError = errorBody(
  "ForbiddenError",
  "A valid key used on another partner's resource",
  ["forbidden"]
)
export const NotFoundError = errorBody("NotFoundError", "No such resource", [
  "not_found",
  "merchant_not_found",
  "payment_not_found"
])
export const ConflictError = errorBody("ConflictError", "The request conflicts with stored state", [
  "idempotency_conflict",
  "settlement_asset_conflict",
  "merchant_inactive",
  "refund_exists",
  "invalid_state"
])
export const PayloadTooLargeError = errorBody(
  "PayloadTooLargeError",
  "The body is larger than the engine accepts",
  ["payload_too_large"]
)
export const UnsupportedMediaTypeError = errorBody(
  "UnsupportedMediaTypeError",
  "The body is not JSON",
  ["unsupported_media_type"]
)
export const InternalError = errorBody("InternalError", "An unexpected failure", ["internal_error"])

/** The partner key: `Api-Key: <key>`, or `Authorization: Bearer <key>`. */
export class PartnerApiKey extends HttpApiMiddleware.Tag<PartnerApiKey>()("PartnerApiKey", {
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}

/**
 * A wallet app's credentials on gateway routes: its secret `Api-Key`, or its
 * public `App-Id` (then `Client-Id` is recorded as given); both may be sent
 * when they name the same app.
 */
export class WalletAppAuth extends HttpApiMiddleware.Tag<WalletAppAuth>()("WalletAppAuth", {
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }),
    appId: HttpApiSecurity.apiKey({ key: "App-Id", in: "header" })
  }
}) {}

const Version = Schema.optional(
  Schema.Literal(...API_VERSIONS).annotations({
    description: "API version for this request; defaults to the partner's pinned version"
  })
)

/** Headers every partner route reads (names are case-insensitive on the wire). */
export const VersionHeaders = Schema.Struct({
  "pay-version": Version,
  "wcp-version": Version,
  "api-version": Version
})

export const IdempotentHeaders = Schema.Struct({
  "idempotency-key": Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
    description:
      "Required. A replay with the same key and request returns the first response; the same key with another request is 409 idempotency_conflict."
  }),
  ...VersionHeaders.fields
})
