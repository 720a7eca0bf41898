/**
 * The data-collection page (`collectData.url`): a wallet opens it in a web
 * view; the buyer fills in the form; the data is checked against the schema
 * and kept for the payment and the accounts the URL names, and the page tells
 * the wallet `IC_COMPLETE`. A confirm without `collectedData` then uses it.
 */
import { Effect, Either } from "effect"
import type { Reply } from "../http/Exchange.js"
import { type Exchange, publicRoute, type Route } from "../http/Route.js"
import type { PaymentId } from "../payments/Payment.js"
import { type Caip10, parseCaip10 } from "../shared/Caip.js"
import type { FieldIssue } from "../shared/Errors.js"
import { parseFormBody, valuesFromPrefill } from "./CollectDataForm.js"
import { renderCollectDataPage } from "./CollectDataPage.js"
import type { Gateway } from "./Gateway.js"
import { MAX_ACCOUNTS } from "./GatewayConfig.js"
import { paymentIdOfSegment } from "./PaymentRef.js"

const html = (status: number, body: string): Reply => ({ status, body, contentType: "text/html" })

/** A page that only says what is wrong (no form to fill). */
const problemPage = (status: number, message: string) =>
  html(
    status,
    renderCollectDataPage({ action: "", problem: message, title: "This link cannot be used" })
  )

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
const asPage = (failure: Reply | { readonly _tag: string }): Reply =>
  "_tag" in failure
    ? failure._tag === "PaymentNotFound"
      ? problemPage(404, "No such payment.")
      : failure._tag === "PaymentExpired"
        ? problemPage(410, "This payment has expired.")
        : problemPage(409, "This payment can no longer be paid.")
    : failure

export const collectDataRoutes = (gateway: Gateway): ReadonlyArray<Route<never>> => {
  /** The payment and accounts of the page's URL, or the page that says why not. */
  const target = (exchange: Exchange) => {
    const id = paymentIdOfSegment(exchange.pathParams.id ?? "")
    const accounts = accountsOfQuery(exchange.query)
    if (id === undefined) return Effect.fail(problemPage(404, "No such payment."))
    if (accounts === undefined) {
      return Effect.fail(problemPage(400, "The link names no valid account (accounts=…)."))
    }
    return Effect.succeed({ id: id as PaymentId, accounts })
  }
  /**
   * The page's own URL, for the form to post back to: relative (its last segment and
   * query), so it resolves to the page whatever prefix or proxy is in front.
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
        const { id } = yield* target(exchange)
        yield* Effect.flatMap(gateway.info(id), ({ payment }) => gateway.payableNow(payment))
        return html(
          200,
          renderCollectDataPage({
            action: selfUrl(exchange),
            values: valuesFromPrefill(exchange.query.get("prefill")),
            ...themeOf(exchange.query)
          })
        )
      }).pipe(Effect.catchAll((e) => Effect.succeed(asPage(e))))
    ),
    publicRoute(
      "POST",
      "/collect/:id",
      (exchange) =>
        Effect.gen(function* () {
          const { id, accounts } = yield* target(exchange)
          const fields = parseFormBody(typeof exchange.body === "string" ? exchange.body : "")
          const { issues } = yield* gateway.collect(id, accounts, fields)
          const values = Object.fromEntries(fields.map((f) => [f.id, f.value]))
          return html(
            200,
            issues.length > 0
              ? renderCollectDataPage({
                  action: selfUrl(exchange),
                  values,
                  issues: issues as ReadonlyArray<FieldIssue>,
                  ...themeOf(exchange.query)
                })
              : renderCollectDataPage({
                  action: selfUrl(exchange),
                  done: true,
                  ...themeOf(exchange.query)
                })
          )
        }).pipe(Effect.catchAll((e) => Effect.succeed(asPage(e)))),
      { takesBody: "form" }
    )
  ]
}
