/**
 * The wallet gateway's routes (SPEC.md 4.4 and the gateway rows of 4.5) with
 * the reference's wire shapes (WIRE.md sections 1 and 2). Gateway bodies
 * ignore unknown fields: wallets add their own.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { WalletAppAuth } from "../apps/WalletAppAuth.js"
import { failsWith, pathOf, UnknownBodyFields, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import {
  AmountView,
  CancelResponse,
  Livemode,
  MaxPollParams,
  StatusResponse
} from "../payments/Api.js"
import { PaymentId, PaymentStatus } from "../payments/Payment.js"
import { MAX_ACCOUNTS } from "./GatewayConfig.js"
import { NO_OPTIONS_CODES } from "./NoOptionsCode.js"
import { paymentIdOfSegment } from "./PaymentRef.js"

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

/** The payment a gateway path names: its id, or its buyer link (WIRE.md section 1). */
const PaymentRefSegment = Schema.transformOrFail(Schema.String, PaymentId, {
  strict: true,
  decode: (segment, _, ast) => {
    const id = paymentIdOfSegment(segment)
    return id === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, segment, "names no payment"))
      : ParseResult.succeed(id)
  },
  encode: ParseResult.succeed
}).annotations({
  description:
    "The payment id (pay_…), or the buyer link percent-encoded once or twice (its pid query parameter or last path segment)"
})

/** Anything else names no payment: 404 payment_not_found. */
export const GatewayPath = pathOf(
  { id: PaymentRefSegment },
  {
    error: ApiErrors.PaymentNotFound,
    nouns: { id: "payment" },
    message:
      "The path names no payment: send the payment id (pay_…) or its buyer link, percent-encoded"
  }
)

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
  buyer: Schema.NullOr(BuyerInfo),
  livemode: Livemode.annotations({
    description:
      "false for a test payment (the sandbox chain, or testnets only): a wallet may say so to its user"
  })
}).annotations({ identifier: "GetPaymentResponse" })

export const WalletActionView = Schema.Struct({
  type: Schema.Literal("walletRpc"),
  data: Schema.Struct({
    chain_id: Schema.String.annotations({ examples: ["eip155:8453"] }),
    method: Schema.Literal("eth_signTypedData_v4", "eth_sendTransaction"),
    params: Schema.Array(Schema.String).annotations({
      description:
        "eth_signTypedData_v4: [signer address, the EIP-712 typed data as a JSON string]; eth_sendTransaction: [the transaction as a JSON string: from, to, data, value, chainId] (a Permit2 option's approval, sent before the signature)"
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
  collectData: Schema.NullOr(CollectDataView),
  affordable: Schema.NullOr(Schema.Boolean).annotations({
    description:
      "Whether the account holds enough of the token, read when the options were made (false: offered all the same, ranked last; null: not read, or the network did not answer). Not in the reference: wallets that do not know it ignore it"
  })
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

/** Why `options` is empty (NoOptions.ts): beside the reference's fields, which wallets read as before. */
export const NoOptionsReasonView = Schema.Struct({
  code: Schema.Literal(...NO_OPTIONS_CODES).annotations({
    description:
      "no_settlement: the merchant has no crypto settlement; settlement_not_payable: none of its settlements is in a token of a network the engine runs; no_price: no rate from the payment's currency to those tokens; asset_not_payable: the payment asks for a token the merchant cannot be paid in here; accounts_not_payable: none of the accounts is on a network of those tokens; network_unavailable: the network did not answer"
  }),
  message: Schema.String.annotations({
    description: "The reason in words, for the wallet to show its user",
    examples: [
      "This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here."
    ]
  })
}).annotations({ identifier: "NoOptionsReason" })

export const OptionsResponse = Schema.Struct({
  options: Schema.Array(PaymentOptionView),
  info: Schema.NullOr(GatewayPaymentInfo),
  collectData: Schema.NullOr(CollectDataView),
  noOptionsReason: Schema.optional(NoOptionsReasonView).annotations({
    description: "Present only when `options` is empty: why, in words"
  })
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
  ).annotations({
    description:
      "One result per action of the option, in order: an eth_sendTransaction's transaction hash, an eth_signTypedData_v4's signature"
  }),
  collectedData: Schema.optional(Schema.NullOr(CollectedDataInput))
}).annotations({ identifier: "ConfirmPaymentRequest" })

export const gatewayPayment = HttpApiEndpoint.get("gatewayPayment", "/v1/gateway/payment/:id")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .addSuccess(GatewayPaymentInfo)
  .annotate(OpenApi.Summary, "What a wallet shows to start paying: amount, merchant, status")
  .pipe(failsWith(ApiErrors.PaymentNotFound))

export const gatewayOptions = HttpApiEndpoint.post(
  "gatewayOptions",
  "/v1/gateway/payment/:id/options"
)
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(OptionsParams)
  .setPayload(OptionsRequest)
  .addSuccess(OptionsResponse)
  .annotate(
    OpenApi.Summary,
    "Ways to pay for the given accounts: one option per settled token on each account's chain"
  )
  .pipe(
    failsWith(
      ApiErrors.PaymentNotFound,
      ApiErrors.InvalidState,
      ApiErrors.PaymentExpired,
      ApiErrors.MerchantInactive
    )
  )

export const gatewayFetch = HttpApiEndpoint.post("gatewayFetch", "/v1/gateway/payment/:id/fetch")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setPayload(FetchRequest)
  .addSuccess(FetchResponse)
  .annotate(OpenApi.Summary, "The actions of an option (the typed data to sign)")
  .pipe(
    failsWith(ApiErrors.PaymentNotFound, ApiErrors.MerchantInactive, ApiErrors.ChainUnavailable)
  )

export const gatewayConfirm = HttpApiEndpoint.post(
  "gatewayConfirm",
  "/v1/gateway/payment/:id/confirm"
)
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(MaxPollParams)
  .setPayload(ConfirmRequest)
  .addSuccess(StatusResponse)
  .annotate(
    OpenApi.Summary,
    "Confirm an option with the wallet's signature: the payment goes to processing and its transfer to the chain"
  )
  .pipe(
    failsWith(
      ApiErrors.PaymentNotFound,
      ApiErrors.InvalidState,
      ApiErrors.QuoteExpired,
      ApiErrors.InsufficientBalance,
      ApiErrors.PaymentExpired,
      ApiErrors.MerchantInactive,
      ApiErrors.ChainUnavailable
    )
  )

export const gatewayStatus = HttpApiEndpoint.get("gatewayStatus", "/v1/gateway/payment/:id/status")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .setUrlParams(MaxPollParams)
  .addSuccess(StatusResponse)
  .annotate(OpenApi.Summary, "The payment's status; long-polls with maxPollMs")
  .pipe(failsWith(ApiErrors.PaymentNotFound, ApiErrors.TooManyLongPolls))

export const gatewayCancel = HttpApiEndpoint.post("gatewayCancel", "/v1/gateway/payment/:id/cancel")
  .setHeaders(WalletHeaders)
  .setPath(GatewayPath)
  .addSuccess(CancelResponse)
  .annotate(
    OpenApi.Summary,
    "The buyer cancels (cancelled_by_user); 400 invalid_state unless it requires action"
  )
  .pipe(failsWith(ApiErrors.PaymentNotFound, ApiErrors.CancelRefused))

export class GatewayApi extends HttpApiGroup.make("gateway")
  .annotate(OpenApi.Title, "Wallet gateway")
  .add(gatewayPayment)
  .add(gatewayOptions)
  .add(gatewayFetch)
  .add(gatewayConfirm)
  .add(gatewayStatus)
  .add(gatewayCancel)
  .annotate(UnknownBodyFields, "ignore")
  .middleware(WalletAppAuth) {}
