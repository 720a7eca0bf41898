/**
 * The wallet gateway's routes (SPEC.md 4.4 and the gateway rows of 4.5) with
 * the reference's wire shapes (WIRE.md sections 1 and 2). Gateway bodies
 * ignore unknown fields: wallets add their own.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  BadRequestError,
  ConflictError,
  GatewayUnauthorizedError,
  NotFoundError,
  VersionHeaders,
  WalletAppAuth
} from "../http/ApiDocs.js"
import { AmountView, CancelResponse, MaxPollParams, StatusResponse } from "../payments/Api.js"
import { PaymentStatus } from "../payments/Payment.js"
import { MAX_ACCOUNTS } from "./GatewayConfig.js"

const UnixSeconds = Schema.Int.annotations({ description: "Unix time in seconds" })

const OptionalText = Schema.optional(Schema.String)
const WalletHeaders = Schema.Struct({
  ...VersionHeaders.fields,
  "client-id": OptionalText.annotations({
    description: "The wallet's client id, recorded as given"
  }),
  "sdk-name": OptionalText,
  "sdk-version": OptionalText,
  "sdk-platform": OptionalText
})

export const GatewayPath = Schema.Struct({
  id: Schema.String.annotations({
    description:
      "The payment id (pay_…), or the buyer link percent-encoded once or twice (its pid query parameter or last path segment)"
  })
})

const BuyerInfo = Schema.Struct({
  accountCaip10: Schema.String,
  accountProviderName: Schema.NullOr(Schema.String),
  accountProviderIcon: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BuyerInfo" })

export const GatewayPaymentInfo = Schema.Struct({
  status: PaymentStatus,
  amount: AmountView,
  expiresAt: UnixSeconds,
  merchant: Schema.Struct({ name: Schema.String, iconUrl: Schema.NullOr(Schema.String) }),
  buyer: Schema.NullOr(BuyerInfo)
}).annotations({ identifier: "GetPaymentResponse" })

export const WalletActionView = Schema.Struct({
  type: Schema.Literal("walletRpc"),
  data: Schema.Struct({
    chain_id: Schema.String.annotations({ examples: ["eip155:8453"] }),
    method: Schema.Literal("eth_signTypedData_v4"),
    params: Schema.Array(Schema.String).annotations({
      description: "[signer address, the EIP-712 typed data as a JSON string]"
    })
  })
}).annotations({ identifier: "Action" })

const CollectDataView = Schema.Struct({
  fields: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      name: Schema.String,
      required: Schema.Boolean,
      type: Schema.String
    })
  ),
  schema: Schema.Unknown.annotations({ description: "JSON Schema (draft 2020-12)" }),
  url: Schema.String.annotations({ description: "The engine's data-collection page" })
}).annotations({ identifier: "CollectData" })

export const PaymentOptionView = Schema.Struct({
  id: Schema.String,
  account: Schema.String,
  amount: AmountView,
  actions: Schema.Array(WalletActionView),
  etaS: Schema.Int,
  expiresAt: Schema.NullOr(UnixSeconds).annotations({
    description: "When the locked price goes stale (confirm then answers 409 quote_expired)"
  }),
  collectData: Schema.NullOr(CollectDataView)
}).annotations({ identifier: "PaymentOption" })

export const OptionsRequest = Schema.Struct({
  accounts: Schema.Array(Schema.String).pipe(
    Schema.minItems(1, { message: () => "must name at least one CAIP-10 account" }),
    Schema.maxItems(MAX_ACCOUNTS, { message: () => `must name at most ${MAX_ACCOUNTS} accounts` })
  ),
  refresh: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
}).annotations({ identifier: "GetPaymentOptionsRequest" })

export const OptionsParams = Schema.Struct({
  includePaymentInfo: Schema.optional(Schema.BooleanFromString)
})

export const OptionsResponse = Schema.Struct({
  options: Schema.Array(PaymentOptionView),
  info: Schema.NullOr(GatewayPaymentInfo),
  collectData: Schema.NullOr(CollectDataView)
}).annotations({ identifier: "GetPaymentOptionsResponse" })

export const FetchRequest = Schema.Struct({
  optionId: Schema.String,
  data: Schema.optional(Schema.String)
}).annotations({ identifier: "FetchRequest" })

export const FetchResponse = Schema.Struct({ actions: Schema.Array(WalletActionView) }).annotations(
  {
    identifier: "FetchResponse"
  }
)

export const CollectedDataInput = Schema.Struct({
  fields: Schema.Array(Schema.Struct({ id: Schema.String, value: Schema.String }))
}).annotations({ identifier: "CollectDataResult" })

export const ConfirmRequest = Schema.Struct({
  optionId: Schema.String,
  results: Schema.Array(
    Schema.Struct({ type: Schema.String, data: Schema.Array(Schema.Unknown) })
  ).annotations({ description: "One result per action of the option, in order" }),
  collectedData: Schema.optional(Schema.NullOr(CollectedDataInput))
}).annotations({ identifier: "ConfirmPaymentRequest" })

const GoneError = Schema.Struct({
  code: Schema.Literal("payment_expired"),
  message: Schema.String
}).annotations({ identifier: "GoneError", description: "The payment expired" })

const UnavailableError = Schema.Struct({
  code: Schema.Literal("chain_unavailable"),
  message: Schema.String
}).annotations({
  identifier: "ServiceUnavailableError",
  description: "The network did not answer; nothing was submitted"
})

export const gatewayPayment = HttpApiEndpoint.get("gatewayPayment", "/v1/gateway/payment/:id")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .addSuccess(GatewayPaymentInfo)
  .addError(NotFoundError, { status: 404 })
  .annotate(OpenApi.Summary, "What a wallet shows to start paying: amount, merchant, status")

export const gatewayOptions = HttpApiEndpoint.post(
  "gatewayOptions",
  "/v1/gateway/payment/:id/options"
)
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(OptionsParams)
  .setPayload(OptionsRequest)
  .addSuccess(OptionsResponse)
  .addError(NotFoundError, { status: 404 })
  .addError(ConflictError, { status: 409 })
  .addError(GoneError, { status: 410 })
  .annotate(
    OpenApi.Summary,
    "Ways to pay for the given accounts: one option per settled token on each account's chain"
  )

export const gatewayFetch = HttpApiEndpoint.post("gatewayFetch", "/v1/gateway/payment/:id/fetch")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setPayload(FetchRequest)
  .addSuccess(FetchResponse)
  .addError(NotFoundError, { status: 404 })
  .addError(UnavailableError, { status: 503 })
  .annotate(OpenApi.Summary, "The actions of an option (the typed data to sign)")

export const gatewayConfirm = HttpApiEndpoint.post(
  "gatewayConfirm",
  "/v1/gateway/payment/:id/confirm"
)
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(MaxPollParams)
  .setPayload(ConfirmRequest)
  .addSuccess(StatusResponse)
  .addError(NotFoundError, { status: 404 })
  .addError(ConflictError, { status: 409 })
  .addError(GoneError, { status: 410 })
  .addError(UnavailableError, { status: 503 })
  .annotate(
    OpenApi.Summary,
    "Confirm an option with the wallet's signature: the payment goes to processing and its transfer to the chain"
  )

export const gatewayStatus = HttpApiEndpoint.get("gatewayStatus", "/v1/gateway/payment/:id/status")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(MaxPollParams)
  .addSuccess(StatusResponse)
  .addError(NotFoundError, { status: 404 })
  .annotate(OpenApi.Summary, "The payment's status; long-polls with maxPollMs")

export const gatewayCancel = HttpApiEndpoint.post("gatewayCancel", "/v1/gateway/payment/:id/cancel")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .addSuccess(CancelResponse)
  .addError(NotFoundError, { status: 404 })
  .annotate(
    OpenApi.Summary,
    "The buyer cancels (cancelled_by_user); 400 invalid_state unless it requires action"
  )

export class GatewayApi extends HttpApiGroup.make("gateway")
  .annotate(OpenApi.Title, "Wallet gateway")
  .add(gatewayPayment)
  .add(gatewayOptions)
  .add(gatewayFetch)
  .add(gatewayConfirm)
  .add(gatewayStatus)
  .add(gatewayCancel)
  .addError(BadRequestError, { status: 400 })
  .addError(GatewayUnauthorizedError, { status: 401 })
  .middleware(WalletAppAuth) {}
