/**
 * The merchant route handlers: wire in, service call, wire out.
 */
import { Effect } from "effect"
import { ApiErrors, keptReplyOf } from "../http/ErrorResponses.js"
import { json, type Reply } from "../http/Exchange.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { cursorParam } from "../http/QueryParams.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { idempotently } from "../idempotency/Http.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import { cursorCodec, keysetPage } from "../shared/Cursor.js"
import { MerchantsApi } from "./Api.js"
import { merchantFailures } from "./Failures.js"
import { LogoRefused } from "./Logo.js"
import { type Merchant, MerchantId } from "./Merchant.js"
import { Merchants } from "./Merchants.js"
import { merchantProfileView, merchantView } from "./MerchantView.js"
import { Settlements } from "./Settlements.js"

/**
 * A refused logo is the request's answer, kept under its Idempotency-Key,
 * unless a retry may pass (an unreachable image): then the key stays free.
 */
const keptRefusal = <E>(error: E): Reply | undefined => {
  if (!(error instanceof LogoRefused) || error.retryable) return undefined
  return keptReplyOf(merchantFailures.LogoRefused(error))
}

// Inside the opaque cursor: the last id of the page (ids sort by creation).
const cursors = cursorCodec("m1.", MerchantId)

/** The handlers, with the services they use resolved once, not per request. */
export const merchantHandlers = Effect.gen(function* () {
  const merchants = yield* Merchants
  const settlements = yield* Settlements
  const { publicUrl } = yield* HttpConfig
  const view = (m: Merchant) => merchantView(publicUrl, m)
  return implement(MerchantsApi, {
    create: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const reply = (m: Merchant): Reply => json(201, { merchant: view(m) })
        return yield* idempotently(
          input,
          input.headers["idempotency-key"],
          (complete) =>
            merchants
              .create(
                partner,
                {
                  name: input.payload.merchantName,
                  email: input.payload.merchantEmail,
                  iconUrl: input.payload.iconUrl ?? null
                },
                (m) => complete(reply(m))
              )
              .pipe(Effect.map(reply)),
          keptRefusal
        )
      }),

    list: ({ urlParams }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const before = yield* cursorParam(cursors, urlParams.cursor)
        const page = yield* merchants.list(partner, {
          status: urlParams.status,
          search: urlParams.search,
          before,
          limit: urlParams.limit + 1
        })
        const { rows, nextCursor } = keysetPage(page.merchants, urlParams.limit, (last) =>
          cursors.encode(last.id)
        )
        return json(200, { merchants: rows.map(view), totalCount: page.totalCount, nextCursor })
      }),

    get: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const merchant = yield* merchants.get(partner, path.merchantId)
        const crypto = yield* settlements.list(partner, path.merchantId)
        return json(200, { merchant: merchantProfileView(publicUrl, merchant, crypto) })
      }),

    update: ({ path, payload }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        if (Object.keys(payload).length === 0) {
          return yield* RequestError.invalid(
            ApiErrors.ParamsValidation,
            "body",
            "give at least one of merchantName, merchantEmail, iconUrl"
          )
        }
        const updated = yield* merchants.update(partner, path.merchantId, {
          name: payload.merchantName,
          email: payload.merchantEmail,
          iconUrl: payload.iconUrl
        })
        return json(200, { merchant: view(updated) })
      }),

    delete: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const deleted = yield* merchants.remove(partner, path.merchantId)
        return json(200, { id: deleted.id, deleted: true })
      })
  })
})
