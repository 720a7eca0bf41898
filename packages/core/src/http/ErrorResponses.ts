/**
 * The one place where failures become HTTP: each domain error's status, wire
 * code and message (WIRE.md section 3). Every error body has one shape:
 * `{code, message, issues?}`.
 */
import { Match } from "effect"
import type { GatewayAuthError } from "../apps/WalletApp.js"
import type {
  ChainUnreachable,
  InsufficientBalance,
  QuoteExpired
} from "../gateway/GatewayErrors.js"
import type { MerchantNotFound } from "../merchants/Merchant.js"
import type {
  InvalidState,
  MerchantInactive,
  PaymentExpired,
  PaymentNotFound,
  RefundExists
} from "../payments/Payment.js"
import type { SettlementAssetConflict, SettlementNotFound } from "../settlements/Settlement.js"
import type {
  Forbidden,
  IdempotencyConflict,
  InvalidInput,
  Unauthenticated
} from "../shared/Errors.js"
import type { RequestError } from "./RequestError.js"

export type ApiFailure =
  | RequestError
  | InvalidInput
  | Unauthenticated
  | Forbidden
  | IdempotencyConflict
  | MerchantNotFound
  | SettlementNotFound
  | SettlementAssetConflict
  | PaymentNotFound
  | InvalidState
  | PaymentExpired
  | MerchantInactive
  | RefundExists
  | QuoteExpired
  | InsufficientBalance
  | ChainUnreachable
  | GatewayAuthError

export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly issues?: ReadonlyArray<{ readonly field: string; readonly message: string }>
}

export interface ErrorReply {
  readonly status: number
  readonly body: ErrorBody
  readonly headers?: Readonly<Record<string, string>>
}

const GATEWAY_AUTH_MESSAGES: Record<GatewayAuthError["reason"], string> = {
  missing_auth_headers: "Missing wallet credentials: send Api-Key or App-Id",
  missing_app_id: "Client-Id was sent without App-Id",
  invalid_api_key: "Invalid API key",
  invalid_app_id: "Invalid App-Id",
  conflicting_auth_headers: "Api-Key and App-Id name different wallet apps"
}

export const errorReply: (failure: ApiFailure) => ErrorReply = Match.type<ApiFailure>().pipe(
  Match.tagsExhaustive({
    RequestError: (e) => ({
      status: e.status,
      body: { code: e.code, message: e.message, ...(e.issues ? { issues: e.issues } : {}) },
      ...(e.allow ? { headers: { allow: e.allow } } : {})
    }),
    InvalidInput: (e) => ({
      status: 400,
      body: { code: "params_validation", message: e.message, issues: e.issues }
    }),
    Unauthenticated: (e) =>
      e.reason === "missing"
        ? { status: 401, body: { code: "missing_api_key", message: "Missing API key" } }
        : { status: 401, body: { code: "invalid_api_key", message: "Invalid API key" } },
    // Every refusal of a wallet's credentials is 401, a conflict of two valid headers too: the
    // reference documents only 401 for gateway authentication, and a wallet reacts to all alike.
    GatewayAuthError: (e) => ({
      status: 401,
      body: { code: e.reason, message: GATEWAY_AUTH_MESSAGES[e.reason] }
    }),
    Forbidden: (e) => ({ status: 403, body: { code: "forbidden", message: e.message } }),
    IdempotencyConflict: (e) => ({
      status: 409,
      body: {
        code: "idempotency_conflict",
        message:
          e.reason === "different_request"
            ? "Idempotency key conflict: same key was used with a different request"
            : "Idempotency key conflict: a request with this key is still being processed; retry later"
      }
    }),
    MerchantNotFound: (e) => ({
      status: 404,
      body: { code: "not_found", message: `No merchant ${e.merchantId}` }
    }),
    SettlementNotFound: (e) => ({
      status: 404,
      body: { code: "not_found", message: `No crypto settlement ${e.settlementId}` }
    }),
    PaymentNotFound: (e) => ({
      status: 404,
      body: { code: "payment_not_found", message: `No payment ${e.paymentId}` }
    }),
    // The reference answers 400 to a cancel that cannot happen; other refusals are 409 (WIRE.md).
    InvalidState: (e) => ({
      status: e.kind === "cancel" ? 400 : 409,
      body: { code: "invalid_state", message: e.message }
    }),
    PaymentExpired: (e) => ({
      status: 410,
      body: { code: "payment_expired", message: `Payment ${e.paymentId} has expired` }
    }),
    MerchantInactive: (e) => ({
      status: 409,
      body: {
        code: "merchant_inactive",
        message: `Merchant ${e.merchantId} is ${e.status} and cannot accept payments`
      }
    }),
    RefundExists: (e) => ({
      status: 409,
      body: {
        code: "refund_exists",
        message: `Payment ${e.paymentId} already has a refund (${e.refundId})`
      }
    }),
    QuoteExpired: (e) => ({
      status: 409,
      body: {
        code: "quote_expired",
        message: `The price of option ${e.optionId} is no longer locked; fetch the options again`
      }
    }),
    InsufficientBalance: (e) => ({
      status: 409,
      body: {
        code: "insufficient_balance",
        message: `${e.account} holds ${e.balance} of ${e.asset} in minor units; the option needs ${e.required}`
      }
    }),
    ChainUnreachable: (e) => ({
      status: 503,
      body: {
        code: "chain_unavailable",
        message: `The network ${e.chainId} did not answer; nothing was submitted, try again`
      }
    }),
    SettlementAssetConflict: (e) => ({
      status: 409,
      body: {
        code: "settlement_asset_conflict",
        message: `Merchant ${e.merchantId} already has a settlement for ${e.asset}`
      }
    })
  })
)

export const INTERNAL_ERROR: ErrorReply = {
  status: 500,
  body: { code: "internal_error", message: "Internal Server Error" }
}
