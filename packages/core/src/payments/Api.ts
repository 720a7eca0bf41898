/**
 * The payment routes of the partner API (SPEC.md 3, 4.3 and 4.5): wire
 * schemas matching the reference field for field, and the endpoints.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, IdempotencyKeyHeader, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { MerchantId } from "../merchants/Merchant.js"
import { LegacyPartnerApiKey, PartnerApiKey } from "../partners/PartnerAuth.js"
import { AmountInput } from "../shared/Amount.js"
import { boundedText, HttpsUrl } from "../shared/Text.js"
import { PaymentId, PaymentStatus } from "./Payment.js"

const Display = Schema.Struct({
  assetSymbol: Schema.String,
  assetName: Schema.String,
  decimals: Schema.Int,
  iconUrl: Schema.optional(Schema.String).annotations({ description: "Absent when unknown" }),
  networkName: Schema.optional(Schema.String),
  networkIconUrl: Schema.optional(Schema.String).annotations({ description: "Absent when unknown" })
}).annotations({ identifier: "AmountDisplay" })

export const AmountView = Schema.Struct({
  unit: Schema.String.annotations({ examples: ["iso4217/USD"] }),
  value: Schema.String.annotations({ description: "Minor units", examples: ["1050"] }),
  display: Schema.NullOr(Display)
}).annotations({ identifier: "Amount" })

const Timestamp = Schema.String.annotations({ description: "RFC 3339" })
const UnixSeconds = Schema.Int.annotations({ description: "Unix time in seconds" })

// ---- requests

/** Unix seconds (the reference) or an RFC 3339 string (WIRE.md). */
export const ExpiresAtInput = Schema.Union(
  Schema.Int.annotations({ description: "Unix time in seconds" }),
  Schema.String.annotations({ description: "RFC 3339 timestamp" })
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
const LegacyStatus = Schema.Literal(
  "requires_action",
  "processing",
  "succeeded",
  "failed",
  "expired"
)
const Strings = Schema.Union(Schema.String, Schema.Array(Schema.String))

const Limit = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be a whole number" }),
  Schema.between(1, 200, { message: () => "must be from 1 to 200" })
)

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
    description: "Token symbol (repeatable); CAIP-19 ids go in `asset`"
  }),
  asset: Schema.optional(Schema.String).annotations({
    description: "Deprecated: comma-separated CAIP-19 ids"
  }),
  network: Schema.optional(Schema.String).annotations({
    description: "Comma-separated CAIP-2 chain ids"
  }),
  sortBy: Schema.optional(Schema.Literal("date", "amount")),
  sortDir: Schema.optional(Schema.Literal("asc", "desc")),
  cursor: Schema.optional(Schema.String),
  limit: Schema.optionalWith(Limit, { default: () => 50 }),
  status: Schema.optional(Statuses),
  referenceId: Schema.optional(ReferenceSearch),
  merchantId: Schema.optional(Strings)
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

export const MaxPollParams = Schema.Struct({
  maxPollMs: Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int({ message: () => "must be a whole number of milliseconds" }),
      Schema.nonNegative({ message: () => "must be at least 0" })
    ).annotations({
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

// ---- responses

export const CreatePaymentResponse = Schema.Struct({
  paymentId: Schema.String,
  status: PaymentStatus,
  expiresAt: UnixSeconds,
  isFinal: Schema.Boolean,
  gatewayUrl: Schema.String.annotations({
    description: "The buyer link: open in a wallet or show as a QR code"
  }),
  pollInMs: Schema.optional(Schema.NullOr(Schema.Int))
}).annotations({ identifier: "CreatePaymentResponse" })

export const PaymentInfo = Schema.Struct({ optionAmount: AmountView, txId: Schema.String })

export const StatusResponse = Schema.Struct({
  status: PaymentStatus,
  isFinal: Schema.Boolean,
  pollInMs: Schema.optional(Schema.Int).annotations({ description: "Only while not final" }),
  failureCode: Schema.optional(Schema.String).annotations({ description: "Only when failed" }),
  info: Schema.NullOr(PaymentInfo).annotations({ description: "Only when succeeded" })
}).annotations({ identifier: "PaymentStatusResponse" })

export const CancelResponse = Schema.Struct({
  paymentId: Schema.String,
  status: PaymentStatus,
  cancelledReason: Schema.String,
  cancelledAt: Timestamp
}).annotations({ identifier: "PaymentsCancelPaymentResponse" })

const MerchantRef = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  iconUrl: Schema.NullOr(Schema.String)
})

export const PaymentView = Schema.Struct({
  paymentId: Schema.String,
  merchant: MerchantRef,
  referenceId: Schema.String,
  status: PaymentStatus,
  isTerminal: Schema.Boolean,
  fiatAmount: Schema.optional(AmountView),
  tokenAmount: Schema.optional(AmountView),
  buyer: Schema.optional(
    Schema.Struct({
      accountCaip10: Schema.String,
      accountProviderName: Schema.optional(Schema.String),
      accountProviderIcon: Schema.optional(Schema.String)
    })
  ),
  transaction: Schema.optional(
    Schema.Struct({
      networkId: Schema.String,
      hash: Schema.optional(Schema.String),
      nonce: Schema.optional(Schema.Int)
    })
  ),
  settlement: Schema.optional(
    Schema.Struct({
      settled: Schema.Boolean,
      amount: AmountView.annotations({
        description: "What the merchant receives: the token amount paid less fees"
      }),
      txHash: Schema.optional(Schema.String).annotations({ description: "Once settled" }),
      status: Schema.Literal("pending", "settled", "no_destination").annotations({
        description:
          "pending until the transfer to the merchant's settlement destination lands; no_destination when the merchant has no settlement for the asset paid (the funds stay with the engine until an operator settles again)"
      })
    })
  ).annotations({ description: "Once the payment succeeded" }),
  fees: Schema.optional(
    Schema.Struct({
      total: AmountView,
      fixed: AmountView,
      percentage: Schema.String.annotations({
        description: 'The percentage rate applied, as a decimal string: "0.4" is 0.4 %'
      })
    })
  ).annotations({
    description: "The engine's fees, in the token paid; once the payment succeeded"
  }),
  createdAt: Timestamp,
  lastUpdatedAt: Timestamp,
  settledAt: Schema.optional(Timestamp).annotations({ description: "Only once settled" })
}).annotations({ identifier: "Payment" })

export const PaymentDetails = Schema.Struct({
  ...PaymentView.fields,
  amount: AmountView.annotations({ description: "The amount as requested" }),
  isFinal: Schema.Boolean,
  expiresAt: UnixSeconds,
  gatewayUrl: Schema.String,
  failureCode: Schema.optional(Schema.String),
  cancelledReason: Schema.optional(Schema.String),
  info: Schema.NullOr(PaymentInfo),
  checkout: Schema.NullOr(Schema.Struct({ successUrl: Schema.String, errorUrl: Schema.String })),
  refund: Schema.NullOr(Schema.Struct({ refundId: Schema.String, createdAt: Timestamp }))
}).annotations({ identifier: "PaymentDetails" })

export const Stats = Schema.Struct({
  totalRevenue: Schema.Array(Schema.Struct({ amount: Schema.Number, currency: Schema.String })),
  totalTransactions: Schema.Int,
  totalCustomers: Schema.Int
}).annotations({
  identifier: "PaymentStats",
  description:
    "Over every match, not only the page. Revenue: requested amounts of succeeded payments, per currency, in major units. Transactions: succeeded payments. Customers: distinct buyer accounts among them."
})

export const ListPaymentsResponse = Schema.Struct({
  data: Schema.Array(PaymentView),
  nextCursor: Schema.NullOr(Schema.String),
  stats: Stats
})

export const LegacyPaymentView = Schema.Struct({
  payment_id: Schema.String,
  merchant_id: Schema.String,
  reference_id: Schema.String,
  status: LegacyStatus,
  is_terminal: Schema.Boolean,
  wallet_name: Schema.String,
  token_symbol: Schema.NullOr(Schema.String),
  token_decimals: Schema.Int,
  token_logo: Schema.NullOr(Schema.String),
  chain_logo: Schema.NullOr(Schema.String),
  wallet_logo: Schema.NullOr(Schema.String),
  chain_id: Schema.NullOr(Schema.String),
  buyer_caip10: Schema.NullOr(Schema.String),
  token_caip19: Schema.NullOr(Schema.String),
  tx_hash: Schema.NullOr(Schema.String),
  nonce: Schema.NullOr(Schema.Int),
  token_amount: Schema.NullOr(Schema.String),
  fiat_amount: Schema.NullOr(Schema.Int).annotations({ description: "Minor units" }),
  fiat_currency: Schema.NullOr(Schema.String),
  created_at: Schema.NullOr(Timestamp),
  last_updated_at: Schema.NullOr(Timestamp),
  settled_at: Schema.NullOr(Timestamp),
  settlement_status: Schema.NullOr(Schema.String),
  settlement_tx_hash: Schema.NullOr(Schema.String)
}).annotations({ identifier: "LegacyPayment" })

export const LegacyPaymentsResponse = Schema.Struct({
  data: Schema.Array(LegacyPaymentView),
  next_cursor: Schema.NullOr(Schema.String),
  stats: Schema.Struct({
    total_customers: Schema.Int,
    total_revenue: Schema.Struct({ amount: Schema.Number, currency: Schema.String }),
    total_transactions: Schema.Int
  })
})

export const RefundResponse = Schema.Struct({
  refund: Schema.Struct({
    refundId: Schema.String,
    paymentId: Schema.String,
    amount: AmountView,
    status: Schema.Literal("requested"),
    createdAt: Timestamp
  })
}).annotations({ identifier: "RefundResponse" })

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
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.PaymentNotFound))

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
