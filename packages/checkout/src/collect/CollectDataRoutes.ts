/**
 * The data-collection page (`collectData.url`): a wallet opens it in a web
 * view; the buyer fills in the form; the data is checked against the schema
 * and kept for the payment and the accounts the URL names, and the page tells
 * the wallet `IC_COMPLETE`. A confirm without `collectedData` then uses it.
 *
 * The URL carries a token (CollectDataToken.ts) bound to the payment and its
 * accounts: without it, or with one made for anything else, the page and its
 * form answer 403, so knowing a payment id does not let anyone overwrite what
 * its buyer entered.
 *
 * Every answer is HTML with the page's policy as a header, plus
 * `frame-ancestors *`: wallets load the page as the top document of a native
 * web view (where `frame-ancestors` does not apply), and web wallets or
 * extensions may show it in an iframe, which the page tells `IC_COMPLETE`
 * through `postMessage` to its parent. Framing gives a site nothing it does not
 * already hold: without the tokened URL it frames only a 403.
 */
import {
  ApiErrors,
  type Caip10,
  COLLECT_TOKEN_PARAM,
  type Exchange,
  type FieldIssue,
  type Gateway,
  htmlReply,
  htmlSecurityHeaders,
  type Language,
  languageOf,
  MAX_ACCOUNTS,
  type PaymentId,
  parseCaip10,
  paymentIdOfSegment,
  publicRoute,
  type Reply,
  type Route
} from "@pay/core"
import { Effect, Either } from "effect"
import { parseFormBody, valuesFromPrefill } from "./CollectDataForm.js"
import { collectDataPagePolicy, renderCollectDataPage } from "./CollectDataPage.js"
import { COLLECT_STRINGS } from "./CollectDataStrings.js"

/** Who may frame the page: any web page (see above); native web views load it unframed. */
export const COLLECT_DATA_FRAME_ANCESTORS = "frame-ancestors *"

/** The page's answer: its policy as a header too, with `frame-ancestors`. */
const html = (status: number, body: string, action: string): Reply =>
  htmlReply(status, body, `${collectDataPagePolicy(action)}; ${COLLECT_DATA_FRAME_ANCESTORS}`)

/** The page's language: the web view's `Accept-Language`. */
const languageOfExchange = (exchange: Exchange): Language =>
  languageOf(exchange.request.header("accept-language"))

type Problem = "forbidden" | "noPayment" | "expired" | "notPayable" | "noAccounts"

/** A page that only says what is wrong (no form to fill), in the page's language. */
const problemPage = (status: number, problem: Problem, language: Language) =>
  html(
    status,
    renderCollectDataPage({
      action: "",
      problem: COLLECT_STRINGS[language][problem],
      title: COLLECT_STRINGS[language].cannotUse,
      language
    }),
    ""
  )

/**
 * The 403: a small page for a browser, and the documented error body
 * (`collect_token_invalid`) for a client that asks for JSON and not HTML.
 */
const forbidden = (exchange: Exchange): Reply => {
  const accept = exchange.request.header("accept") ?? ""
  if (accept.includes("application/json") && !accept.includes("text/html")) {
    return {
      status: 403,
      body: JSON.stringify({
        code: ApiErrors.CollectTokenInvalid.code,
        message:
          "the data-collection page's URL has no valid token for this payment and these accounts: use collectData.url as the options answer gave it"
      }),
      headers: htmlSecurityHeaders("default-src 'none'; frame-ancestors 'none'")
    }
  }
  return problemPage(403, "forbidden", languageOfExchange(exchange))
}

const accountsOfQuery = (query: URLSearchParams): ReadonlyArray<Caip10> | undefined => {
  const listed = (query.get("accounts") ?? "").split(",").filter((a) => a !== "")
  if (listed.length === 0 || listed.length > MAX_ACCOUNTS) return undefined
  const accounts: Array<Caip10> = []
  for (const account of listed) {
    const parsed = parseCaip10(account)
    if (Either.isLeft(parsed)) return undefined
    accounts.push(parsed.right.value)
  }
  return accounts
}

const themeOf = (query: URLSearchParams): { readonly theme?: "light" | "dark" } => {
  const theme = query.get("theme")
  return theme === "light" || theme === "dark" ? { theme } : {}
}

/** A refusal is its page already; a domain failure becomes one. */
const asPage =
  (exchange: Exchange) =>
  (failure: Reply | { readonly _tag: string }): Reply => {
    if (!("_tag" in failure)) return failure
    const language = languageOfExchange(exchange)
    return failure._tag === "CollectDataForbidden"
      ? forbidden(exchange)
      : failure._tag === "PaymentNotFound"
        ? problemPage(404, "noPayment", language)
        : failure._tag === "PaymentExpired"
          ? problemPage(410, "expired", language)
          : problemPage(409, "notPayable", language)
  }

export const collectDataRoutes = (gateway: Gateway): ReadonlyArray<Route<never>> => {
  /** The payment, accounts and token of the page's URL, or the page that says why not. */
  const target = (exchange: Exchange) => {
    const id = paymentIdOfSegment(exchange.pathParams.id ?? "")
    const accounts = accountsOfQuery(exchange.query)
    const language = languageOfExchange(exchange)
    if (id === undefined) return Effect.fail(problemPage(404, "noPayment", language))
    if (accounts === undefined) return Effect.fail(problemPage(400, "noAccounts", language))
    return Effect.succeed({
      id: id as PaymentId,
      accounts,
      token: exchange.query.get(COLLECT_TOKEN_PARAM)
    })
  }
  /**
   * The page's own URL, for the form to post back to: relative (its last segment and
   * query, token included), so it resolves to the page whatever prefix or proxy is in front.
   */
  const selfUrl = (exchange: Exchange) => {
    const target = exchange.request.url
    const query = target.indexOf("?")
    const path = query === -1 ? target : target.slice(0, query)
    return `${path.slice(path.lastIndexOf("/") + 1)}${query === -1 ? "" : target.slice(query)}`
  }

  return [
    publicRoute("GET", "/collect/:id", (exchange) =>
      Effect.gen(function* () {
        const { id, accounts, token } = yield* target(exchange)
        // The token first: without one, nothing is said about the payment either.
        yield* gateway.authorizeCollect(id, accounts, token)
        yield* Effect.flatMap(gateway.info(id), ({ payment }) => gateway.payableNow(payment))
        const action = selfUrl(exchange)
        return html(
          200,
          renderCollectDataPage({
            action,
            values: valuesFromPrefill(exchange.query.get("prefill")),
            language: languageOfExchange(exchange),
            ...themeOf(exchange.query)
          }),
          action
        )
      }).pipe(Effect.catchAll((e) => Effect.succeed(asPage(exchange)(e))))
    ),
    publicRoute(
      "POST",
      "/collect/:id",
      (exchange) =>
        Effect.gen(function* () {
          const { id, accounts, token } = yield* target(exchange)
          const fields = parseFormBody(typeof exchange.body === "string" ? exchange.body : "")
          const { issues } = yield* gateway.collect(id, accounts, token, fields)
          const values = Object.fromEntries(fields.map((f) => [f.id, f.value]))
          const action = selfUrl(exchange)
          return html(
            200,
            issues.length > 0
              ? renderCollectDataPage({
                  action,
                  values,
                  issues: issues as ReadonlyArray<FieldIssue>,
                  language: languageOfExchange(exchange),
                  ...themeOf(exchange.query)
                })
              : renderCollectDataPage({
                  action,
                  done: true,
                  language: languageOfExchange(exchange),
                  ...themeOf(exchange.query)
                }),
            action
          )
        }).pipe(Effect.catchAll((e) => Effect.succeed(asPage(exchange)(e)))),
      { takesBody: "form" }
    )
  ]
}
