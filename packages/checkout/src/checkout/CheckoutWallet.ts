/**
 * The checkout wallet app: the routes the checkout page's browser-wallet
 * button talks to, under the payment's own link. They act as a wallet app
 * built into the engine: they call the gateway as a wallet app's requests do,
 * with the engine's own identity (`CHECKOUT_WALLET`, what the payment records
 * as the buyer's wallet), so there is no API key for the page to hold, and
 * none can reach a browser.
 *
 * - `POST {link}/options` `{"address": "0x…"}`: the options for that address
 *   on every network the engine has, each with what the browser's wallet
 *   sends first (`transactions`: a Permit2 token's approvals, or a native
 *   coin's one transfer, which is then the payment itself), what it signs
 *   after (the EIP-712 typed data; `null` for a native coin) and the amount
 *   in words; with none, `reason`: why, in the page's language.
 * - `POST {link}/confirm` `{"optionId", "approvals", "signature"}`: the
 *   confirm, with the hashes of the transactions sent (in order) and the
 *   signature, if the option has one to sign; answers the page's status
 *   object. A stale quote is 409 `quote_expired` (the page asks
 *   again), a short balance 409 `insufficient_balance` with the amount needed.
 *
 * They answer only what the buyer's own wallet would be shown: no partner,
 * merchant or engine detail beyond the page's own. Each request passes the
 * per-payment limit first (`CheckoutLimit`), the one place it applies.
 */
import {
  ApiErrors,
  type ApiFailure,
  type Caip10,
  Chain,
  type Exchange,
  effectiveStatus,
  Gateway,
  HttpConfig,
  json,
  MAX_SIGNATURE_BYTES,
  noOptionsText,
  type PaymentId,
  type Reply,
  RequestError,
  TokenRegistry,
  toUnixSeconds,
  type WalletIdentity
} from "@pay/core"
import { Effect, Schema } from "effect"
import { tokenAmountText } from "./CheckoutAmounts.js"
import { languageOf, noOptionsWords } from "./CheckoutStrings.js"

/** Who the checkout page is, as a wallet app: what a payment it confirms records as the buyer's wallet. */
export const CHECKOUT_WALLET: WalletIdentity = { name: "Checkout page", iconUrl: null }

/** The `Client-Id` the gateway records for options the page asked for. */
export const CHECKOUT_CLIENT_ID = "pay-checkout-page"

/** What the page's wallet routes do for a payment, for the per-payment limit. */
export type CheckoutAction = "page" | "status" | "options" | "confirm"

/**
 * The per-payment limit on the page's routes: passes, or fails with the refusal to answer
 * (429). None by default; the engine passes its per-payment limiter here.
 */
export type CheckoutLimit = (
  paymentId: string,
  action: CheckoutAction
) => Effect.Effect<void, ApiFailure>

export const NO_CHECKOUT_LIMIT: CheckoutLimit = () => Effect.void

const Address = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-fA-F]{40}$/, { message: () => "must be a 0x-prefixed EVM address" })
)
const OptionsBody = Schema.Struct({ address: Address })
const ConfirmBody = Schema.Struct({
  optionId: Schema.String.pipe(Schema.maxLength(128)),
  // The hashes of the transactions the page had the wallet send, in order: a Permit2 token's
  // approvals, or a native coin's transfer.
  approvals: Schema.optionalWith(
    Schema.Array(
      Schema.String.pipe(
        Schema.pattern(/^0x[0-9a-fA-F]{64}$/, { message: () => "must be a transaction hash" })
      )
    ).pipe(Schema.maxItems(2)),
    { default: () => [] }
  ),
  // Any wallet's: a smart account's, an ERC-6492 wrapper (the gateway checks the rest). None
  // for a native coin, paid by its transfer alone.
  signature: Schema.optional(
    Schema.String.pipe(
      Schema.maxLength(2 + 2 * MAX_SIGNATURE_BYTES),
      Schema.pattern(/^0x[0-9a-fA-F]{2,}$/, { message: () => "must be a 0x-prefixed hex string" })
    )
  )
})

const decodeBody = <A, I>(schema: Schema.Schema<A, I>, body: unknown) =>
  Effect.mapError(Schema.decodeUnknown(schema, { onExcessProperty: "ignore" })(body ?? {}), () =>
    RequestError.of(ApiErrors.ParamsValidation, "The body is not what the checkout page sends")
  )

export const checkoutWallet = Effect.gen(function* () {
  const gateway = yield* Gateway
  const chain = yield* Chain
  const registry = yield* TokenRegistry
  const { publicUrl } = yield* HttpConfig

  const amountText = (asset: string, value: bigint) => tokenAmountText(registry, asset, value)

  /** The engine's own data-collection URL, made relative to the page (whatever host serves it). */
  const relativeToPage = (url: string) =>
    url.startsWith(`${publicUrl}/`) ? url.slice(publicUrl.length + 1) : url

  const options = (exchange: Exchange, limit: CheckoutLimit) =>
    Effect.gen(function* () {
      const id = exchange.pathParams.id as PaymentId
      yield* limit(id, "options")
      const { address } = yield* decodeBody(OptionsBody, exchange.body)
      const accounts = chain.networks.map((n) => `${n.chainId}:${address}` as Caip10)
      const offered = yield* gateway.optionsFor(id, accounts, CHECKOUT_CLIENT_ID)
      // Why there is none, in the page's language (the browser sends the page's Accept-Language).
      const language = languageOf(exchange.request.header("accept-language"))
      return json(200, {
        options: offered.options.map(({ option, actions, collectData }) => {
          // The transactions the wallet sends, in order (Permit2's approvals, or a native coin's
          // transfer, which pays by itself), then the signature, if the option has one.
          const signing = actions.find((a) => a.data.method === "eth_signTypedData_v4")
          const chainId = actions[0]!.data.chain_id
          return {
            id: option.id,
            account: option.account,
            chainId,
            network: chain.networks.find((n) => n.chainId === chainId)?.name ?? chainId,
            amount: amountText(option.asset, option.authorization.value),
            expiresAt: option.quoted ? toUnixSeconds(option.expiresAt) : null,
            signer: signing?.data.params[0] ?? null,
            typedData: signing?.data.params[1] ?? null,
            transactions: actions
              .filter((a) => a.data.method === "eth_sendTransaction")
              .map((a) => a.data.params[0]),
            collectDataUrl: collectData === null ? null : relativeToPage(collectData.url)
          }
        }),
        ...(offered.noOptions === undefined
          ? {}
          : { reason: noOptionsText(offered.noOptions, noOptionsWords(language)) })
      })
    })

  const confirm = (exchange: Exchange, limit: CheckoutLimit) =>
    Effect.gen(function* () {
      const id = exchange.pathParams.id as PaymentId
      yield* limit(id, "confirm")
      const { optionId, approvals, signature } = yield* decodeBody(ConfirmBody, exchange.body)
      const refused = yield* gateway
        .confirm(
          id,
          {
            optionId,
            results: [...approvals, ...(signature === undefined ? [] : [signature])].map(
              (data) => ({ type: "walletRpc", data: [data] })
            )
          },
          CHECKOUT_WALLET
        )
        .pipe(
          Effect.as(undefined),
          // The amount needed, in words, for the page to say: the buyer's own balance and need.
          Effect.catchTag("InsufficientBalance", (e) =>
            Effect.succeed<Reply>(
              json(409, {
                code: ApiErrors.InsufficientBalance.code,
                message: `The account holds less than the option needs`,
                required: amountText(e.asset, BigInt(e.required)),
                balance: amountText(e.asset, BigInt(e.balance))
              })
            )
          )
        )
      if (refused !== undefined) return refused
      const { payment, at } = yield* gateway.status(id, 0)
      const state = effectiveStatus(payment, at)
      return json(200, {
        status: state,
        isFinal: state !== "requires_action" && state !== "processing"
      })
    })

  return { options, confirm }
})
