/**
 * The payment routes of the partner API (SPEC.md 3, 4.3 and 4.5): wire
 * schemas matching the reference field for field, and the endpoints.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, IdempotencyKeyHeader, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { Expects } from "../http/Decode.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { LegacyPartnerApiKey, PartnerApiKey } from "../identity/PartnerAuth.js"
import { MerchantId } from "../merchants/Merchant.js"
import { AmountInput } from "../shared/Amount.js"
import { boundedText, HttpsUrl } from "../shared/Text.js"
import { wholeNumberFromString } from "../shared/WholeNumber.js"
import {
  CancelResponse,
  CreatePaymentResponse,
  LegacyPaymentsResponse,
  LegacyStatus,
  ListPaymentsResponse,
  PaymentDetails,
  RefundResponse,
  StatusResponse,
  Timestamp
} from "./ApiViews.js"
import { PaymentId, PaymentStatus } from "./Payment.js"

export * from "./ApiViews.js"

// ---- requests

/** Unix seconds (the reference) or an RFC 3339 string (WIRE.md). */
export const ExpiresAtInput = Schema.Union(
  Schema.Int.annotations({
    description: "Unix time in seconds",
    [Expects]: "a Unix time in seconds"
  }),
  Schema.String.annotations({
    description: "RFC 3339 timestamp",
    [Expects]: "an RFC 3339 timestamp like 2026-01-31T00:00:00Z"
  })
)

export const CheckoutInput = Schema.Struct({
  successUrl: HttpsUrl,
  errorUrl: HttpsUrl
}).annotations({ identifier: "CheckoutConfig" })

export const CreatePaymentRequest = Schema.Struct({
  referenceId: boundedText(1, 255).annotations({ description: "Your order id; not unique" }),
  amount: AmountInput,
  expiresAt: Schema.optional(Schema.NullOr(ExpiresAtInput)).annotations({
    description: "Must be in the future, at most 30 days ahead; default: 5 minutes from now"
  }),
  checkout: Schema.optional(Schema.NullOr(CheckoutInput))
}).annotations({ identifier: "CreatePayment" })

export const CreateRefundRequest = Schema.Struct({ paymentId: PaymentId }).annotations({
  identifier: "CreateRefund"
})

const Statuses = Schema.Union(PaymentStatus, Schema.Array(PaymentStatus))
const Strings = Schema.Union(Schema.String, Schema.Array(Schema.String))

const Limit = wholeNumberFromString(1, 200)

const ReferenceSearch = Schema.String.pipe(
  Schema.filter(
    (s) =>
      (s.length >= 3 && s.length <= 35 && /^[A-Za-z0-9 /:.,+-]+$/.test(s)) ||
      "must be 3 to 35 characters of letters, digits, space and / : . , + -"
  )
)

export const ListPaymentsParams = Schema.Struct({
  startTs: Schema.optional(Timestamp.annotations({ description: "RFC 3339, inclusive" })),
  endTs: Schema.optional(Timestamp.annotations({ description: "RFC 3339, exclusive" })),
  token_symbol: Schema.optional(Strings).annotations({
    description:
      "Token symbol (repeatable, at most 50 distinct, case-insensitive); CAIP-19 ids go in `asset`"
  }),
  asset: Schema.optional(Schema.String).annotations({
    description: "Deprecated: comma-separated CAIP-19 ids (at most 50 distinct)"
  }),
  network: Schema.optional(Schema.String).annotations({
    description: "Comma-separated CAIP-2 chain ids (at most 50 distinct)"
  }),
  sortBy: Schema.optional(Schema.Literal("date", "amount")),
  sortDir: Schema.optional(Schema.Literal("asc", "desc")),
  cursor: Schema.optional(Schema.String),
  limit: Schema.optionalWith(Limit, { default: () => 50 }),
  status: Schema.optional(Statuses),
  referenceId: Schema.optional(ReferenceSearch),
  merchantId: Schema.optional(Strings).annotations({
    description: "Merchant id (repeatable, at most 100 distinct)"
  })
})

export const MerchantPaymentsParams = Schema.Struct({
  startTs: ListPaymentsParams.fields.startTs,
  endTs: ListPaymentsParams.fields.endTs,
  asset: ListPaymentsParams.fields.asset,
  network: ListPaymentsParams.fields.network,
  sortBy: ListPaymentsParams.fields.sortBy,
  sortDir: ListPaymentsParams.fields.sortDir,
  cursor: ListPaymentsParams.fields.cursor,
  limit: ListPaymentsParams.fields.limit,
  status: ListPaymentsParams.fields.status
})

export const LegacyPaymentsParams = Schema.Struct({
  start_ts: Schema.optional(Timestamp),
  end_ts: Schema.optional(Timestamp),
  asset: Schema.optional(Schema.String),
  network: Schema.optional(Schema.String),
  sort_by: Schema.optional(Schema.Literal("date", "amount")),
  sort_dir: Schema.optional(Schema.Literal("asc", "desc")),
  cursor: Schema.optional(Schema.String),
  limit: Schema.optionalWith(Limit, { default: () => 50 }),
  status: Schema.optional(Schema.Union(LegacyStatus, Schema.Array(LegacyStatus)))
})

// Longer waits are not refused: the server cuts them to its limit (PAY_MAX_LONG_POLL_MS).
const MAX_POLL_RULE =
  "must be a whole number of milliseconds, 0 or more (the server waits at most 30000 by default)"

export const MaxPollParams = Schema.Struct({
  maxPollMs: Schema.optional(
    wholeNumberFromString(0, Number.MAX_SAFE_INTEGER, MAX_POLL_RULE).annotations({
      description: "Hold the request up to this long for a change (capped at 30000)"
    })
  )
})

/** A payment id in a path that does not decode names no payment: 404 payment_not_found. */
export const PaymentPath = pathOf(
  { id: PaymentId },
  { error: ApiErrors.PaymentNotFound, nouns: { id: "payment" } }
)
export const LegacyPath = pathOf(
  { merchant_id: MerchantId },
  { error: ApiErrors.NotFound, nouns: { merchant_id: "merchant" } }
)

// ---- headers

const MerchantIdHeader = MerchantId.annotations({ description: "The merchant (mrch_...)" })
const OptionalIdempotencyKey = Schema.optional(
  IdempotencyKeyHeader.annotations({
    description: "Optional: a replay returns the first response"
  })
)

const MerchantHeaders = Schema.Struct({ "merchant-id": MerchantIdHeader, ...VersionHeaders.fields })
const MerchantIdempotentHeaders = Schema.Struct({
  ...MerchantHeaders.fields,
  "idempotency-key": OptionalIdempotencyKey
})

// ---- endpoints

export const createPayment = HttpApiEndpoint.post("create", "/v1/payments")
  .setHeaders(MerchantIdempotentHeaders)
  .setPayload(CreatePaymentRequest)
  .addSuccess(CreatePaymentResponse, { status: 201 })
  .annotate(OpenApi.Summary, "Create a payment; answers the buyer link (gatewayUrl)")
  .pipe(
    failsWith(
      ApiErrors.Forbidden,
      ApiErrors.MerchantNotFound,
      ApiErrors.MerchantInactive,
      ApiErrors.IdempotencyConflict
    )
  )

export const listPayments = HttpApiEndpoint.get("list", "/v1/payments")
  .setHeaders(VersionHeaders)
  .setUrlParams(ListPaymentsParams)
  .addSuccess(ListPaymentsResponse)
  .annotate(OpenApi.Summary, "List payments with filters, and statistics over every match")
  .pipe(failsWith())

export const getPayment = HttpApiEndpoint.get("get", "/v1/payments/:id")
  .setHeaders(VersionHeaders)
  .setPath(PaymentPath)
  .addSuccess(PaymentDetails)
  .annotate(OpenApi.Summary, "Fetch a payment's full details")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.PaymentNotFound))

export const paymentStatus = HttpApiEndpoint.get("status", "/v1/payments/:id/status")
  .setHeaders(MerchantIdempotentHeaders)
  .setPath(PaymentPath)
  .setUrlParams(MaxPollParams)
  .addSuccess(StatusResponse)
  .annotate(OpenApi.Summary, "A payment's status; long-polls with maxPollMs")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.PaymentNotFound, ApiErrors.TooManyLongPolls))

export const cancelPayment = HttpApiEndpoint.post("cancel", "/v1/payments/:id/cancel")
  .setHeaders(MerchantIdempotentHeaders)
  .setPath(PaymentPath)
  .addSuccess(CancelResponse)
  .annotate(OpenApi.Summary, "Cancel a payment that still requires action (else 400 invalid_state)")
  .pipe(
    failsWith(
      ApiErrors.Forbidden,
      ApiErrors.PaymentNotFound,
      ApiErrors.CancelRefused,
      ApiErrors.IdempotencyConflict
    )
  )

export const createRefund = HttpApiEndpoint.post("refund", "/v1/refunds")
  .setHeaders(
    Schema.Struct({ ...VersionHeaders.fields, "idempotency-key": OptionalIdempotencyKey })
  )
  .setPayload(CreateRefundRequest)
  .addSuccess(RefundResponse, { status: 201 })
  .annotate(
    OpenApi.Summary,
    "Request a full refund of a succeeded payment (a marker; once per payment)"
  )
  .pipe(
    failsWith(
      ApiErrors.Forbidden,
      ApiErrors.PaymentNotFound,
      ApiErrors.RefundExists,
      ApiErrors.InvalidState,
      ApiErrors.IdempotencyConflict
    )
  )

export const merchantPayments = HttpApiEndpoint.get("merchantPayments", "/v1/merchants/payments")
  .setHeaders(MerchantHeaders)
  .setUrlParams(MerchantPaymentsParams)
  .addSuccess(ListPaymentsResponse)
  .annotate(OpenApi.Summary, "A merchant's payments (Merchant-Id header)")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.MerchantNotFound))

export const legacyMerchantPayments = HttpApiEndpoint.get(
  "legacyMerchantPayments",
  "/v1/merchants/:merchant_id/payments"
)
  .setHeaders(VersionHeaders)
  .setPath(LegacyPath)
  .setUrlParams(LegacyPaymentsParams)
  .middleware(LegacyPartnerApiKey)
  .addSuccess(LegacyPaymentsResponse)
  .annotate(OpenApi.Summary, "Deprecated: a merchant's payments, snake_case (X-Api-Key or Api-Key)")
  .annotate(OpenApi.Deprecated, true)
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.NotFound))

export class PaymentsApi extends HttpApiGroup.make("payments")
  .annotate(OpenApi.Title, "Payments")
  .add(createPayment)
  .add(listPayments)
  .add(getPayment)
  .add(paymentStatus)
  .add(cancelPayment)
  .add(createRefund)
  .add(merchantPayments)
  .add(legacyMerchantPayments)
  .middleware(PartnerApiKey) {}
