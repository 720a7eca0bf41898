/**
 * The payment route handlers: the service call and the wire views (the list
 * routes' query parsing and cursors are in ListQuery.ts).
 */
import { Clock, Effect, Option } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import { json, type Reply, whenAbandoned } from "../http/Exchange.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { maybeIdempotently } from "../idempotency/Http.js"
import type { Partner } from "../identity/Partner.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import type { MerchantNotFound } from "../merchants/Merchant.js"
import { Merchants } from "../merchants/Merchants.js"
import { EngineMode } from "../shared/EngineMode.js"
import { parseRfc3339, toUnixSeconds } from "../shared/Time.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import { PaymentsApi } from "./Api.js"
import { asArray, filterOf, listReply, pageOf } from "./ListQuery.js"
import { type Payment, paymentLivemode } from "./Payment.js"
import { Payments, type StatusRead } from "./Payments.js"
import {
  cancelView,
  gatewayUrl,
  legacyStatsView,
  legacyView,
  POLL_IN_MS,
  paymentDetails,
  refundView,
  statusView
} from "./Views.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A merchant named by a header that does not exist is `merchant_not_found`. */
const merchantNotFound = (e: MerchantNotFound) =>
  Effect.fail(
    RequestError.of(
      ApiErrors.MerchantNotFound,
      `No merchant ${e.merchantId}: the Merchant-Id header names no merchant`
    )
  )

const expiresAtOf = (
  value: number | string | null | undefined
): Effect.Effect<Date | undefined, RequestError> => {
  if (value === undefined || value === null) return Effect.succeed(undefined)
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value > 0 && value < 1e11
      ? Effect.succeed(new Date(value * 1000))
      : Effect.fail(
          RequestError.invalid(ApiErrors.ParamsValidation, "expiresAt", "must be Unix seconds")
        )
  }
  const date = parseRfc3339(value)
  return date
    ? Effect.succeed(date)
    : Effect.fail(
        RequestError.invalid(
          ApiErrors.ParamsValidation,
          "expiresAt",
          "must be Unix seconds or an RFC 3339 timestamp like 2026-01-31T12:00:00Z"
        )
      )
}

/** The handlers, with the services they use resolved once, not per request. */
export const paymentHandlers = Effect.gen(function* () {
  const payments = yield* Payments
  const merchants = yield* Merchants
  const registry = yield* TokenRegistry
  const { publicUrl } = yield* HttpConfig
  const { livemode } = yield* EngineMode
  return implement(
    PaymentsApi,
    {
      create: (input) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const expiresAt = yield* expiresAtOf(input.payload.expiresAt)
          const reply = (p: Payment): Reply =>
            json(201, {
              paymentId: p.id,
              status: p.status,
              expiresAt: toUnixSeconds(p.expiresAt),
              isFinal: false,
              gatewayUrl: gatewayUrl(publicUrl, p),
              pollInMs: POLL_IN_MS,
              livemode: paymentLivemode(p, livemode)
            })
          return yield* maybeIdempotently(input, (complete) =>
            payments
              .create(
                partner,
                input.headers["merchant-id"],
                {
                  referenceId: input.payload.referenceId,
                  amount: input.payload.amount,
                  expiresAt,
                  checkout: input.payload.checkout ?? null
                },
                complete && ((p) => complete(reply(p)))
              )
              .pipe(Effect.map(reply))
          ).pipe(Effect.catchTag("MerchantNotFound", merchantNotFound))
        }),

      list: ({ urlParams }) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const filter = yield* filterOf(partner, urlParams, { start: "startTs", end: "endTs" })
          return yield* listReply(filter, urlParams)
        }),

      get: ({ path }) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const payment = yield* payments.get(partner, path.id)
          const merchant = yield* merchants.lookup(payment.merchantId)
          return json(
            200,
            paymentDetails(payment, Option.getOrUndefined(merchant), {
              registry: registry,
              publicUrl,
              now: yield* now,
              livemode
            })
          )
        }),

      // The hottest route: a plain chain, no generator.
      status: (input) =>
        Effect.flatMap(CurrentPartner, (partner) =>
          Effect.map(
            payments.status(
              partner,
              input.headers["merchant-id"],
              input.path.id,
              input.urlParams.maxPollMs ?? 0
            ),
            ({ payment, at }) => json(200, statusView(payment, { registry, now: at }))
          )
        ),

      cancel: (input) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const reply = (p: Payment) => json(200, cancelView(p, { livemode }))
          return yield* maybeIdempotently(input, (complete) =>
            payments
              .cancel(
                partner,
                input.headers["merchant-id"],
                input.path.id,
                complete && ((p) => complete(reply(p)))
              )
              .pipe(Effect.map(reply))
          )
        }),

      refund: (input) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const reply = (refund: NonNullable<Payment["refund"]>, p: Payment) =>
            json(201, { refund: refundView(refund, p, { registry, livemode }) })
          return yield* maybeIdempotently(input, (complete) =>
            payments
              .refund(
                partner,
                input.payload.paymentId,
                complete && ((r, p) => complete(reply(r, p)))
              )
              .pipe(Effect.map(({ refund, payment }) => reply(refund, payment)))
          )
        }),

      merchantPayments: (input) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const merchantId = input.headers["merchant-id"]
          yield* merchants
            .get(partner, merchantId)
            .pipe(Effect.catchTag("MerchantNotFound", merchantNotFound))
          const filter = yield* filterOf(
            partner,
            { ...input.urlParams, merchantId: [merchantId] },
            { start: "startTs", end: "endTs" }
          )
          return yield* listReply(filter, input.urlParams)
        }),

      legacyMerchantPayments: ({ path, urlParams }) =>
        Effect.gen(function* () {
          const partner = yield* CurrentPartner
          const merchantId = path.merchant_id
          yield* merchants.get(partner, merchantId)
          const statuses = asArray(urlParams.status) ?? [
            "requires_action",
            "processing",
            "succeeded",
            "failed",
            "expired"
          ]
          const filter = yield* filterOf(
            partner,
            {
              startTs: urlParams.start_ts,
              endTs: urlParams.end_ts,
              asset: urlParams.asset,
              network: urlParams.network,
              status: statuses,
              merchantId: [merchantId]
            },
            { start: "start_ts", end: "end_ts" }
          )
          const page = yield* pageOf(
            filter,
            urlParams.sort_by ?? "date",
            urlParams.sort_dir ?? "desc",
            urlParams.cursor,
            urlParams.limit
          )
          return json(200, {
            data: page.rows.map((p) => legacyView(p, { registry, now: filter.now, livemode })),
            next_cursor: page.next,
            stats: legacyStatsView(page.stats, registry)
          })
        })
    },
    {
      // The hottest route, on a store that reads synchronously (or in one promise): answered
      // without a fiber when nothing has to wait, and a long-poll held without one (a waiter
      // and a promise: 10,000 held cost little more than node:http's own). Anything else (a
      // refusal, a store without findStatusNow) is `status` above.
      status: (input, caller) => {
        const maxPollMs = input.urlParams.maxPollMs ?? 0
        const request = input.request
        const read = payments.statusNow(
          caller as Partner,
          input.headers["merchant-id"],
          input.path.id,
          maxPollMs,
          maxPollMs > 0 ? (release) => whenAbandoned(request, release) : undefined
        )
        const reply = (r: StatusRead | undefined) =>
          r === undefined ? undefined : json(200, statusView(r.payment, { registry, now: r.at }))
        return read instanceof Promise ? read.then(reply) : reply(read)
      }
    }
  )
})
