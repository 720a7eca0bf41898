/**
 * Listing payments at the edge: the list routes' query parameters turned into
 * a store filter (timestamps, token symbols and CAIP ids, networks, merchants),
 * the page cursor, and the page with its merchants and statistics.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import { json } from "../http/Exchange.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { timestampParam } from "../http/QueryParams.js"
import { RequestError } from "../http/RequestError.js"
import type { Partner } from "../identity/Partner.js"
import type { Merchant } from "../merchants/Merchant.js"
import { Merchants } from "../merchants/Merchants.js"
import { type Caip2, type Caip19, parseCaip2, parseCaip19 } from "../shared/Caip.js"
import { cursorCodec, keysetPage } from "../shared/Cursor.js"
import { EngineMode } from "../shared/EngineMode.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import { PAYMENT_STATUSES, type Payment, PaymentId, type PaymentStatus } from "./Payment.js"
import type { PaymentCursor, PaymentFilter, PaymentSortBy, SortDirection } from "./PaymentStore.js"
import { sortKeyOf } from "./PaymentStore.js"
import { Payments } from "./Payments.js"
import { paymentView, statsView } from "./Views.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const asArray = <A>(
  value: A | ReadonlyArray<A> | undefined
): ReadonlyArray<A> | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value as A]

const commaList = <A>(
  field: string,
  value: string | undefined,
  parse: (item: string) => Either.Either<{ readonly value: A }, string>
): Effect.Effect<ReadonlyArray<A> | undefined, RequestError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const items = value.split(",").map((s) => s.trim())
  const out: Array<A> = []
  for (const item of items) {
    const parsed = parse(item)
    if (Either.isLeft(parsed)) {
      return Effect.fail(
        RequestError.invalid(
          ApiErrors.InvalidParams,
          field,
          `${JSON.stringify(item)}: ${parsed.left}`
        )
      )
    }
    out.push(parsed.right.value)
  }
  return Effect.succeed(out)
}

/**
 * How many distinct values a repeated or comma-separated list parameter may carry (after
 * duplicates are dropped): every value is a placeholder in the store's query and a shape of
 * statement, so an unbounded list would let one request grow both. Every status is at most
 * six; 100 merchants (a platform's dashboard filtering by many at once); 50 networks, assets
 * and token symbols, more than the engine's token registry and chains hold together.
 */
export const LIST_PARAM_CAPS = {
  merchantId: 100,
  status: PAYMENT_STATUSES.length,
  network: 50,
  asset: 50,
  token_symbol: 50
} as const

/** The distinct values of a list parameter, in first-seen order; over its cap, a 400 naming it. */
const distinct = <A>(
  field: keyof typeof LIST_PARAM_CAPS,
  values: ReadonlyArray<A> | undefined
): Effect.Effect<ReadonlyArray<A> | undefined, RequestError> => {
  if (values === undefined) return Effect.succeed(undefined)
  const unique = [...new Set(values)]
  const cap = LIST_PARAM_CAPS[field]
  return unique.length > cap
    ? Effect.fail(
        RequestError.invalid(
          ApiErrors.InvalidParams,
          field,
          `at most ${cap} distinct values (${unique.length} given)`
        )
      )
    : Effect.succeed(unique)
}

const dedupe = <A>(values: ReadonlyArray<A> | undefined) =>
  values === undefined ? undefined : [...new Set(values)]

const intersect = <A>(a: ReadonlyArray<A> | undefined, b: ReadonlyArray<A> | undefined) =>
  a === undefined ? b : b === undefined ? a : a.filter((x) => b.includes(x))

interface ListParams {
  readonly startTs?: string | undefined
  readonly endTs?: string | undefined
  readonly token_symbol?: string | ReadonlyArray<string> | undefined
  readonly asset?: string | undefined
  readonly network?: string | undefined
  readonly status?: PaymentStatus | ReadonlyArray<PaymentStatus> | undefined
  readonly referenceId?: string | undefined
  readonly merchantId?: string | ReadonlyArray<string> | undefined
}

export const filterOf = (
  partner: Partner,
  params: ListParams,
  fields: { readonly start: string; readonly end: string }
) =>
  Effect.gen(function* () {
    const registry = yield* TokenRegistry
    const from = yield* timestampParam(fields.start, params.startTs)
    const before = yield* timestampParam(fields.end, params.endTs)
    const symbols = yield* distinct(
      "token_symbol",
      asArray(params.token_symbol)?.map((s) => s.toLowerCase())
    )
    if (symbols?.some((s) => s.length === 0)) {
      return yield* RequestError.invalid(
        ApiErrors.InvalidParams,
        "token_symbol",
        "must not be empty"
      )
    }
    const bySymbol = symbols?.flatMap((s) => registry.tokensBySymbol(s).map((t) => t.asset))
    const byAsset = yield* distinct(
      "asset",
      yield* commaList<Caip19>("asset", params.asset, parseCaip19)
    )
    const networks = yield* distinct(
      "network",
      yield* commaList<Caip2>("network", params.network, parseCaip2)
    )
    const merchantIds = yield* distinct("merchantId", asArray(params.merchantId))
    const statuses = yield* distinct("status", asArray(params.status))
    if (merchantIds?.some((s) => s.length === 0)) {
      return yield* RequestError.invalid(ApiErrors.InvalidParams, "merchantId", "must not be empty")
    }
    const filter: PaymentFilter = {
      partnerId: partner.id,
      merchantIds,
      statuses,
      from,
      before,
      assets: dedupe(intersect(bySymbol, byAsset)),
      networks,
      referenceId: params.referenceId,
      now: yield* now
    }
    return filter
  })

/** An empty set selects nothing: answered without asking the store. */
const selectsNothing = (f: PaymentFilter) =>
  [f.merchantIds, f.statuses, f.assets, f.networks].some(
    (set) => set !== undefined && set.length === 0
  )

const cursors = cursorCodec(
  "p1.",
  Schema.parseJson(
    Schema.Struct({
      s: Schema.Literal("date", "amount"),
      d: Schema.Literal("asc", "desc"),
      k: Schema.String.pipe(Schema.pattern(/^[0-9]{1,78}$/)),
      i: PaymentId
    })
  )
)
const encodeCursor = (cursor: PaymentCursor) =>
  cursors.encode({ s: cursor.sortBy, d: cursor.direction, k: cursor.key, i: cursor.id })

/** A cursor of this list and sort, or a refusal naming it. */
const decodeCursor = (
  cursor: string | undefined,
  sortBy: PaymentSortBy,
  direction: SortDirection
): Effect.Effect<PaymentCursor | undefined, RequestError> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const decoded = cursors.decode(cursor)
  return decoded !== undefined && decoded.s === sortBy && decoded.d === direction
    ? Effect.succeed({ sortBy, direction, key: decoded.k, id: decoded.i })
    : Effect.fail(
        RequestError.invalid(
          ApiErrors.InvalidParams,
          "cursor",
          "is not a cursor from this list and sort"
        )
      )
}

/** A page of payments, its cursor and the statistics over every match. */
export const pageOf = (
  filter: PaymentFilter,
  sortBy: PaymentSortBy,
  direction: SortDirection,
  cursor: string | undefined,
  limit: number
) =>
  Effect.gen(function* () {
    const payments = yield* Payments
    const after = yield* decodeCursor(cursor, sortBy, direction)
    if (selectsNothing(filter)) {
      return { rows: [], next: null, stats: { revenue: [], transactions: 0, customers: 0 } }
    }
    const found = yield* payments.list({ filter, sortBy, direction, after, limit: limit + 1 })
    const { rows, nextCursor } = keysetPage(found, limit, (last) =>
      encodeCursor({ sortBy, direction, key: sortKeyOf(last, sortBy), id: last.id })
    )
    return { rows, next: nextCursor, stats: yield* payments.stats(filter) }
  })

/** The merchants of a page, each looked up once. */
const merchantsOf = (rows: ReadonlyArray<Payment>) =>
  Effect.gen(function* () {
    const merchants = yield* Merchants
    const byId = new Map<string, Merchant | undefined>()
    for (const id of new Set(rows.map((p) => p.merchantId))) {
      byId.set(id, Option.getOrUndefined(yield* merchants.lookup(id)))
    }
    return byId
  })

export const listReply = (
  filter: PaymentFilter,
  params: {
    readonly sortBy?: PaymentSortBy | undefined
    readonly sortDir?: SortDirection | undefined
    readonly cursor?: string | undefined
    readonly limit: number
  }
) =>
  Effect.gen(function* () {
    const registry = yield* TokenRegistry
    const { publicUrl } = yield* HttpConfig
    const { livemode } = yield* EngineMode
    const page = yield* pageOf(
      filter,
      params.sortBy ?? "date",
      params.sortDir ?? "desc",
      params.cursor,
      params.limit
    )
    const merchants = yield* merchantsOf(page.rows)
    return json(200, {
      data: page.rows.map((p) =>
        paymentView(p, merchants.get(p.merchantId), {
          registry,
          publicUrl,
          now: filter.now,
          livemode
        })
      ),
      nextCursor: page.next,
      stats: statsView(page.stats, registry)
    })
  })
