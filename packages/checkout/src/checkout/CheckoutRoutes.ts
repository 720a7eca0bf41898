/**
 * The buyer's checkout at a payment's link (`gatewayUrl`, `{publicUrl}/pay_…`):
 *
 * - `GET /pay_…` from a browser (`Accept` names `text/html`): the page
 *   (CheckoutPage.ts). Any other request there (a wallet SDK asking for JSON,
 *   `curl`'s `*\/*`) is passed over by the router and gets the very 404 it got
 *   before the page existed: wallets read payments at `/v1/gateway/payment/…`.
 * - `GET /checkout.js`: the page's script, immutable per version.
 * - `GET /pay_…/status?maxPollMs=`: the page's live status, a long-poll that
 *   answers only what the page already shows (status, failure code, the
 *   transaction hash).
 * - `POST /pay_…/options`, `POST /pay_…/confirm`: the checkout wallet app
 *   (CheckoutWallet.ts), for the page's browser-wallet button.
 *
 * Every page carries its policy as a header with `frame-ancestors *`: wallets
 * show the link in web views and web wallets in iframes; the page holds
 * nothing a framing site could not read from the link itself.
 */
import {
  EngineMode,
  type EngineRequest,
  type Exchange,
  effectiveStatus,
  Gateway,
  gatewayUrl,
  HttpConfig,
  htmlReply,
  json,
  type Merchant,
  noOptionsText,
  type Payment,
  type PaymentId,
  paymentLivemode,
  publicRoute,
  type Reply,
  TokenRegistry
} from "@pay/core"
import { Effect, Option } from "effect"
import { formatAmount, youPayText } from "./CheckoutAmounts.js"
import { CHECKOUT_SCRIPT } from "./CheckoutAssets.js"
import {
  type CheckoutView,
  checkoutPagePolicy,
  renderCheckoutNotFound,
  renderCheckoutPage
} from "./CheckoutPage.js"
import { type Language, languageOf, noOptionsWords, STRINGS } from "./CheckoutStrings.js"
import { type CheckoutLimit, checkoutWallet, NO_CHECKOUT_LIMIT } from "./CheckoutWallet.js"
import { qrSvg } from "./Qr.js"

/** A payment id as links carry it; anything else at `/{segment}` is not the page's. */
export const isPaymentSegment = (segment: string | undefined): boolean =>
  segment !== undefined && /^pay_[0-9A-Za-z]{1,64}$/.test(segment)

/** A browser asks for HTML by name; wallet SDKs send `application/json`, tools `*\/*`. */
export const wantsHtml = (request: EngineRequest): boolean =>
  /(^|[\s,])text\/html(\s*[;,]|\s*$)/i.test(request.header("accept") ?? "")

/** A checkout URL with `paymentId` added to its query, as the merchant reads it back. */
export const withPaymentId = (url: string, paymentId: string): string | null => {
  if (!URL.canParse(url)) return null
  const parsed = new URL(url)
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null
  parsed.searchParams.set("paymentId", paymentId)
  return parsed.toString()
}

/** The merchant's logo: the engine's frozen copy, relative to the page, else the partner's URL. */
const logoOf = (merchant: Merchant | undefined): string | null =>
  merchant === undefined
    ? null
    : merchant.logoName !== null
      ? `logos/${encodeURIComponent(merchant.logoName)}?size=128`
      : merchant.iconUrl

/** The transaction to show: the one `info.txId` reports once succeeded, else the one sent. */
const transactionHashOf = (
  payment: Pick<Payment, "transaction" | "txId">,
  state: string
): string | null =>
  state === "succeeded"
    ? (payment.txId ?? payment.transaction?.hash ?? null)
    : (payment.transaction?.hash ?? payment.txId)

const pageHeaders = (language: Language) => ({
  "content-language": language,
  vary: "Accept, Accept-Language"
})

/**
 * The page's routes. `limit` is the per-payment limit every route under a payment's link
 * passes first (CheckoutWallet.ts): the page itself, its status and the wallet routes.
 */
export const checkoutRoutes = (limit: CheckoutLimit = NO_CHECKOUT_LIMIT) =>
  Effect.gen(function* () {
    const gateway = yield* Gateway
    const wallet = yield* checkoutWallet
    const registry = yield* TokenRegistry
    const { publicUrl } = yield* HttpConfig
    const { livemode } = yield* EngineMode

    const page = (exchange: Exchange) =>
      Effect.gen(function* () {
        const language = languageOf(exchange.request.header("accept-language"))
        const strings = STRINGS[language]
        const id = exchange.pathParams.id as PaymentId
        yield* limit(id, "page")
        const found = yield* Effect.option(gateway.info(id))
        if (Option.isNone(found)) {
          return htmlReply(
            404,
            renderCheckoutNotFound(strings, language),
            checkoutPagePolicy(null),
            pageHeaders(language)
          )
        }
        const { payment, merchant, at } = found.value
        const state = effectiveStatus(payment, at)
        const link = gatewayUrl(publicUrl, payment)
        const logoUrl = logoOf(merchant)
        // Which token, network and amount the buyer will pay; or why there is no way to pay.
        const payable = state === "requires_action" ? yield* gateway.payableIn(payment) : undefined
        const view: CheckoutView = {
          paymentId: payment.id,
          link,
          merchantName: merchant?.name ?? "",
          logoUrl,
          amount: formatAmount(payment, registry, language),
          reference: payment.referenceId,
          youPay: payable === undefined ? null : youPayText(payable.tokens, strings, language),
          noOptions:
            payable?.noOptions === undefined
              ? null
              : noOptionsText(payable.noOptions, noOptionsWords(language)),
          state,
          failureReason:
            state === "failed" && payment.failureCode !== null
              ? strings.failure[payment.failureCode]
              : null,
          transactionHash: transactionHashOf(payment, state),
          expiresAt: payment.expiresAt,
          now: at,
          testMode: !paymentLivemode(payment, livemode),
          successUrl:
            payment.checkout === null
              ? null
              : withPaymentId(payment.checkout.successUrl, payment.id),
          errorUrl:
            payment.checkout === null ? null : withPaymentId(payment.checkout.errorUrl, payment.id),
          qrSvg: state === "requires_action" ? qrSvg(link, strings.qrLabel) : "",
          language,
          strings
        }
        return htmlReply(
          200,
          renderCheckoutPage(view),
          checkoutPagePolicy(logoUrl),
          pageHeaders(language)
        )
      })

    /** What the page shows of a status: nothing the page itself does not already say. */
    const status = (exchange: Exchange) =>
      Effect.gen(function* () {
        const id = exchange.pathParams.id as PaymentId
        yield* limit(id, "status")
        const asked = Number(exchange.query.get("maxPollMs") ?? "0")
        const maxPollMs = Number.isFinite(asked) ? Math.max(0, Math.floor(asked)) : 0
        const { payment, at } = yield* gateway.status(id, maxPollMs)
        const state = effectiveStatus(payment, at)
        // The hash is on the full record once the transaction is sent: read it only then.
        const hash =
          state === "processing" || state === "succeeded" || state === "failed"
            ? yield* Effect.map(gateway.info(id), ({ payment }) =>
                transactionHashOf(payment, state)
              )
            : null
        return json(200, {
          status: state,
          isFinal: state !== "requires_action" && state !== "processing",
          ...(state === "failed" && payment.failureCode !== null
            ? { failureCode: payment.failureCode }
            : {}),
          ...(hash === null ? {} : { transactionHash: hash })
        })
      })

    const script: Reply = {
      status: 200,
      body: CHECKOUT_SCRIPT,
      contentType: "text/javascript",
      headers: {
        // Versioned by its hash in the page's URL for it: a copy may be kept.
        "cache-control": "public, max-age=86400",
        "x-content-type-options": "nosniff"
      }
    }

    const onPaymentLink = (params: Readonly<Record<string, string>>) => isPaymentSegment(params.id)

    return [
      publicRoute("GET", "/checkout.js", () => Effect.succeed(script)),
      publicRoute("GET", "/:id", page, {
        accepts: (params, request) => onPaymentLink(params) && wantsHtml(request)
      }),
      publicRoute("GET", "/:id/status", status, { accepts: onPaymentLink }),
      publicRoute("POST", "/:id/options", (e) => wallet.options(e, limit), {
        accepts: onPaymentLink,
        takesBody: true
      }),
      publicRoute("POST", "/:id/confirm", (e) => wallet.confirm(e, limit), {
        accepts: onPaymentLink,
        takesBody: true
      })
    ]
  })
