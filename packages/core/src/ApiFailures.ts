/**
 * The features' domain errors as HTTP answers: registered as the failures a
 * route may answer with (http/ErrorResponses.ts's registry), and each mapped
 * to its row of the one error table. The API's assembly, like Api.ts: the
 * ground floor (http/) names no feature.
 */
import { Match } from "effect"
import type { GatewayAuthError } from "./apps/WalletApp.js"
import type {
  ChainUnreachable,
  InsufficientBalance,
  QuoteExpired
} from "./gateway/GatewayErrors.js"
import {
  type ApiErrorSpec,
  ApiErrors,
  type ApiFailure,
  type ErrorReply,
  replyOf,
  requestErrorReply
} from "./http/ErrorResponses.js"
import { json, type Reply } from "./http/Exchange.js"
import type { ApiKeyInactive, ApiKeyNotFound, LastActiveApiKey } from "./keys/KeyRecord.js"
import type { LogoRefused } from "./merchants/Logo.js"
import type { MerchantNotFound } from "./merchants/Merchant.js"
import type { SettlementAssetConflict, SettlementNotFound } from "./merchants/Settlement.js"
import type {
  InvalidState,
  LongPollsExhausted,
  MerchantInactive,
  PaymentExpired,
  PaymentNotFound,
  RefundExists
} from "./payments/Payment.js"
import { LONG_POLL_RETRY_AFTER_SECONDS } from "./payments/PaymentsConfig.js"
import type { RateLimited } from "./ratelimit/RateLimited.js"
import type {
  Forbidden,
  IdempotencyConflict,
  InvalidInput,
  Unauthenticated
} from "./shared/Errors.js"
import type { WebhookUrlRefused } from "./webhooks/UrlGuard.js"
import type { WebhookEndpointNotFound, WebhookEventNotFound } from "./webhooks/WebhookEndpoints.js"

declare module "./http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly InvalidInput: InvalidInput
    readonly Unauthenticated: Unauthenticated
    readonly Forbidden: Forbidden
    readonly IdempotencyConflict: IdempotencyConflict
    readonly MerchantNotFound: MerchantNotFound
    readonly SettlementNotFound: SettlementNotFound
    readonly SettlementAssetConflict: SettlementAssetConflict
    readonly PaymentNotFound: PaymentNotFound
    readonly InvalidState: InvalidState
    readonly PaymentExpired: PaymentExpired
    readonly LongPollsExhausted: LongPollsExhausted
    readonly MerchantInactive: MerchantInactive
    readonly RefundExists: RefundExists
    readonly QuoteExpired: QuoteExpired
    readonly InsufficientBalance: InsufficientBalance
    readonly ChainUnreachable: ChainUnreachable
    readonly GatewayAuthError: GatewayAuthError
    readonly LogoRefused: LogoRefused
    readonly WebhookUrlRefused: WebhookUrlRefused
    readonly WebhookEndpointNotFound: WebhookEndpointNotFound
    readonly WebhookEventNotFound: WebhookEventNotFound
    readonly ApiKeyNotFound: ApiKeyNotFound
    readonly LastActiveApiKey: LastActiveApiKey
    readonly ApiKeyInactive: ApiKeyInactive
    readonly RateLimited: RateLimited
  }
}

const GATEWAY_AUTH: Record<GatewayAuthError["reason"], readonly [ApiErrorSpec, string]> = {
  missing_auth_headers: [
    ApiErrors.MissingAuthHeaders,
    "Missing wallet credentials: send the wallet app's Api-Key header or its App-Id header"
  ],
  missing_app_id: [
    ApiErrors.MissingAppId,
    "Client-Id was sent without App-Id: send the wallet app's App-Id with it, or its Api-Key"
  ],
  invalid_api_key: [
    ApiErrors.InvalidApiKey,
    "Invalid API key: the Api-Key sent is no wallet app's key (a partner's key does not work on gateway routes)"
  ],
  invalid_app_id: [
    ApiErrors.InvalidAppId,
    "Invalid App-Id: it names no wallet app; send the app_… id the app was created with"
  ],
  conflicting_auth_headers: [
    ApiErrors.ConflictingAuthHeaders,
    "Api-Key and App-Id name different wallet apps: send one of them, or both of the same app"
  ]
}

const RATE_LIMITED_BY: Record<RateLimited["scope"], string> = {
  api_key: "Too many requests with this API key",
  wallet_app: "Too many requests from this wallet app",
  payment: "Too many requests about this payment"
}

/** Every failure a route may answer with, as its reply: exhaustive over the registry. */
export const errorReply: (failure: ApiFailure) => ErrorReply = Match.type<ApiFailure>().pipe(
  Match.tagsExhaustive({
    RequestError: requestErrorReply,
    InvalidInput: (e) => replyOf(ApiErrors.ParamsValidation, e.message, e.issues),
    Unauthenticated: (e) =>
      e.reason === "missing"
        ? replyOf(ApiErrors.MissingApiKey, "Missing API key")
        : replyOf(
            ApiErrors.InvalidApiKey,
            "Invalid API key: the key sent in Api-Key (or Authorization: Bearer) is not an active key of any partner: mistyped, revoked or expired"
          ),
    // Every refusal of a wallet's credentials is 401, a conflict of two valid headers too: the
    // reference documents only 401 for gateway authentication, and a wallet reacts to all alike.
    GatewayAuthError: (e) => replyOf(...GATEWAY_AUTH[e.reason]),
    Forbidden: (e) => replyOf(ApiErrors.Forbidden, e.message),
    IdempotencyConflict: (e) =>
      replyOf(
        ApiErrors.IdempotencyConflict,
        e.reason === "different_request"
          ? "Idempotency-Key conflict: this key was used with a different request; send a new Idempotency-Key for a new request"
          : "Idempotency-Key conflict: the first request with this key is still being processed; retry later with the same Idempotency-Key"
      ),
    MerchantNotFound: (e) => replyOf(ApiErrors.NotFound, `No merchant ${e.merchantId}`),
    WebhookUrlRefused: (e) =>
      replyOf(ApiErrors.InvalidWebhookUrl, `url: ${e.reason}`, [
        { field: "url", message: e.reason }
      ]),
    WebhookEndpointNotFound: (e) =>
      replyOf(ApiErrors.NotFound, `No webhook endpoint ${e.endpointId}`),
    WebhookEventNotFound: (e) => replyOf(ApiErrors.NotFound, `No event ${e.eventId}`),
    ApiKeyNotFound: (e) => replyOf(ApiErrors.NotFound, `No API key ${e.keyId}`),
    LastActiveApiKey: (e) =>
      replyOf(
        ApiErrors.LastActiveApiKey,
        `${e.keyId} is this partner's last active API key: create another before revoking it, or ask the operator (npm run pay -- keys revoke)`
      ),
    ApiKeyInactive: (e) =>
      replyOf(ApiErrors.ApiKeyInactive, `${e.keyId} is revoked or expired: rotate an active key`),
    LogoRefused: (e) =>
      replyOf(ApiErrors.ParamsValidation, `iconUrl: ${e.message}`, [
        { field: "iconUrl", code: e.code, message: e.message }
      ]),
    SettlementNotFound: (e) =>
      replyOf(ApiErrors.NotFound, `No crypto settlement ${e.settlementId}`),
    PaymentNotFound: (e) => replyOf(ApiErrors.PaymentNotFound, `No payment ${e.paymentId}`),
    // The reference answers 400 to a cancel that cannot happen; other refusals are 409 (WIRE.md).
    InvalidState: (e) =>
      replyOf(e.kind === "cancel" ? ApiErrors.CancelRefused : ApiErrors.InvalidState, e.message),
    PaymentExpired: (e) => replyOf(ApiErrors.PaymentExpired, `Payment ${e.paymentId} has expired`),
    LongPollsExhausted: (e) => ({
      ...replyOf(
        ApiErrors.TooManyLongPolls,
        `The server already holds ${e.held} long-polls; retry in ${LONG_POLL_RETRY_AFTER_SECONDS} seconds, or ask without maxPollMs`
      ),
      headers: { "retry-after": String(LONG_POLL_RETRY_AFTER_SECONDS) }
    }),
    RateLimited: (e) => ({
      ...replyOf(
        ApiErrors.RateLimited,
        `${RATE_LIMITED_BY[e.scope]}; retry in ${e.retryAfterSeconds} second${e.retryAfterSeconds === 1 ? "" : "s"}`
      ),
      headers: { "retry-after": String(e.retryAfterSeconds) }
    }),
    MerchantInactive: (e) =>
      replyOf(
        ApiErrors.MerchantInactive,
        `Merchant ${e.merchantId} is ${e.status} and cannot accept payments: only an active merchant can`
      ),
    RefundExists: (e) =>
      replyOf(
        ApiErrors.RefundExists,
        `Payment ${e.paymentId} already has a refund (${e.refundId})`
      ),
    QuoteExpired: (e) =>
      replyOf(
        ApiErrors.QuoteExpired,
        `The price of option ${e.optionId} is no longer locked; fetch the options again`
      ),
    InsufficientBalance: (e) =>
      replyOf(
        ApiErrors.InsufficientBalance,
        `${e.account} holds ${e.balance} of ${e.asset} in minor units; the option needs ${e.required}`
      ),
    ChainUnreachable: (e) =>
      replyOf(
        ApiErrors.ChainUnavailable,
        `The network ${e.chainId} did not answer; nothing was submitted, try again`
      ),
    SettlementAssetConflict: (e) =>
      replyOf(
        ApiErrors.SettlementAssetConflict,
        `Merchant ${e.merchantId} already has a settlement for ${e.asset}`
      )
  })
)

/**
 * A failure as the reply an idempotent route keeps under its key
 * (`recordFailure`), replayed like a success: its status and body.
 */
export const keptReply = (failure: ApiFailure): Reply => {
  const { status, body } = errorReply(failure)
  return json(status, body)
}
