/**
 * The buyer's checkout page at a payment's link (`gatewayUrl`): who is asking,
 * how much (and in which token on which network), the payment's reference, a
 * QR code of the link for a phone wallet, an "open in wallet" link, the link to
 * copy, the time left, and the status; or, when the payment offers no way to
 * pay (a merchant settled only on a network the engine does not run), why.
 *
 * One HTML string rendered on the server: everything but the live status and
 * the browser-wallet button works without JavaScript. The page's script and
 * styles are static (CheckoutAssets.ts): the script is a file of its own
 * (`checkout.js`, allowed by the policy as `'self'` and pinned by its
 * integrity hash), the styles are allowed by their hash, and every value the
 * script needs comes from escaped data attributes, never from inline script.
 * Every string from the payment, the merchant or the URL is HTML-escaped.
 */
import { escapeHtml } from "@pay/core"
import { CHECKOUT_SCRIPT_INTEGRITY, CHECKOUT_SCRIPT_PATH, CSS, CSS_HASH } from "./CheckoutAssets.js"
import type { CheckoutState, CheckoutStrings, Language } from "./CheckoutStrings.js"

export interface CheckoutView {
  readonly paymentId: string
  /** The payment's link (`gatewayUrl`): what the QR code holds and the buyer copies. */
  readonly link: string
  readonly merchantName: string
  /** The merchant's logo: relative to the page for a frozen copy, else the partner's URL. */
  readonly logoUrl: string | null
  /** The amount asked for, formatted for the buyer's language ("$12.50", "12,50 US$"). */
  readonly amount: string
  readonly reference: string
  /**
   * What the buyer will pay, in tokens, before a wallet is opened ("You pay 4.50 USDC on Base"):
   * while the payment can be paid and there is a way to pay it; else null.
   */
  readonly youPay: string | null
  /** Why a payment that can be paid offers no way to pay, in words; null when it offers one. */
  readonly noOptions: string | null
  readonly state: CheckoutState
  /** Why a failed payment failed, in words. */
  readonly failureReason: string | null
  readonly transactionHash: string | null
  readonly expiresAt: Date
  readonly now: Date
  /** A test payment (the sandbox): said on the page. */
  readonly testMode: boolean
  /** Where a successful payment sends the buyer (`checkout.successUrl`, `paymentId` added). */
  readonly successUrl: string | null
  /** Where any other final state sends the buyer (`checkout.errorUrl`, `paymentId` added). */
  readonly errorUrl: string | null
  /** The inline SVG of the link's QR code. */
  readonly qrSvg: string
  readonly language: Language
  readonly strings: CheckoutStrings
}

const esc = escapeHtml

/** `m:ss`, or `h:mm:ss` past an hour: what the countdown shows. */
export const formatRemaining = (ms: number): string => {
  const total = Math.max(0, Math.ceil(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  const ss = String(s).padStart(2, "0")
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`
}

/** The words the script needs, from the same strings the server uses. */
const scriptStrings = (s: CheckoutStrings) => ({
  status: s.status,
  failure: s.failure,
  linkCopied: s.linkCopied,
  redirecting: s.redirecting,
  transaction: s.transaction,
  expiresIn: s.expiresIn,
  noWallet: s.noWallet,
  walletRejected: s.walletRejected,
  quoteRefreshed: s.quoteRefreshed,
  approveInWallet: s.approveInWallet,
  signInWallet: s.signInWallet,
  sendInWallet: s.sendInWallet,
  insufficientBalance: s.insufficientBalance,
  somethingWrong: s.somethingWrong,
  signAndPay: s.signAndPay,
  sendAndPay: s.sendAndPay,
  youPay: s.youPay,
  onNetwork: s.onNetwork,
  connectWallet: s.connectWallet,
  connectedAs: s.connectedAs
})

const isFinalState = (state: CheckoutState) => state !== "requires_action" && state !== "processing"

/** Where the page sends the buyer from a final state, if the payment says. */
export const redirectOf = (
  view: Pick<CheckoutView, "state" | "successUrl" | "errorUrl">
): string | null =>
  !isFinalState(view.state) ? null : view.state === "succeeded" ? view.successUrl : view.errorUrl

const statusBlock = (view: CheckoutView): string => {
  const words = view.strings.status[view.state]
  const details: Array<string> = []
  if (view.failureReason !== null) {
    details.push(`<p class="reason" id="status-reason">${esc(view.failureReason)}</p>`)
  } else details.push('<p class="reason" id="status-reason" hidden></p>')
  details.push(
    view.transactionHash !== null
      ? `<p class="tx" id="status-tx">${esc(view.strings.transaction)}: <code>${esc(view.transactionHash)}</code></p>`
      : '<p class="tx" id="status-tx" hidden></p>'
  )
  const redirect = redirectOf(view)
  details.push(
    redirect !== null
      ? `<p id="status-return"><a class="button" href="${esc(redirect)}">${esc(view.strings.returnToShop)}</a></p>`
      : '<p id="status-return" hidden></p>'
  )
  return [
    `<section class="status status-${view.state}" id="status" aria-labelledby="status-heading">`,
    // The live region holds only what changes, so a screen reader announces the new state.
    '<div id="status-live" role="status" aria-live="polite" aria-atomic="true">',
    `<h2 id="status-heading">${esc(words.heading)}</h2>`,
    // "Pay with your wallet" is not said where there is no way to pay (filled if the state changes).
    `<p id="status-text">${view.noOptions !== null && view.state === "requires_action" ? "" : esc(words.text)}</p>`,
    "</div>",
    ...details,
    "</section>"
  ].join("\n")
}

const payBlock = (view: CheckoutView): string => {
  const s = view.strings
  const remaining = view.expiresAt.getTime() - view.now.getTime()
  return [
    `<section class="pay" id="pay" aria-label="${esc(s.pay)}">`,
    `<p class="scan">${esc(s.scanWithWallet)}</p>`,
    `<div class="qr">${view.qrSvg}</div>`,
    '<div class="actions">',
    `<a class="button primary" id="open-in-wallet" href="${esc(view.link)}">${esc(s.openInWallet)}</a>`,
    `<button type="button" class="button" id="copy-link" hidden>${esc(s.copyLink)}</button>`,
    "</div>",
    `<label class="link-label" for="payment-link">${esc(s.paymentLink)}</label>`,
    `<input id="payment-link" class="link" type="text" readonly value="${esc(view.link)}">`,
    `<p class="countdown" id="countdown">${esc(s.expiresIn)} <time id="countdown-time" datetime="${esc(view.expiresAt.toISOString())}">${esc(formatRemaining(remaining))}</time></p>`,
    // Shown by the script when the browser has a wallet (EIP-6963); nothing here without it.
    '<div class="wallet" id="wallet" hidden>',
    `<h2>${esc(s.payWithBrowserWallet)}</h2>`,
    '<div id="wallet-providers" class="providers"></div>',
    `<fieldset id="wallet-options" hidden><legend>${esc(s.chooseOption)}</legend><div id="wallet-option-list"></div></fieldset>`,
    `<button type="button" class="button primary" id="wallet-pay" hidden>${esc(s.signAndPay)}</button>`,
    '<p id="wallet-message" class="wallet-message" role="alert"></p>',
    "</div>",
    "</section>"
  ].join("\n")
}

/** Why the payment offers no way to pay: said in place of the QR code and the wallet button. */
const noOptionsBlock = (view: CheckoutView): string =>
  [
    '<section class="no-options" id="no-options" aria-labelledby="no-options-heading">',
    `<h2 id="no-options-heading">${esc(view.strings.noWayToPay)}</h2>`,
    `<p id="no-options-reason">${esc(view.noOptions ?? "")}</p>`,
    "</section>"
  ].join("\n")

/** The whole page for a payment. */
export const renderCheckoutPage = (view: CheckoutView): string => {
  const s = view.strings
  const title = `${s.title} ${view.merchantName}`.trim()
  const logo =
    view.logoUrl === null
      ? `<div class="logo logo-letter" aria-hidden="true">${esc((view.merchantName.trim()[0] ?? "?").toUpperCase())}</div>`
      : `<img class="logo" src="${esc(view.logoUrl)}" alt="" width="56" height="56">`
  const data: Record<string, string> = {
    "payment-id": view.paymentId,
    state: view.state,
    "expires-at": String(view.expiresAt.getTime()),
    "server-now": String(view.now.getTime()),
    "success-url": view.successUrl ?? "",
    "error-url": view.errorUrl ?? "",
    strings: JSON.stringify(scriptStrings(s))
  }
  const attributes = Object.entries(data)
    .map(([name, value]) => ` data-${name}="${esc(value)}"`)
    .join("")
  return [
    "<!doctype html>",
    `<html lang="${view.language}">`,
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${esc(title)}</title>`,
    `<style>${CSS}</style>`,
    "</head>",
    `<body${attributes}>`,
    '<main id="checkout">',
    '<header class="merchant">',
    logo,
    "<div>",
    `<h1>${esc(view.merchantName === "" ? s.pay : view.merchantName)}</h1>`,
    `<p class="reference">${esc(s.reference)}: <span id="reference">${esc(view.reference)}</span></p>`,
    "</div>",
    "</header>",
    `<p class="amount" id="amount">${esc(view.amount)}</p>`,
    view.youPay === null
      ? '<p class="token-amount" id="token-amount" hidden></p>'
      : `<p class="token-amount" id="token-amount">${esc(view.youPay)}</p>`,
    view.testMode ? `<p class="test-mode">${esc(s.testMode)}</p>` : "",
    statusBlock(view),
    view.state !== "requires_action"
      ? ""
      : view.noOptions !== null
        ? noOptionsBlock(view)
        : payBlock(view),
    "</main>",
    `<script src="${esc(CHECKOUT_SCRIPT_PATH)}" integrity="${CHECKOUT_SCRIPT_INTEGRITY}" defer></script>`,
    "</body>",
    "</html>",
    ""
  ]
    .filter((line) => line !== "")
    .join("\n")
}

/**
 * What the page may do: its one script file (same origin), its styles by hash, images from
 * itself, `data:` and the merchant logo's origin, fetches to itself (the live status and the
 * wallet routes), no forms, no `<base>`, no plugins. `frame-ancestors *` (see CheckoutRoutes.ts).
 */
export const checkoutPagePolicy = (logoUrl: string | null): string => {
  const logoOrigin =
    logoUrl !== null && /^https?:\/\//.test(logoUrl) && URL.canParse(logoUrl)
      ? ` ${new URL(logoUrl).origin}`
      : ""
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${CSS_HASH}`,
    `img-src 'self' data:${logoOrigin}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors *"
  ].join("; ")
}

/** The page for a link that names no payment: same look, no script. */
export const renderCheckoutNotFound = (strings: CheckoutStrings, language: Language): string =>
  [
    "<!doctype html>",
    `<html lang="${language}">`,
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${esc(strings.notFoundTitle)}</title>`,
    `<style>${CSS}</style>`,
    "</head>",
    '<body data-state="not_found">',
    '<main id="checkout">',
    `<h1>${esc(strings.notFoundTitle)}</h1>`,
    `<section class="status status-failed"><p>${esc(strings.notFound)}</p></section>`,
    "</main>",
    "</body>",
    "</html>",
    ""
  ].join("\n")
