/**
 * One purge pass over a database of thousands of rows on either side of
 * every cutoff (each store's test runs it on its own database): the rows are
 * counted before and after, by table, and the pass must have deleted exactly
 * those past their retention, in batches (several per table), keeping the
 * option a payment was paid with, pending deliveries and the events they
 * hold, unfinished idempotency claims, and the audit trail unless its
 * retention is set. A second pass deletes nothing. Bulk rows go in through
 * the store's own SQL (`insert`); the payments, their chosen option and the
 * buyer data through the ports.
 */
import { expect } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { GatewayConfig, GatewaySettings } from "../src/gateway/GatewayConfig.js"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import type { ChainJobId } from "../src/payments/ChainJob.js"
import type { Payment, PaymentId } from "../src/payments/Payment.js"
import { GatewayStore, type OptionId, type PaymentOption } from "../src/payments/PaymentOption.js"
import { PaymentStore } from "../src/payments/PaymentStore.js"
import { type PurgePassResult, purgePass } from "../src/retention/Purge.js"
import { RetentionConfig, RetentionSettings } from "../src/retention/RetentionConfig.js"
import type { Caip2, Caip10, Caip19 } from "../src/shared/Caip.js"
import { findCurrency } from "../src/shared/Currency.js"
import { makeIdBody } from "../src/shared/Ids.js"
import { partnerKey } from "./KeyFixtures.js"

/** A value of a bulk row: a `Date` is the store's time type (ms on SQLite). */
export type PurgeValue = string | number | Date | null

export interface PurgeDatabase {
  /** Inserts `rows` (each in `columns` order) into `table`, as fast as the store can. */
  readonly insert: (
    table: string,
    columns: ReadonlyArray<string>,
    rows: ReadonlyArray<ReadonlyArray<PurgeValue>>
  ) => Effect.Effect<void>
  readonly count: (table: string) => Effect.Effect<number>
}

const DAY = 86_400_000
export const PURGE_NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const ago = (ms: number) => new Date(PURGE_NOW - ms)
/** Just past a cutoff, and just inside it. */
const PAST = 60_000
const INSIDE = -60_000

/** How many rows of each kind the fixture writes. */
const N = {
  oldEvents: 2_500,
  /** Old events whose deliveries are over and old themselves: both go. */
  oldDelivered: 1_300,
  /** Old events with a delivery still pending (its first attempt failed): both stay. */
  oldPending: 120,
  recentEvents: 150,
  /** Recent events delivered recently: both stay. */
  recentDelivered: 80,
  oldKeys: 2_100,
  unfinishedKeys: 30,
  recentKeys: 70,
  oldOptions: 1_150,
  recentOptions: 60,
  oldAudit: 1_050,
  recentAudit: 12
} as const

const partnerAndMerchant = Effect.gen(function* () {
  const at = new Date(PURGE_NOW - 400 * DAY)
  const partner = new Partner({
    id: `ptnr_${makeIdBody(at.getTime())}` as PartnerId,
    name: "Purged",
    apiVersion: "2026-02-18",
    createdAt: at
  })
  yield* (yield* PartnerStore).insert(partner, partnerKey(partner))
  const merchant = new Merchant({
    id: `mrch_${makeIdBody(at.getTime())}` as MerchantId,
    partnerId: partner.id,
    name: "Acme",
    email: null,
    iconUrl: null,
    status: "active",
    createdAt: at,
    updatedAt: at,
    deletedAt: null
  })
  yield* (yield* MerchantStore).insert(merchant)
  return { partner, merchant }
})

/** A payment of the fixture's shape, its id ordered by `createdAt` (Purge.test.ts too). */
export const purgePayment = (
  partner: Partner,
  merchant: Merchant,
  n: number,
  createdAt: number,
  expiresAt: number
): Payment => ({
  id: `pay_${makeIdBody(createdAt).slice(0, 8)}${String(n).padStart(12, "0")}` as PaymentId,
  partnerId: partner.id,
  merchantId: merchant.id,
  referenceId: `ORDER-${n}`,
  amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 1050n },
  status: "requires_action",
  failureCode: null,
  cancelledReason: null,
  expiresAt: new Date(expiresAt),
  createdAt: new Date(createdAt),
  updatedAt: new Date(createdAt),
  finalAt: null,
  checkout: null,
  tokenAmount: null,
  buyer: null,
  transaction: null,
  txId: null,
  refund: null,
  fees: null,
  settlement: null,
  livemode: true
})

export const BUYER = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10
export const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19

/** An option of `payment`'s, quoted until `expiresAt` (Purge.test.ts too). */
export const purgeOption = (payment: Payment, n: number, expiresAt: number): PaymentOption => ({
  id: `opt_${String(n).padStart(20, "0")}` as OptionId,
  paymentId: payment.id,
  account: BUYER,
  asset: USDC_BASE,
  method: "eip3009",
  approvals: [],
  rate: null,
  authorization: {
    from: "0x00000000000000000000000000000000000000b0",
    to: "0x00000000000000000000000000000000000000c0",
    value: 10_500_000n,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(expiresAt / 1000)),
    nonce: `0x${n.toString(16).padStart(64, "0")}`
  },
  expiresAt: new Date(expiresAt),
  quoted: true,
  collectData: false,
  clientId: null,
  createdAt: new Date(expiresAt - 120_000)
})

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

/** The settings the pass runs with: the defaults, the audit trail's retention if given. */
export const purgeSettings = (auditTrailDays?: number) =>
  Layer.merge(
    Layer.succeed(
      RetentionConfig,
      Schema.decodeSync(RetentionSettings)(
        auditTrailDays === undefined ? {} : { auditTrailMs: auditTrailDays * DAY }
      )
    ),
    Layer.succeed(GatewayConfig, Schema.decodeSync(GatewaySettings)({}))
  )

/** Seeds, counts, runs a pass (and a second), counts again; checks every count. */
export const purgeFixture = (db: PurgeDatabase, options: { readonly auditTrailDays?: number }) =>
  Effect.gen(function* () {
    const { partner, merchant } = yield* partnerAndMerchant
    const payments = yield* PaymentStore
    const gateway = yield* GatewayStore

    // A payment paid a year ago with one of its options, and one still open.
    const paid = purgePayment(
      partner,
      merchant,
      1,
      PURGE_NOW - 365 * DAY,
      PURGE_NOW - 365 * DAY + 1e6
    )
    const open = purgePayment(partner, merchant, 2, PURGE_NOW - 60_000, PURGE_NOW + DAY)
    yield* payments.insert(paid)
    yield* payments.insert(open)
    const optionExpiry = PURGE_NOW - DAY - PAST
    const chosen = purgeOption(paid, 0, optionExpiry)
    const oldOptions = range(N.oldOptions).map((i) => purgeOption(paid, i + 1, optionExpiry - i))
    const recentOptions = range(N.recentOptions).map((i) =>
      purgeOption(open, 100_000 + i, PURGE_NOW - DAY - INSIDE)
    )
    yield* gateway.insertOptions([chosen])
    for (let i = 0; i < oldOptions.length; i += 200) {
      yield* gateway.insertOptions(oldOptions.slice(i, i + 200))
    }
    yield* gateway.insertOptions(recentOptions)
    const at = new Date(paid.createdAt.getTime() + 60_000)
    yield* payments.transition(paid.id, "requires_action", {
      status: "processing",
      at,
      finalAt: null,
      tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
      enqueue: {
        id: `cjob_${makeIdBody(at.getTime())}` as ChainJobId,
        paymentId: paid.id,
        chainId: "eip155:8453" as Caip2,
        payload: { kind: "collect", optionId: chosen.id, signature: `0x${"aB".repeat(65)}` },
        runAt: at,
        createdAt: at
      }
    })
    yield* payments.transition(paid.id, "processing", {
      status: "succeeded",
      at,
      finalAt: at,
      txId: "0xabc"
    })
    // Buyer data: the paid payment's (final a year ago), the open one's.
    for (const p of [paid, open]) {
      yield* gateway.saveCollectedData({
        paymentId: p.id,
        account: BUYER,
        data: { email: "buyer@example.com" },
        collectedAt: p.createdAt
      })
    }

    // Events, deliveries and their attempts, past and inside their cutoffs.
    const eventsCutoff = 90 * DAY
    const deliveriesCutoff = 30 * DAY
    const endpoint = "whep_00000000000000000001"
    const event = (id: string, createdAt: Date): ReadonlyArray<PurgeValue> => [
      id,
      partner.id,
      "merchant.updated",
      null,
      merchant.id,
      "{}",
      createdAt
    ]
    const eventIds = {
      old: range(N.oldEvents).map((i) => `evt_old_${i}`),
      delivered: range(N.oldDelivered).map((i) => `evt_delivered_${i}`),
      pending: range(N.oldPending).map((i) => `evt_pending_${i}`),
      recent: range(N.recentEvents).map((i) => `evt_recent_${i}`),
      recentDelivered: range(N.recentDelivered).map((i) => `evt_recent_delivered_${i}`)
    }
    const oldAt = (i: number) => ago(eventsCutoff + PAST + i)
    const recentAt = ago(eventsCutoff + INSIDE)
    yield* db.insert(
      "events",
      ["id", "partner_id", "type", "payment_id", "merchant_id", "data", "created_at"],
      [
        ...eventIds.old.map((id, i) => event(id, oldAt(i))),
        ...eventIds.delivered.map((id, i) => event(id, oldAt(i))),
        ...eventIds.pending.map((id, i) => event(id, oldAt(i))),
        ...eventIds.recent.map((id) => event(id, recentAt)),
        ...eventIds.recentDelivered.map((id) => event(id, recentAt))
      ]
    )
    const delivery = (
      eventId: string,
      seq: number,
      state: string,
      attempts: number,
      next: Date,
      created: Date
    ): ReadonlyArray<PurgeValue> => [endpoint, eventId, seq, null, state, attempts, next, created]
    yield* db.insert(
      "webhook_deliveries",
      [
        "endpoint_id",
        "event_id",
        "event_seq",
        "payment_id",
        "state",
        "attempts",
        "next_attempt_at",
        "created_at"
      ],
      [
        ...eventIds.delivered.map((id, i) =>
          delivery(id, i, i % 2 === 0 ? "delivered" : "failed", 2, oldAt(i), oldAt(i))
        ),
        ...eventIds.pending.map((id, i) =>
          delivery(id, i, "pending", 1, new Date(PURGE_NOW + DAY), oldAt(i))
        ),
        ...eventIds.recentDelivered.map((id, i) =>
          delivery(id, i, "delivered", 1, ago(deliveriesCutoff + INSIDE), recentAt)
        )
      ]
    )
    const attempt = (eventId: string, at: Date): ReadonlyArray<PurgeValue> => [
      endpoint,
      eventId,
      at,
      12,
      500,
      "oops",
      "HTTP 500"
    ]
    yield* db.insert(
      "webhook_attempts",
      [
        "endpoint_id",
        "event_id",
        "attempted_at",
        "duration_ms",
        "response_status",
        "response_body",
        "error"
      ],
      [
        ...eventIds.delivered.flatMap((id, i) => [attempt(id, oldAt(i)), attempt(id, oldAt(i))]),
        ...eventIds.pending.map((id, i) => attempt(id, oldAt(i))),
        ...eventIds.recentDelivered.map((id) => attempt(id, recentAt))
      ]
    )

    // Idempotency keys: finished past the 7 days, unfinished ones as old, finished recently.
    const key = (name: string, created: Date, finished: boolean): ReadonlyArray<PurgeValue> => [
      partner.id,
      "POST /v1/payments",
      name,
      "fp",
      "token",
      created,
      created,
      finished ? 201 : null,
      finished ? "{}" : null
    ]
    yield* db.insert(
      "idempotency_keys",
      [
        "partner_id",
        "route",
        "key",
        "fingerprint",
        "claim_token",
        "locked_at",
        "created_at",
        "response_status",
        "response_body"
      ],
      [
        ...range(N.oldKeys).map((i) => key(`old-${i}`, ago(7 * DAY + PAST + i), true)),
        ...range(N.unfinishedKeys).map((i) => key(`unfinished-${i}`, ago(7 * DAY + PAST), false)),
        ...range(N.recentKeys).map((i) => key(`recent-${i}`, ago(7 * DAY + INSIDE), true))
      ]
    )

    // The audit trail: entries older than a year and recent ones.
    const entry = (n: number, at: Date): ReadonlyArray<PurgeValue> => [
      `aud_${String(n).padStart(20, "0")}`,
      at,
      partner.id,
      "cli",
      null,
      "settlement.created",
      `crypto_${n}`,
      merchant.id,
      null,
      null
    ]
    yield* db.insert(
      "audit_log",
      [
        "id",
        "at",
        "partner_id",
        "actor_kind",
        "actor_key_id",
        "action",
        "subject",
        "merchant_id",
        "before_value",
        "after_value"
      ],
      [
        ...range(N.oldAudit).map((i) => entry(i, ago(400 * DAY + i))),
        ...range(N.recentAudit).map((i) => entry(100_000 + i, ago(DAY)))
      ]
    )

    const tables = [
      "events",
      "webhook_deliveries",
      "webhook_attempts",
      "idempotency_keys",
      "payment_options",
      "collected_data",
      "audit_log"
    ] as const
    const countAll = Effect.all(
      Object.fromEntries(tables.map((t) => [t, db.count(t)])) as Record<
        (typeof tables)[number],
        Effect.Effect<number>
      >
    )
    const before = yield* countAll
    const auditPurged = options.auditTrailDays === undefined ? 0 : N.oldAudit
    const expectedDeleted = {
      collected_data: 1,
      payment_options: N.oldOptions,
      idempotency_keys: N.oldKeys,
      webhook_deliveries: N.oldDelivered,
      webhook_attempts: 2 * N.oldDelivered,
      events: N.oldEvents + N.oldDelivered,
      audit_log: auditPurged
    }
    expect(before).toEqual({
      events: N.oldEvents + N.oldDelivered + N.oldPending + N.recentEvents + N.recentDelivered,
      webhook_deliveries: N.oldDelivered + N.oldPending + N.recentDelivered,
      webhook_attempts: 2 * N.oldDelivered + N.oldPending + N.recentDelivered,
      idempotency_keys: N.oldKeys + N.unfinishedKeys + N.recentKeys,
      payment_options: 1 + N.oldOptions + N.recentOptions,
      collected_data: 2,
      audit_log: N.oldAudit + N.recentAudit
    })

    // Batches of 500 (every table takes several), no pause between them.
    const pacing = {
      batch: 500,
      minBatch: 500,
      targetBatchMs: 1e9,
      pauseAfter: () => Duration.zero
    }
    const run = purgePass(pacing).pipe(Effect.provide(purgeSettings(options.auditTrailDays)))
    const first: PurgePassResult = yield* run
    expect(first).toEqual({ counts: expectedDeleted, complete: true })
    const after = yield* countAll
    for (const table of tables) {
      expect(after[table], table).toBe(before[table] - expectedDeleted[table])
    }
    // What is kept is what should be: the chosen option, the pending deliveries' events.
    expect(Option.isSome(yield* gateway.findOption(chosen.id))).toBe(true)
    expect(Option.isSome(yield* gateway.findCollectedData(open.id, BUYER))).toBe(true)
    expect(Option.isNone(yield* gateway.findCollectedData(paid.id, BUYER))).toBe(true)
    const second = yield* run
    expect(Object.values(second.counts).every((n) => n === 0)).toBe(true)
    expect(yield* countAll).toEqual(after)
  })
