/**
 * The storage contract for payments: compare-and-set transitions, expiry,
 * refunds, and listings and statistics that agree with the reference meaning
 * of filters and sorts (payments/PaymentQuery.ts) on the same data.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer, Option } from "effect"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import type { ChainJobId } from "../src/payments/ChainJob.js"
import type {
  Payment,
  PaymentFees,
  PaymentId,
  PaymentStatus,
  RefundId
} from "../src/payments/Payment.js"
import {
  type CollectedDataRecord,
  GatewayStore,
  type OptionId,
  type PaymentOption
} from "../src/payments/PaymentOption.js"
import {
  comparePayments,
  computeStats,
  isAfterCursor,
  matchesFilter
} from "../src/payments/PaymentQuery.js"
import { applyChange, type PaymentChange } from "../src/payments/PaymentStateMachine.js"
import { DAY_MS } from "../src/payments/PaymentStatsPlan.js"
import {
  type PaymentFilter,
  type PaymentPageQuery,
  PaymentStore,
  sortKeyOf
} from "../src/payments/PaymentStore.js"
import type { AmountUnit } from "../src/shared/Amount.js"
import type { Caip2, Caip10, Caip19 } from "../src/shared/Caip.js"
import { findCurrency } from "../src/shared/Currency.js"
import { makeIdBody } from "../src/shared/Ids.js"
import { partnerKey } from "./KeyFixtures.js"

export type PaymentStores = PartnerStore | MerchantStore | PaymentStore | GatewayStore

const T0 = Date.UTC(2026, 2, 1)
const USD: AmountUnit = { kind: "fiat", currency: findCurrency("USD")! }
const JPY: AmountUnit = { kind: "fiat", currency: findCurrency("JPY")! }
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const USDC_ETH = "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" as Caip19
const BIG_TOKEN = "eip155:8453/erc20:0x0000000000000000000000000000000000000b1c" as Caip19
const MAX_TOKEN = 2n ** 256n - 1n
/** The network's own coin (CAIP-19 slip44:60). */
const ETH_BASE = "eip155:8453/slip44:60" as Caip19

let seq = 0
const uniqueBody = (ms: number) => {
  seq++
  return makeIdBody(ms).slice(0, 8) + String(seq).padStart(12, "0")
}

const setup = Effect.gen(function* () {
  const partner = new Partner({
    id: `ptnr_${uniqueBody(T0)}` as PartnerId,
    name: "P",
    apiVersion: "2026-02-18",
    createdAt: new Date(T0)
  })
  yield* (yield* PartnerStore).insert(partner, partnerKey(partner))
  const merchants = yield* Effect.forEach([0, 1], () =>
    Effect.gen(function* () {
      const m = new Merchant({
        id: `mrch_${uniqueBody(T0)}` as MerchantId,
        partnerId: partner.id,
        name: "M",
        email: null,
        iconUrl: null,
        status: "active",
        createdAt: new Date(T0),
        updatedAt: new Date(T0),
        deletedAt: null
      })
      yield* (yield* MerchantStore).insert(m)
      return m
    })
  )
  return { partner, merchants }
})

const aPayment = (
  partnerId: PartnerId,
  merchantId: MerchantId,
  fields: Partial<Payment> & { readonly at?: number } = {}
): Payment => {
  const at = fields.at ?? T0 + seq * 1000
  const { at: _, ...rest } = fields
  return {
    id: `pay_${uniqueBody(at)}` as PaymentId,
    partnerId,
    merchantId,
    referenceId: `ORDER-${seq}`,
    amount: { unit: USD, value: 1050n },
    status: "requires_action",
    failureCode: null,
    cancelledReason: null,
    expiresAt: new Date(at + 300_000),
    createdAt: new Date(at),
    updatedAt: new Date(at),
    finalAt: null,
    checkout: null,
    tokenAmount: null,
    buyer: null,
    transaction: null,
    txId: null,
    refund: null,
    fees: null,
    settlement: null,
    livemode: true,
    ...rest
  }
}

const anOption = (
  payment: Payment,
  fields: Partial<Omit<PaymentOption, "authorization">> & {
    readonly authorization?: Partial<PaymentOption["authorization"]>
  } = {}
): PaymentOption => {
  const { authorization, ...rest } = fields
  return {
    id: `opt_${uniqueBody(T0)}` as OptionId,
    paymentId: payment.id,
    account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
    asset: USDC_BASE,
    method: "eip3009",
    approvals: [],
    rate: null,
    authorization: {
      from: "0x00000000000000000000000000000000000000b0",
      to: "0x00000000000000000000000000000000000000c0",
      value: 10_500_000n,
      validAfter: 0n,
      validBefore: BigInt((T0 + 300_000) / 1000),
      nonce: `0x${"0f".repeat(32)}`,
      ...authorization
    },
    expiresAt: new Date(T0 + 300_000),
    quoted: true,
    collectData: false,
    clientId: null,
    createdAt: new Date(T0 + 1),
    ...rest
  }
}

/** Fails the test unless `effect` ended in a defect (not a typed failure, not a success). */
const expectDefect = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.isDie(exit.cause)).toBe(true)
      expect(Option.isNone(Cause.failureOption(exit.cause))).toBe(true)
    }
  })

const buyer = (address: string, chain = "eip155:8453") => ({
  account: `${chain}:${address}` as Caip10,
  providerName: "Wallet",
  providerIcon: null
})

/** A varied set: statuses, merchants, units, tokens, buyers, times, amounts with ties. */
const dataset = (partnerId: PartnerId, merchants: ReadonlyArray<MerchantId>) => {
  const statuses: ReadonlyArray<PaymentStatus> = [
    "requires_action",
    "processing",
    "succeeded",
    "failed",
    "expired",
    "cancelled",
    "succeeded"
  ]
  const tokens = [USDC_BASE, USDC_ETH, BIG_TOKEN]
  return Array.from({ length: 48 }, (_, i) => {
    const status = statuses[i % statuses.length]!
    const token = tokens[i % 3]!
    const tokenDenominated = i % 5 === 0
    const value = tokenDenominated
      ? token === BIG_TOKEN
        ? MAX_TOKEN - BigInt(i)
        : BigInt(1_000_000 * ((i % 4) + 1))
      : BigInt(100 * ((i % 6) + 1))
    const paid = status !== "requires_action" && status !== "expired" && status !== "cancelled"
    return aPayment(partnerId, merchants[i % 2]!, {
      // Several payments share a millisecond, so ties are broken by id.
      at: T0 + Math.floor(i / 3) * 60_000,
      status,
      referenceId: i % 4 === 0 ? `Order/${i}-ABC` : `inv ${i}`,
      amount: {
        unit: tokenDenominated ? { kind: "token", asset: token } : i % 7 === 3 ? JPY : USD,
        value
      },
      // The first requires_action ones are already past their time: they read as expired.
      expiresAt: new Date(i < 10 ? T0 : T0 + 10 * 86_400_000),
      tokenAmount: tokenDenominated || paid ? { asset: token, value } : null,
      buyer: paid
        ? buyer(`0x${(i % 5).toString(16).padStart(40, "a")}`, i % 2 ? "eip155:1" : "eip155:8453")
        : null,
      transaction: paid ? { networkId: "8453", hash: `0x${"ab".repeat(32)}`, nonce: i } : null,
      txId: status === "succeeded" ? `0x${"cd".repeat(32)}` : null,
      finalAt: status === "succeeded" ? new Date(T0) : null
    })
  })
}

/** Midnight UTC: the statistics data set sits on either side of this day's boundaries. */
const D1 = Date.UTC(2026, 2, 10)

/**
 * Payments over five UTC days, some right at midnight or a millisecond before it, for the
 * statistics: succeeded ones stored as such and others that succeed later through
 * transitions; fiat and token units with amounts past 2^64; buyers at both merchants, one
 * address on two chains and in two letter cases; unpaid, failed and processing ones with
 * buyers that must not count. Returns the payments as they end up.
 */
const statsDataset = (partnerId: PartnerId, merchants: readonly [MerchantId, MerchantId]) =>
  Effect.gen(function* () {
    const store = yield* PaymentStore
    const offsets = [0, 1, 3600_000, DAY_MS / 2, DAY_MS - 1]
    const statuses: ReadonlyArray<PaymentStatus | "later"> = [
      "succeeded",
      "later",
      "failed",
      "succeeded",
      "processing",
      "later",
      "cancelled",
      "succeeded",
      "requires_action",
      "expired"
    ]
    const units: ReadonlyArray<AmountUnit> = [
      USD,
      { kind: "token", asset: USDC_BASE },
      JPY,
      { kind: "token", asset: BIG_TOKEN },
      { kind: "token", asset: USDC_ETH }
    ]
    const addresses = [
      "0x00000000000000000000000000000000000000a1",
      "0x00000000000000000000000000000000000000A1",
      "0x00000000000000000000000000000000000000b2",
      "0x00000000000000000000000000000000000000c3"
    ]
    const final: Array<Payment> = []
    let i = 0
    for (let day = -1; day < 4; day++) {
      for (const offset of offsets) {
        for (const merchant of merchants) {
          i++
          const status = statuses[i % statuses.length]!
          const unit = units[i % units.length]!
          const value =
            unit.kind === "token" && unit.asset === BIG_TOKEN
              ? 2n ** 64n + BigInt(i) * 2n ** 63n
              : BigInt(100 * i + 1)
          const paid =
            status !== "requires_action" && status !== "cancelled" && status !== "expired"
          const who = paid
            ? buyer(addresses[i % addresses.length]!, i % 3 === 0 ? "eip155:1" : "eip155:8453")
            : null
          const token = unit.kind === "token" ? unit.asset : USDC_BASE
          const createdAt = D1 + day * DAY_MS + offset
          const p = aPayment(partnerId, merchant, {
            at: createdAt,
            referenceId: `stat-${i}`,
            amount: { unit, value },
            status: status === "later" ? "requires_action" : status,
            expiresAt: new Date(createdAt + (status === "expired" ? 1 : 20 * DAY_MS)),
            tokenAmount: paid && status !== "later" ? { asset: token, value } : null,
            buyer: status === "later" ? null : who,
            txId: status === "succeeded" ? "0x1" : null,
            finalAt: status === "succeeded" ? new Date(createdAt) : null
          })
          yield* store.insert(p)
          if (status !== "later") {
            final.push(p)
            continue
          }
          // Paid later: the buyer arrives with processing, the success after.
          const at = new Date(createdAt + 60_000)
          const steps: ReadonlyArray<readonly [PaymentStatus, PaymentChange]> = [
            [
              "requires_action",
              {
                status: "processing",
                at,
                finalAt: null,
                tokenAmount: { asset: token, value },
                buyer: who!
              }
            ],
            ["processing", { status: "succeeded", at, finalAt: at, txId: "0x2" }]
          ]
          let current = p
          for (const [from, change] of steps) {
            expect(Option.isSome(yield* store.transition(p.id, from, change))).toBe(true)
            current = applyChange(current, change)
          }
          final.push(current)
        }
      }
    }
    return final
  })

/**
 * For a store's own tests of its aggregates: a partner with two merchants and the statistics
 * data set stored, filters that take each path of `planStats`, and the reference answer.
 */
export const statisticsFixture = Effect.gen(function* () {
  const { partner, merchants } = yield* setup
  const [m0, m1] = [merchants[0]!.id, merchants[1]!.id]
  const data = yield* statsDataset(partner.id, [m0, m1])
  const base: PaymentFilter = { partnerId: partner.id, now: new Date(D1 + 10 * DAY_MS) }
  const filters: ReadonlyArray<PaymentFilter> = [
    base,
    { ...base, merchantIds: [m0] },
    { ...base, merchantIds: [m0, m1], statuses: ["succeeded"] },
    { ...base, from: new Date(D1), before: new Date(D1 + 2 * DAY_MS) },
    { ...base, from: new Date(D1 - 1), before: new Date(D1 + DAY_MS + 1), merchantIds: [m1] },
    { ...base, before: new Date(D1 + DAY_MS / 2) },
    { ...base, assets: [USDC_BASE] }
  ]
  return {
    partner,
    merchants,
    data,
    base,
    filters,
    expected: (filter: PaymentFilter) => computeStats(data, filter)
  }
})

/**
 * References for the search: a needle at the start, middle or end of them, in either case,
 * characters FTS5 and LIKE would read as syntax, and letters outside ASCII.
 */
const SEARCH_REFERENCES = [
  "ORDER-1001",
  "order-1001-b",
  "Inv/2026:ÄÖ-7",
  'quote"d "x"',
  "star*x AND y",
  "paren(x) OR NOT z",
  "100%_off",
  "back\\slash",
  "col:on^2 {a}",
  "ab",
  "Ünïcode ßtraße",
  "  spaced  out  "
]

/** Needles for them, and ones that match nothing, or (shorter than a trigram) very much. */
const SEARCH_NEEDLES = [
  "ORD",
  "ord",
  "der-100",
  "1001",
  "01-B",
  "ORDER-1001",
  "order-1001-b",
  "inv/2026:äö-7",
  '"d "',
  '"',
  "*x and",
  "(x) or not",
  "%_",
  "0%",
  "_o",
  "\\s",
  "n^2 {",
  "ünï",
  "STRASSE",
  "straße",
  "  out",
  "ab",
  "a",
  "",
  "zzz",
  "order-1001-bb"
]

/**
 * Asserts the store answers `filter` over `data` (everything of the filter's partner it holds)
 * as the reference meaning does: the statistics, and every sort's pages walked by cursor.
 */
export const expectListingAgrees = (
  data: ReadonlyArray<Payment>,
  filter: PaymentFilter,
  pageSize = 7
) =>
  Effect.gen(function* () {
    const store = yield* PaymentStore
    const label = JSON.stringify(filter)
    expect(yield* store.stats(filter), label).toEqual(computeStats(data, filter))
    for (const sortBy of ["date", "amount"] as const) {
      for (const direction of ["asc", "desc"] as const) {
        const expected = data
          .filter((p) => matchesFilter(p, filter))
          .sort(comparePayments(sortBy, direction))
        // Walk the pages with keyset cursors: every row once, in order.
        const seen: Array<string> = []
        let query: PaymentPageQuery = { filter, sortBy, direction, limit: pageSize }
        for (let page = 0; page < 50; page++) {
          const rows = yield* store.list(query)
          seen.push(...rows.map((p) => p.id))
          const last = rows.at(-1)
          if (rows.length < pageSize || last === undefined) break
          query = {
            ...query,
            after: { sortBy, direction, key: sortKeyOf(last, sortBy), id: last.id }
          }
        }
        expect(seen, `${label} by ${sortBy} ${direction}`).toEqual(expected.map((p) => p.id))
      }
    }
  })

export const paymentStorageContract = (
  name: string,
  layer: () => Layer.Layer<PaymentStores, unknown>
) =>
  describe(`payment storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, PaymentStores>) =>
      it.effect(title, () => Effect.provide(body, layer()), 30_000)

    test(
      "round-trips every field, exact amounts included",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const full = aPayment(partner.id, merchants[0]!.id, {
          referenceId: "Ünïcode / order: 1",
          amount: { unit: { kind: "token", asset: BIG_TOKEN }, value: MAX_TOKEN },
          status: "succeeded",
          failureCode: null,
          checkout: { successUrl: "https://shop.example/ok", errorUrl: "https://shop.example/ko" },
          tokenAmount: { asset: BIG_TOKEN, value: MAX_TOKEN },
          buyer: {
            account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
            providerName: "W",
            providerIcon: "https://w.example/i.png"
          },
          transaction: { networkId: "8453", hash: `0x${"12".repeat(32)}`, nonce: 7 },
          txId: `0x${"34".repeat(32)}`,
          finalAt: new Date(T0 + 5),
          refund: null,
          fees: { fixed: MAX_TOKEN - 1n, percentage: "0.40", total: MAX_TOKEN },
          settlement: {
            amount: MAX_TOKEN - 2n,
            status: "settled",
            destination: "eip155:8453:0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as Caip10,
            txHash: `0x${"56".repeat(32)}`,
            settledAt: new Date(T0 + 6)
          }
        })
        yield* store.insert(full)
        expect(Option.getOrThrow(yield* store.find(full.id))).toEqual(full)
        expect(Option.getOrThrow(yield* store.findStatus(full.id))).toMatchObject({
          id: full.id,
          partnerId: full.partnerId,
          merchantId: full.merchantId,
          status: full.status,
          expiresAt: full.expiresAt,
          failureCode: full.failureCode,
          tokenAmount: full.tokenAmount,
          txId: full.txId
        })
        expect(
          Option.isNone(yield* store.findStatus("pay_00000000000000000000" as PaymentId))
        ).toBe(true)
        // Without an effect, where the store offers it: the same answers.
        const { findStatusNow } = store
        if (findStatusNow !== undefined) {
          const now = (id: PaymentId) => Effect.promise(async () => findStatusNow(id))
          expect(yield* now(full.id)).toEqual(yield* store.findStatus(full.id))
          expect(Option.isNone(yield* now("pay_00000000000000000000" as PaymentId))).toBe(true)
        }
        const fiat = aPayment(partner.id, merchants[1]!.id, {
          amount: { unit: JPY, value: 10n ** 15n }
        })
        yield* store.insert(fiat)
        expect(Option.getOrThrow(yield* store.find(fiat.id))).toEqual(fiat)
        // As Payments.create makes one (a store may write it by a shorter path): priced in a
        // token, with a checkout, nothing else known yet.
        const created = aPayment(partner.id, merchants[1]!.id, {
          referenceId: "Ünïcode / created",
          amount: { unit: { kind: "token", asset: BIG_TOKEN }, value: MAX_TOKEN },
          checkout: { successUrl: "https://shop.example/ok", errorUrl: "https://shop.example/ko" },
          tokenAmount: { asset: BIG_TOKEN, value: MAX_TOKEN }
        })
        yield* store.insert(created)
        expect(Option.getOrThrow(yield* store.find(created.id))).toEqual(created)
        expect(Option.isNone(yield* store.find("pay_00000000000000000000" as PaymentId))).toBe(true)
      })
    )

    test(
      "keeps a native payment's network fee exactly, and none for a token's, written or transitioned",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const native: PaymentFees = {
          fixed: 10n ** 15n,
          percentage: "0.4",
          network: 2n ** 64n + 21_000n,
          total: 2n ** 65n
        }
        const token: PaymentFees = { fixed: 10_000n, percentage: "0.3", total: 41_500n }
        const paid = (fees: PaymentFees) =>
          aPayment(partner.id, merchants[0]!.id, {
            status: "succeeded",
            tokenAmount: { asset: ETH_BASE, value: 10n ** 18n },
            buyer: buyer("0x00000000000000000000000000000000000000b1"),
            txId: `0x${"34".repeat(32)}`,
            finalAt: new Date(T0 + 5),
            fees
          })
        const withNetwork = paid(native)
        const without = paid(token)
        yield* store.insert(withNetwork)
        yield* store.insert(without)
        expect(Option.getOrThrow(yield* store.find(withNetwork.id))).toEqual(withNetwork)
        expect(Option.getOrThrow(yield* store.find(withNetwork.id)).fees?.network).toBe(
          2n ** 64n + 21_000n
        )
        // Absent stays absent (not a network fee of 0, not an undefined key).
        expect(Option.getOrThrow(yield* store.find(without.id)).fees).toStrictEqual(token)

        // Transitioned: written with the fees, replaced whole with them, kept without them.
        const p = aPayment(partner.id, merchants[1]!.id, {
          status: "processing",
          tokenAmount: { asset: ETH_BASE, value: 10n ** 18n },
          buyer: buyer("0x00000000000000000000000000000000000000b2")
        })
        yield* store.insert(p)
        const at = new Date(T0 + 20_000)
        const succeeded = yield* store.transition(p.id, "processing", {
          status: "succeeded",
          at,
          finalAt: at,
          txId: "0x1",
          fees: native
        })
        expect(Option.getOrThrow(succeeded).fees).toEqual(native)
        expect(Option.getOrThrow(yield* store.find(p.id)).fees).toEqual(native)
        yield* store.transition(p.id, "succeeded", { status: "succeeded", at, finalAt: at })
        expect(Option.getOrThrow(yield* store.find(p.id)).fees).toEqual(native)
        yield* store.transition(p.id, "succeeded", {
          status: "succeeded",
          at,
          finalAt: at,
          fees: token
        })
        expect(Option.getOrThrow(yield* store.find(p.id)).fees).toStrictEqual(token)
      })
    )

    test(
      "keeps each payment's mode (live, test, or none when stored before it was recorded) as written",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const modes = [true, false, null] as const
        // As Payments.create makes them (a store may write those by a shorter path), and not.
        const created = modes.map((livemode) =>
          aPayment(partner.id, merchants[0]!.id, { livemode })
        )
        const paid = modes.map((livemode) =>
          aPayment(partner.id, merchants[1]!.id, {
            livemode,
            status: "processing",
            tokenAmount: { asset: USDC_BASE, value: 1n },
            buyer: buyer("0x00000000000000000000000000000000000000b1")
          })
        )
        for (const p of [...created, ...paid]) yield* store.insert(p)
        for (const p of [...created, ...paid]) {
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBe(p.livemode)
        }
        // A transition leaves it as it was.
        const at = new Date(T0 + 60_000)
        for (const p of created) {
          const moved = yield* store.transition(p.id, "requires_action", {
            status: "cancelled",
            at,
            finalAt: at,
            cancelledReason: "cancelled_by_merchant"
          })
          expect(Option.getOrThrow(moved).livemode).toBe(p.livemode)
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBe(p.livemode)
        }
        const listed = yield* store.list({
          filter: { partnerId: partner.id, now: at },
          sortBy: "date",
          direction: "asc",
          limit: 10
        })
        expect(new Map(listed.map((p) => [p.id, p.livemode]))).toEqual(
          new Map([...created, ...paid].map((p) => [p.id, p.livemode]))
        )
      })
    )

    test(
      "applies a transition only from the status it was decided from, once",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const p = aPayment(partner.id, merchants[0]!.id)
        yield* store.insert(p)
        const at = new Date(T0 + 10_000)
        const wrong = yield* store.transition(p.id, "processing", {
          status: "succeeded",
          at,
          finalAt: at,
          txId: "0x1"
        })
        expect(Option.isNone(wrong)).toBe(true)
        const results = yield* Effect.all(
          [
            store.transition(p.id, "requires_action", {
              status: "cancelled",
              at,
              finalAt: at,
              cancelledReason: "cancelled_by_merchant"
            }),
            store.transition(p.id, "requires_action", {
              status: "processing",
              at,
              finalAt: null,
              tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
              buyer: buyer("0x00000000000000000000000000000000000000b0")
            })
          ],
          { concurrency: "unbounded" }
        )
        expect(results.filter(Option.isSome)).toHaveLength(1)
        const stored = Option.getOrThrow(yield* store.find(p.id))
        const winner = Option.getOrThrow(results.find(Option.isSome)!)
        expect(stored).toEqual(winner)
        expect(stored.updatedAt).toEqual(at)
        if (stored.status === "cancelled") {
          expect(stored.cancelledReason).toBe("cancelled_by_merchant")
          expect(stored.finalAt).toEqual(at)
        } else {
          expect(stored.tokenAmount).toEqual({ asset: USDC_BASE, value: 10_500_000n })
          expect(stored.finalAt).toBeNull()
        }
      })
    )

    test(
      "replaces the buyer and the transaction whole when a transition brings new ones",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const p = aPayment(partner.id, merchants[0]!.id, {
          status: "processing",
          tokenAmount: { asset: USDC_BASE, value: 1n },
          buyer: {
            ...buyer("0x00000000000000000000000000000000000000b0"),
            providerIcon: "https://w.example/i.png"
          },
          transaction: { networkId: "8453", hash: `0x${"aa".repeat(32)}`, nonce: 5 }
        })
        yield* store.insert(p)
        const at = new Date(T0 + 1)
        const next = Option.getOrThrow(
          yield* store.transition(p.id, "processing", {
            status: "succeeded",
            at,
            finalAt: at,
            txId: "0x1",
            buyer: buyer("0x00000000000000000000000000000000000000c0"),
            transaction: { networkId: "8453", hash: `0x${"bb".repeat(32)}`, nonce: null }
          })
        )
        expect(next.transaction).toEqual({
          networkId: "8453",
          hash: `0x${"bb".repeat(32)}`,
          nonce: null
        })
        expect(next.buyer?.providerIcon).toBeNull()
        expect(Option.getOrThrow(yield* store.find(p.id))).toEqual(next)
      })
    )

    test(
      "finds the payments due for expiry, soonest first, up to the limit, writing nothing",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const m = merchants[0]!.id
        const due = [3, 1, 2].map((i) =>
          aPayment(partner.id, m, { expiresAt: new Date(T0 + 1000 + i * 100) })
        )
        const later = aPayment(partner.id, m, { expiresAt: new Date(T0 + 10_000_000) })
        const paid = aPayment(partner.id, m, {
          status: "processing",
          expiresAt: new Date(T0 + 1000)
        })
        for (const p of [...due, later, paid]) yield* store.insert(p)
        const now = new Date(T0 + 2000)
        // Soonest first, up to the limit; nothing is written.
        expect(yield* store.dueForExpiry(now, 2)).toEqual([due[1]!.id, due[2]!.id])
        expect(yield* store.dueForExpiry(now, 10)).toEqual([due[1]!.id, due[2]!.id, due[0]!.id])
        expect(yield* store.dueForExpiry(new Date(T0), 10)).toEqual([])
        for (const p of due) {
          expect(Option.getOrThrow(yield* store.find(p.id)).status).toBe("requires_action")
        }
        expect(Option.getOrThrow(yield* store.find(later.id)).status).toBe("requires_action")
        expect(Option.getOrThrow(yield* store.find(paid.id)).status).toBe("processing")
      })
    )

    test(
      "keeps one refund per payment, also under concurrent requests",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const p = aPayment(partner.id, merchants[0]!.id, { status: "succeeded" })
        yield* store.insert(p)
        const refund = (n: number) => ({
          id: `rfnd_${uniqueBody(T0 + n)}` as RefundId,
          createdAt: new Date(T0 + n)
        })
        const exits = yield* Effect.all(
          [1, 2, 3, 4].map((n) => Effect.exit(store.addRefund(p.id, refund(n)))),
          { concurrency: "unbounded" }
        )
        expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
        const stored = Option.getOrThrow(yield* store.find(p.id))
        expect(stored.refund).not.toBeNull()
        const again = yield* Effect.flip(store.addRefund(p.id, refund(9)))
        expect(again).toMatchObject({ _tag: "RefundExists", refundId: stored.refund!.id })
      })
    )

    test(
      "sums amounts exactly past 2^63 and 2^256",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const paid = (asset: Caip19, value: bigint) =>
          aPayment(partner.id, merchants[0]!.id, {
            status: "succeeded",
            amount: { unit: { kind: "token", asset }, value },
            tokenAmount: { asset, value }
          })
        for (const p of [
          paid(USDC_BASE, 5_000_000_000_000_000_000n),
          paid(USDC_BASE, 5_000_000_000_000_000_001n),
          paid(BIG_TOKEN, MAX_TOKEN),
          paid(BIG_TOKEN, MAX_TOKEN)
        ]) {
          yield* store.insert(p)
        }
        const stats = yield* store.stats({ partnerId: partner.id, now: new Date(T0) })
        expect(stats.revenue).toEqual([
          { unit: `caip19/${BIG_TOKEN}`, total: 2n * MAX_TOKEN },
          { unit: `caip19/${USDC_BASE}`, total: 10_000_000_000_000_000_001n }
        ])
        expect(stats.transactions).toBe(4)
      })
    )

    test(
      "lists and sums exactly what the reference meaning of each filter and sort selects",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const data = dataset(
          partner.id,
          merchants.map((m) => m.id)
        )
        for (const p of data) yield* store.insert(p)
        // Another partner's payments never show.
        const other = yield* setup
        yield* store.insert(
          aPayment(other.partner.id, other.merchants[0]!.id, { status: "succeeded" })
        )

        const now = new Date(T0 + 3600_000)
        const base: PaymentFilter = { partnerId: partner.id, now }
        const filters: ReadonlyArray<PaymentFilter> = [
          base,
          { ...base, merchantIds: [merchants[1]!.id, "acme-store-1"] },
          { ...base, statuses: ["expired"] },
          { ...base, statuses: ["succeeded", "processing"] },
          { ...base, from: new Date(T0 + 5 * 60_000), before: new Date(T0 + 9 * 60_000) },
          { ...base, assets: [USDC_BASE, BIG_TOKEN] },
          { ...base, networks: ["eip155:1" as Caip2] },
          { ...base, referenceId: "order/" },
          { ...base, referenceId: "-abc" },
          {
            ...base,
            statuses: ["succeeded"],
            networks: ["eip155:8453" as Caip2],
            merchantIds: [merchants[0]!.id]
          }
        ]
        for (const filter of filters) {
          expect(yield* store.stats(filter)).toEqual(computeStats(data, filter))
          for (const sortBy of ["date", "amount"] as const) {
            for (const direction of ["asc", "desc"] as const) {
              const expected = data
                .filter((p) => matchesFilter(p, filter))
                .sort(comparePayments(sortBy, direction))
              // Walk the pages with keyset cursors: every row once, in order.
              const seen: Array<string> = []
              let query: PaymentPageQuery = { filter, sortBy, direction, limit: 7 }
              for (let page = 0; page < 20; page++) {
                const rows = yield* store.list(query)
                seen.push(...rows.map((p) => p.id))
                const last = rows.at(-1)
                if (rows.length < 7 || last === undefined) break
                query = {
                  ...query,
                  after: { sortBy, direction, key: sortKeyOf(last, sortBy), id: last.id }
                }
              }
              expect(seen).toEqual(expected.map((p) => p.id))
            }
          }
        }
        // Sanity of the reference itself on the boundaries the contract promises.
        const windowed = data.filter((p) => matchesFilter(p, filters[4]!))
        expect(
          windowed.every(
            (p) =>
              p.createdAt.getTime() >= T0 + 5 * 60_000 && p.createdAt.getTime() < T0 + 9 * 60_000
          )
        ).toBe(true)
        expect(windowed.some((p) => p.createdAt.getTime() === T0 + 5 * 60_000)).toBe(true)
        const total = computeStats(data, base)
        expect(
          total.revenue.find((r) => r.unit === `caip19/${BIG_TOKEN}`)?.total ?? 0n
        ).toBeGreaterThan(2n ** 63n)
        expect(
          isAfterCursor(data[0]!, { sortBy: "date", direction: "asc", key: "0", id: data[0]!.id })
        ).toBe(true)
      })
    )

    test(
      "gateway: stores payment options and reads each back exactly",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const p = aPayment(partner.id, merchants[0]!.id)
        yield* payments.insert(p)
        const options = [
          anOption(p),
          // Every uint256 at its widest, hex in mixed case, and the other flags.
          anOption(p, {
            account: "eip155:8453:0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as Caip10,
            asset: BIG_TOKEN,
            authorization: {
              from: "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01",
              to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
              value: MAX_TOKEN,
              validAfter: 2n ** 64n + 1n,
              validBefore: MAX_TOKEN,
              nonce: `0x${"aBcD".repeat(16)}`
            },
            expiresAt: new Date(T0 + 299_999),
            quoted: false,
            collectData: true,
            clientId: "wallet-client-Ωμ 7",
            createdAt: new Date(T0 + 7)
          }),
          anOption(p, {
            account: "eip155:1:0x00000000000000000000000000000000000000b0" as Caip10,
            asset: USDC_ETH,
            authorization: { value: 1n, validAfter: 1_700_000_000n, validBefore: 2n ** 64n },
            expiresAt: new Date(T0 + 123_456_789),
            createdAt: new Date(T0 + 999)
          }),
          // Paid through Permit2 after two approvals, at a rate crossed through two feed rounds.
          anOption(p, {
            method: "permit2",
            approvals: [0n, MAX_TOKEN],
            rate: {
              numerator: 10n ** 40n + 7n,
              denominator: 3n,
              readings: [
                {
                  pair: "EUR/USD",
                  feed: "eip155:1:0xb49f677943BC038e9857d61E7d053CaA2C1734C1",
                  roundId: 2n ** 80n - 1n,
                  answer: 108_000_000n,
                  decimals: 8,
                  updatedAt: new Date(T0 - 86_000_000)
                },
                {
                  pair: "ETH/USD",
                  feed: "eip155:1:0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419",
                  roundId: 18_446_744_073_709_562_000n,
                  answer: -1n,
                  decimals: 18,
                  updatedAt: new Date(T0)
                }
              ]
            }
          }),
          anOption(p, {
            method: "permit2",
            approvals: [MAX_TOKEN],
            rate: { numerator: 1n, denominator: 1n, readings: [] }
          }),
          // Paid in the network's own coin: the buyer's wallet sends it, nothing is signed.
          anOption(p, {
            asset: ETH_BASE,
            method: "native",
            authorization: { value: 10n ** 18n + 2n ** 64n }
          })
        ]
        yield* gateway.insertOptions(options)
        for (const option of options) {
          expect(Option.getOrThrow(yield* gateway.findOption(option.id))).toEqual(option)
        }
        const widest = Option.getOrThrow(yield* gateway.findOption(options[1]!.id))
        expect(widest.authorization.value).toBe(2n ** 256n - 1n)
        expect(widest.authorization.validBefore > 2n ** 64n).toBe(true)
        expect(widest.authorization.nonce).toBe(`0x${"aBcD".repeat(16)}`)
        expect(widest.account).toBe("eip155:8453:0xAbCdEf0123456789aBcDeF0123456789AbCdEf01")
        expect(
          Option.isNone(yield* gateway.findOption("opt_00000000000000000000" as OptionId))
        ).toBe(true)
        // An empty answer stores nothing and is no error.
        yield* gateway.insertOptions([])
      })
    )

    test(
      "gateway: inserts a batch of options all or none",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const p = aPayment(partner.id, merchants[0]!.id)
        yield* payments.insert(p)
        const none = (o: PaymentOption) =>
          Effect.map(gateway.findOption(o.id), (found) => expect(Option.isNone(found)).toBe(true))

        // A duplicate id within the batch.
        const a = anOption(p)
        const b = anOption(p)
        yield* expectDefect(gateway.insertOptions([a, b, { ...a, account: b.account }]))
        yield* none(a)
        yield* none(b)

        // An id already stored: the stored option is untouched, the new ones are not stored.
        const stored = anOption(p, { quoted: false })
        yield* gateway.insertOptions([stored])
        const c = anOption(p)
        yield* expectDefect(gateway.insertOptions([c, { ...stored, quoted: true }]))
        yield* none(c)
        expect(Option.getOrThrow(yield* gateway.findOption(stored.id))).toEqual(stored)

        // An option of a payment that does not exist.
        const d = anOption(p)
        const orphan = anOption({ ...p, id: "pay_00000000000000000000" as PaymentId })
        yield* expectDefect(gateway.insertOptions([d, orphan]))
        yield* none(d)
        yield* none(orphan)

        // The same batch, valid, then goes in whole.
        yield* gateway.insertOptions([a, b, c, d])
        for (const o of [a, b, c, d]) {
          expect(Option.getOrThrow(yield* gateway.findOption(o.id))).toEqual(o)
        }
      })
    )

    test(
      "gateway: keeps the latest collected data per payment and account, account as given",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const p = aPayment(partner.id, merchants[0]!.id)
        const q = aPayment(partner.id, merchants[1]!.id)
        yield* payments.insert(p)
        yield* payments.insert(q)
        const mixed = "eip155:8453:0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as Caip10
        const lower = mixed.toLowerCase() as Caip10
        const other = "eip155:1:0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as Caip10
        const record = (
          paymentId: PaymentId,
          account: Caip10,
          data: CollectedDataRecord["data"],
          at: number
        ): CollectedDataRecord => ({ paymentId, account, data, collectedAt: new Date(T0 + at) })
        const find = (paymentId: PaymentId, account: Caip10) =>
          gateway.findCollectedData(paymentId, account)

        expect(Option.isNone(yield* find(p.id, mixed))).toBe(true)
        const first = record(
          p.id,
          mixed,
          {
            email: "Buyer@Example.com",
            name: "Zoë Ünïcode 😀",
            address: { line1: "1 Main St", city: "Köln", zip: "50667" },
            tags: ["a", "b"],
            age: 42,
            consent: true,
            note: null
          },
          5
        )
        yield* gateway.saveCollectedData(first)
        const found = Option.getOrThrow(yield* find(p.id, mixed))
        expect(found).toEqual(first)
        expect(found.account).toBe(mixed)

        // Isolated per payment and per account; an account is matched exactly as given.
        expect(Option.isNone(yield* find(q.id, mixed))).toBe(true)
        expect(Option.isNone(yield* find(p.id, other))).toBe(true)
        expect(Option.isNone(yield* find(p.id, lower))).toBe(true)
        const elsewhere = record(q.id, mixed, { email: "q@example.com" }, 6)
        const otherChain = record(p.id, other, { email: "other@example.com" }, 7)
        yield* gateway.saveCollectedData(elsewhere)
        yield* gateway.saveCollectedData(otherChain)

        // A second save replaces the first, for that payment and account only.
        const second = record(p.id, mixed, { email: "new@example.com" }, 1234)
        yield* gateway.saveCollectedData(second)
        expect(Option.getOrThrow(yield* find(p.id, mixed))).toEqual(second)
        expect(Option.getOrThrow(yield* find(q.id, mixed))).toEqual(elsewhere)
        expect(Option.getOrThrow(yield* find(p.id, other))).toEqual(otherChain)
        expect(Option.isNone(yield* find(p.id, lower))).toBe(true)
      })
    )
    test(
      "gateway: caps a payment's options, its expired ones replaced oldest first",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const p = aPayment(partner.id, merchants[0]!.id)
        const q = aPayment(partner.id, merchants[0]!.id)
        yield* payments.insert(p)
        yield* payments.insert(q)
        const now = new Date(T0 + 100)
        const cap = { max: 10, now }
        const present = (o: PaymentOption) =>
          Effect.map(gateway.findOption(o.id), (found) => Option.isSome(found))
        const live = (n: number, payment = p) =>
          Array.from({ length: n }, () =>
            anOption(payment, { expiresAt: new Date(T0 + 1_000_000) })
          )
        // Three expired (one exactly now: expired too) and two live options.
        const expired = [T0 + 30, T0 + 10, T0 + 100].map((ms) =>
          anOption(p, { expiresAt: new Date(ms) })
        )
        expect(yield* gateway.insertOptions([...expired, ...live(2)], cap)).toBe("inserted")
        // Seven more: two over the cap, so the two oldest expired ones make room.
        const seven = live(7)
        expect(yield* gateway.insertOptions(seven, cap)).toBe("inserted")
        expect(yield* present(expired[1]!)).toBe(false)
        expect(yield* present(expired[0]!)).toBe(false)
        expect(yield* present(expired[2]!)).toBe(true)
        for (const o of seven) expect(yield* present(o)).toBe(true)
        // Two more: one expired option left, not room enough; nothing of the batch is stored.
        const two = live(2)
        expect(yield* gateway.insertOptions(two, cap)).toBe("full")
        for (const o of two) expect(yield* present(o)).toBe(false)
        expect(yield* present(expired[2]!)).toBe(true)
        // One fits, in place of the last expired one.
        const [one] = live(1)
        expect(yield* gateway.insertOptions([one!], cap)).toBe("inserted")
        expect(yield* present(expired[2]!)).toBe(false)
        // Another payment's options count on their own; a batch larger than the cap never fits.
        expect(yield* gateway.insertOptions(live(10, q), cap)).toBe("inserted")
        expect(yield* gateway.insertOptions(live(11), { max: 10, now: new Date(T0 + 2e6) })).toBe(
          "full"
        )
        // Without a cap (the contract's other tests), a batch goes in as it is.
        expect(yield* gateway.insertOptions(live(3))).toBe("inserted")
      })
    )

    test(
      "gateway: purges options expired before a time, never a processing payment's",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const m = merchants[0]!.id
        const open = aPayment(partner.id, m)
        const processing = aPayment(partner.id, m, { status: "processing" })
        const done = aPayment(partner.id, m, {
          status: "succeeded",
          finalAt: new Date(T0 + 50)
        })
        for (const p of [open, processing, done]) yield* payments.insert(p)
        const at = (p: Payment, ms: number) => anOption(p, { expiresAt: new Date(T0 + ms) })
        const old = [at(open, 10), at(open, 20), at(done, 30)]
        const kept = [at(open, 1000), at(processing, 10), at(open, 5000)]
        yield* gateway.insertOptions(old.slice(0, 2))
        yield* gateway.insertOptions(old.slice(2))
        yield* gateway.insertOptions(kept.slice(0, 1))
        yield* gateway.insertOptions(kept.slice(1, 2))
        yield* gateway.insertOptions(kept.slice(2))
        const cutoff = new Date(T0 + 1000)
        // In batches: at most `limit` a call, until none is left.
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 2, kept: 0 })
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 1, kept: 0 })
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 0, kept: 0 })
        for (const o of old) expect(Option.isNone(yield* gateway.findOption(o.id))).toBe(true)
        for (const o of kept) {
          expect(Option.getOrThrow(yield* gateway.findOption(o.id))).toEqual(o)
        }
      })
    )

    test(
      "gateway: keeps the option each payment was paid with as long as the payment, reading it once",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const m = merchants[0]!.id
        const succeeded = aPayment(partner.id, m)
        const failed = aPayment(partner.id, m)
        for (const p of [succeeded, failed]) yield* payments.insert(p)
        const at = (p: Payment, ms: number) => anOption(p, { expiresAt: new Date(T0 + ms) })
        // Oldest first: the paid-with one, two others; a deployed account's, one other.
        const paidWith = at(succeeded, 10)
        const others = [at(succeeded, 20), at(succeeded, 30)]
        const deployedWith = at(failed, 40)
        const otherOfFailed = at(failed, 50)
        yield* gateway.insertOptions([paidWith, ...others])
        yield* gateway.insertOptions([deployedWith, otherOfFailed])
        /** Collected (or deployed first) with `option`, then final as `change` says. */
        const payWith = (
          p: Payment,
          option: PaymentOption,
          kind: "collect" | "deploy",
          change: PaymentChange
        ) =>
          Effect.gen(function* () {
            yield* payments.transition(p.id, "requires_action", {
              status: "processing",
              at: new Date(T0 + 60),
              finalAt: null,
              tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
              enqueue: {
                id: `cjob_${uniqueBody(T0)}` as ChainJobId,
                paymentId: p.id,
                chainId: "eip155:8453" as Caip2,
                payload: { kind, optionId: option.id, signature: `0x${"aB".repeat(65)}` },
                runAt: new Date(T0 + 60),
                createdAt: new Date(T0 + 60)
              }
            })
            expect(Option.isSome(yield* payments.transition(p.id, "processing", change))).toBe(true)
          })
        yield* payWith(succeeded, paidWith, "collect", {
          status: "succeeded",
          at: new Date(T0 + 90),
          finalAt: new Date(T0 + 90),
          txId: "0xabc"
        })
        yield* payWith(failed, deployedWith, "deploy", {
          status: "failed",
          at: new Date(T0 + 90),
          finalAt: new Date(T0 + 90),
          failureCode: "account_deployment_failed"
        })
        const cutoff = new Date(T0 + 1000)
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 1, kept: 1 })
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 1, kept: 1 })
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 1, kept: 0 })
        expect(yield* gateway.purgeOptions(cutoff, 2)).toEqual({ deleted: 0, kept: 0 })
        // Kept as they were, and out of every later pass's reach, however late.
        for (const o of [paidWith, deployedWith]) {
          expect(Option.getOrThrow(yield* gateway.findOption(o.id))).toEqual(o)
        }
        expect(yield* gateway.purgeOptions(new Date(T0 + 1e10), 10)).toEqual({
          deleted: 0,
          kept: 0
        })
        for (const o of [...others, otherOfFailed]) {
          expect(Option.isNone(yield* gateway.findOption(o.id))).toBe(true)
        }
      })
    )

    test(
      "gateway: purges collected data of payments final (or expired unpaid) before a time",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const payments = yield* PaymentStore
        const gateway = yield* GatewayStore
        const m = merchants[0]!.id
        const account = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10
        const finalOld = aPayment(partner.id, m, {
          status: "succeeded",
          finalAt: new Date(T0 + 10)
        })
        const failedOld = aPayment(partner.id, m, { status: "failed", finalAt: new Date(T0 + 20) })
        const finalNew = aPayment(partner.id, m, {
          status: "succeeded",
          finalAt: new Date(T0 + 5000)
        })
        // Never paid: final at its expiry (the sweep may not have marked it yet).
        const unpaidOld = aPayment(partner.id, m, { expiresAt: new Date(T0 + 30) })
        const open = aPayment(partner.id, m, { expiresAt: new Date(T0 + 10_000_000) })
        const processing = aPayment(partner.id, m, { status: "processing" })
        const all = [finalOld, failedOld, finalNew, unpaidOld, open, processing]
        for (const p of all) {
          yield* payments.insert(p)
          yield* gateway.saveCollectedData({
            paymentId: p.id,
            account,
            data: { email: "buyer@example.com" },
            collectedAt: new Date(T0)
          })
        }
        const cutoff = new Date(T0 + 1000)
        expect(yield* gateway.purgeCollectedData(cutoff, 2)).toBe(2)
        expect(yield* gateway.purgeCollectedData(cutoff, 2)).toBe(1)
        expect(yield* gateway.purgeCollectedData(cutoff, 2)).toBe(0)
        for (const p of all) {
          const found = yield* gateway.findCollectedData(p.id, account)
          expect(Option.isSome(found), p.id).toBe([finalNew, open, processing].includes(p))
        }
      })
    )

    test(
      "sums statistics exactly over whole and partial UTC days, merchants, statuses and buyers",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const other = yield* setup
        const store = yield* PaymentStore
        const data = yield* statsDataset(partner.id, [merchants[0]!.id, merchants[1]!.id])
        // Another partner's payments never count, not even under a merchant filter naming them.
        const foreign = aPayment(other.partner.id, other.merchants[0]!.id, {
          at: D1 + 5,
          status: "succeeded",
          buyer: buyer("0x00000000000000000000000000000000000000f1")
        })
        yield* store.insert(foreign)

        const [m0, m1] = [merchants[0]!.id, merchants[1]!.id]
        const now = new Date(D1 + 10 * DAY_MS)
        const base: PaymentFilter = { partnerId: partner.id, now }
        const at = (ms: number) => new Date(ms)
        const ranges: ReadonlyArray<Pick<PaymentFilter, "from" | "before">> = [
          {},
          // Whole days only, then cut by a millisecond at either end, then inside one day.
          { from: at(D1), before: at(D1 + 2 * DAY_MS) },
          { from: at(D1 - 1), before: at(D1 + 2 * DAY_MS) },
          { from: at(D1 + 1), before: at(D1 + 2 * DAY_MS + 1) },
          { from: at(D1 + 1), before: at(D1 + 2 * DAY_MS - 1) },
          { from: at(D1 + 1), before: at(D1 + DAY_MS - 1) },
          { from: at(D1 + 12 * 3600_000), before: at(D1 + 36 * 3600_000) },
          { from: at(D1 + DAY_MS) },
          { from: at(D1 + DAY_MS + 1) },
          { before: at(D1 + DAY_MS) },
          { before: at(D1 + DAY_MS - 1) },
          { from: at(D1), before: at(D1) },
          { from: at(D1 + DAY_MS), before: at(D1) }
        ]
        const shapes: ReadonlyArray<Omit<PaymentFilter, "partnerId" | "now">> = [
          {},
          { merchantIds: [m0] },
          { merchantIds: [m1, m0] },
          { merchantIds: [m1, other.merchants[0]!.id] },
          { merchantIds: [other.merchants[0]!.id] },
          { merchantIds: [] },
          { statuses: ["succeeded"] },
          { statuses: ["processing", "succeeded"], merchantIds: [m1] },
          { statuses: ["failed", "expired", "processing"] },
          { statuses: [] },
          { assets: [USDC_BASE] },
          { networks: ["eip155:1" as Caip2], merchantIds: [m0] },
          { referenceId: "stat-1" }
        ]
        let checked = 0
        for (const shape of shapes) {
          for (const range of ranges) {
            const filter: PaymentFilter = { ...base, ...shape, ...range }
            const expected = computeStats([...data, foreign], filter)
            expect(yield* store.stats(filter), JSON.stringify(filter)).toEqual(expected)
            checked++
          }
        }
        expect(checked).toBe(shapes.length * ranges.length)
        // The data set says something: several units, 2^64 passed, a buyer on two chains.
        const all = computeStats(data, base)
        expect(all.revenue.length).toBeGreaterThanOrEqual(3)
        expect(all.revenue.some((r) => r.total > 2n ** 64n)).toBe(true)
        expect(all.customers).toBeLessThan(all.transactions)
        // A wrong day boundary moves a payment between whole days and an edge: these differ.
        const day1 = computeStats(data, { ...base, from: at(D1), before: at(D1 + DAY_MS) })
        const shifted = computeStats(data, {
          ...base,
          from: at(D1 - 1),
          before: at(D1 + DAY_MS - 1)
        })
        expect(day1).not.toEqual(shifted)
      })
    )

    test(
      "counts payments that succeed at the same time exactly once each",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const processing = Array.from({ length: 12 }, (_, i) =>
          aPayment(partner.id, merchants[i % 2]!.id, {
            at: D1 + 1000 + i,
            status: "processing",
            amount: { unit: { kind: "token", asset: BIG_TOKEN }, value: MAX_TOKEN - BigInt(i) },
            tokenAmount: { asset: BIG_TOKEN, value: MAX_TOKEN - BigInt(i) },
            buyer: buyer(`0x${(i % 3).toString(16).padStart(40, "c")}`)
          })
        )
        for (const p of processing) yield* store.insert(p)
        const at = new Date(D1 + 5000)
        const change: PaymentChange = { status: "succeeded", at, finalAt: at, txId: "0x1" }
        const results = yield* Effect.all(
          processing.map((p) => store.transition(p.id, "processing", change)),
          { concurrency: "unbounded" }
        )
        expect(results.every(Option.isSome)).toBe(true)
        // A second success of the same payment is refused, and counts nothing.
        expect(
          Option.isNone(yield* store.transition(processing[0]!.id, "processing", change))
        ).toBe(true)
        const succeeded = processing.map((p) => applyChange(p, change))
        for (const filter of [
          { partnerId: partner.id, now: at },
          { partnerId: partner.id, now: at, merchantIds: [merchants[1]!.id] },
          { partnerId: partner.id, now: at, from: new Date(D1), before: new Date(D1 + DAY_MS) }
        ] satisfies ReadonlyArray<PaymentFilter>) {
          expect(yield* store.stats(filter)).toEqual(computeStats(succeeded, filter))
        }
        expect((yield* store.stats({ partnerId: partner.id, now: at })).transactions).toBe(12)
      })
    )
    test(
      "searches references by case-insensitive substring, every character taken literally",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const statuses: ReadonlyArray<PaymentStatus> = ["succeeded", "failed", "requires_action"]
        const data = SEARCH_REFERENCES.flatMap((referenceId, i) =>
          [0, 1].map((copy) => {
            const status = statuses[(i + copy) % statuses.length]!
            return aPayment(partner.id, merchants[copy]!.id, {
              at: T0 + i * 60_000 + copy,
              referenceId,
              status,
              amount: { unit: USD, value: BigInt(100 * (i + 1) + copy) },
              tokenAmount: { asset: copy === 0 ? USDC_BASE : USDC_ETH, value: 1n },
              buyer:
                status === "requires_action"
                  ? null
                  : buyer(`0x${i.toString(16).padStart(40, "0")}`),
              finalAt: status === "succeeded" ? new Date(T0) : null
            })
          })
        )
        for (const p of data) yield* store.insert(p)
        // Another partner's payment with the same reference never shows.
        const other = yield* setup
        yield* store.insert(
          aPayment(other.partner.id, other.merchants[0]!.id, {
            referenceId: "ORDER-1001",
            status: "succeeded"
          })
        )
        const base: PaymentFilter = { partnerId: partner.id, now: new Date(T0 + 3600_000) }
        for (const needle of SEARCH_NEEDLES) {
          yield* expectListingAgrees(data, { ...base, referenceId: needle }, 5)
        }
        // Start, middle and end of one reference, in either case, find it.
        for (const needle of ["ORDER-", "order-", "DER-1", "1001-B", "-b"]) {
          const found = yield* store.list({
            filter: { ...base, referenceId: needle },
            sortBy: "date",
            direction: "asc",
            limit: 50
          })
          expect(found.map((p) => p.referenceId)).toContain("order-1001-b")
        }
        // Combined with every other filter.
        for (const filter of [
          { ...base, referenceId: "order", merchantIds: [merchants[1]!.id] },
          { ...base, referenceId: "order", statuses: ["succeeded", "expired"] },
          { ...base, referenceId: "ORDER", networks: ["eip155:1" as Caip2] },
          { ...base, referenceId: "x", assets: [USDC_BASE] },
          {
            ...base,
            referenceId: "o",
            from: new Date(T0 + 60_000),
            before: new Date(T0 + 5 * 60_000),
            merchantIds: [merchants[0]!.id, merchants[1]!.id]
          }
        ] satisfies ReadonlyArray<PaymentFilter>) {
          yield* expectListingAgrees(data, filter, 3)
        }
      })
    )

    test(
      "filters by network and token, alone and with merchants, statuses, times and references",
      Effect.gen(function* () {
        const { partner, merchants } = yield* setup
        const store = yield* PaymentStore
        const data = dataset(
          partner.id,
          merchants.map((m) => m.id)
        )
        for (const p of data) yield* store.insert(p)
        // A payment that gets its token later, through a transition, is found by it.
        const later = aPayment(partner.id, merchants[0]!.id, { at: T0 + 30 * 60_000 })
        yield* store.insert(later)
        const change: PaymentChange = {
          status: "processing",
          at: new Date(T0 + 31 * 60_000),
          finalAt: null,
          tokenAmount: { asset: USDC_ETH, value: 7n },
          buyer: buyer("0x00000000000000000000000000000000000000e1", "eip155:1")
        }
        expect(Option.isSome(yield* store.transition(later.id, "requires_action", change))).toBe(
          true
        )
        const all = [...data, applyChange(later, change)]
        const other = yield* setup
        yield* store.insert(
          aPayment(other.partner.id, other.merchants[0]!.id, {
            status: "succeeded",
            tokenAmount: { asset: USDC_BASE, value: 1n }
          })
        )
        const [m0, m1] = [merchants[0]!.id, merchants[1]!.id]
        const base: PaymentFilter = { partnerId: partner.id, now: new Date(T0 + 3600_000) }
        const window = { from: new Date(T0 + 2 * 60_000), before: new Date(T0 + 11 * 60_000) }
        for (const filter of [
          { ...base, networks: ["eip155:8453" as Caip2] },
          { ...base, networks: ["eip155:1" as Caip2, "eip155:8453" as Caip2] },
          { ...base, networks: ["eip155:42161" as Caip2] },
          { ...base, assets: [USDC_ETH] },
          { ...base, assets: [BIG_TOKEN, USDC_ETH] },
          { ...base, assets: [USDC_BASE], networks: ["eip155:1" as Caip2] },
          { ...base, assets: [USDC_BASE, USDC_ETH], networks: ["eip155:8453" as Caip2] },
          { ...base, networks: ["eip155:8453" as Caip2], merchantIds: [m1] },
          { ...base, assets: [USDC_BASE], merchantIds: [m0, m1], ...window },
          { ...base, networks: ["eip155:1" as Caip2], ...window },
          { ...base, networks: ["eip155:1" as Caip2], statuses: ["expired", "succeeded"] },
          { ...base, assets: [USDC_ETH], statuses: ["processing"] },
          { ...base, assets: [BIG_TOKEN], referenceId: "abc" },
          { ...base, networks: ["eip155:8453" as Caip2], from: new Date(T0 + 5 * 60_000) },
          { ...base, assets: [USDC_BASE], before: new Date(T0 + 5 * 60_000), merchantIds: [m0] }
        ] satisfies ReadonlyArray<PaymentFilter>) {
          yield* expectListingAgrees(all, filter)
        }
      })
    )
  })
