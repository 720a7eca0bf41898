import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Duration, Effect, Fiber, Layer, Metric, Option, Schema, TestClock } from "effect"
import { partnerKey } from "../../test/KeyFixtures.js"
import { BUYER, purgeOption, purgePayment, USDC_BASE } from "../../test/PurgeFixture.js"
import { type AuditEntryId, apiKeyActor } from "../audit/AuditEntry.js"
import { AuditStore } from "../audit/AuditStore.js"
import { auditEntryOf } from "../audit/NewAuditEntry.js"
import { type EventId, EventStore, PayEvent } from "../events/Event.js"
import { GatewayConfig, GatewaySettings } from "../gateway/GatewayConfig.js"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { Partner, type PartnerId } from "../identity/Partner.js"
import { Merchant, type MerchantId } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import type { CryptoSettlementId } from "../merchants/Settlement.js"
import { SettlementStore } from "../merchants/SettlementStore.js"
import { PartnerStore } from "../partners/PartnerStore.js"
import type { ChainJobId } from "../payments/ChainJob.js"
import type { Payment } from "../payments/Payment.js"
import { GatewayStore } from "../payments/PaymentOption.js"
import { PaymentStore } from "../payments/PaymentStore.js"
import type { Caip2 } from "../shared/Caip.js"
import { WebhookAttempt, WebhookDeliveryStore } from "../webhooks/WebhookDelivery.js"
import {
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "../webhooks/WebhookEndpoint.js"
import { DEFAULT_PACING, nextBatch, type PurgePacing, purgeForever, purgePass } from "./Purge.js"
import { purgedRows } from "./PurgeMetrics.js"
import { RetentionConfig, RetentionSettings } from "./RetentionConfig.js"
import { RetentionStore } from "./RetentionStore.js"

const HOUR = 60 * 60_000
const DAY = 24 * HOUR
const account = BUYER
const USDC = USDC_BASE
/** No pause between batches: the tests' clock moves only when they move it. */
const NO_PAUSE: PurgePacing = {
  batch: 2,
  minBatch: 2,
  targetBatchMs: 1e9,
  pauseAfter: () => Duration.zero
}

const settings = (
  retention: Partial<typeof RetentionSettings.Encoded> = {},
  buyerDataRetentionDays?: number
) =>
  Layer.merge(
    Layer.succeed(RetentionConfig, Schema.decodeSync(RetentionSettings)(retention)),
    Layer.succeed(
      GatewayConfig,
      Schema.decodeSync(GatewaySettings)(
        buyerDataRetentionDays === undefined
          ? {}
          : { buyerDataRetentionMs: buyerDataRetentionDays * DAY }
      )
    )
  )

const partner = new Partner({
  id: "ptnr_00000000000000000001" as PartnerId,
  name: "P",
  apiVersion: "2026-02-18",
  createdAt: new Date(0)
})
const merchant = new Merchant({
  id: "mrch_00000000000000000001" as MerchantId,
  partnerId: partner.id,
  name: "M",
  email: null,
  iconUrl: null,
  status: "active",
  createdAt: new Date(0),
  updatedAt: new Date(0),
  deletedAt: null
})

const aPayment = (n: number): Payment => purgePayment(partner, merchant, n, 0, 300_000)
const anOption = purgeOption

/**
 * The records of one shop at time 0: a payment paid at 1 s with its first
 * option (its other two unchosen), buyer data collected for it, two finished
 * idempotency keys, three events (one delivered at 2 s, one whose delivery is
 * still pending, one no endpoint wanted) and an audit entry.
 */
const seeded = Effect.gen(function* () {
  yield* (yield* PartnerStore).insert(partner, partnerKey(partner))
  yield* (yield* MerchantStore).insert(merchant)
  const payments = yield* PaymentStore
  const gateway = yield* GatewayStore
  const paid = aPayment(1)
  yield* payments.insert(paid)
  const options = [anOption(paid, 1, 1000), anOption(paid, 2, 1000), anOption(paid, 3, 1000)]
  yield* gateway.insertOptions(options)
  yield* payments.transition(paid.id, "requires_action", {
    status: "processing",
    at: new Date(500),
    finalAt: null,
    tokenAmount: { asset: USDC, value: 1n },
    enqueue: {
      id: "cjob_00000000000000000001" as ChainJobId,
      paymentId: paid.id,
      chainId: "eip155:8453" as Caip2,
      payload: { kind: "collect", optionId: options[0]!.id, signature: "0x" },
      runAt: new Date(500),
      createdAt: new Date(500)
    }
  })
  yield* payments.transition(paid.id, "processing", {
    status: "succeeded",
    at: new Date(1000),
    finalAt: new Date(1000),
    txId: "0xabc"
  })
  yield* gateway.saveCollectedData({
    paymentId: paid.id,
    account,
    data: { email: "buyer@example.com" },
    collectedAt: new Date(400)
  })
  const keys = yield* IdempotencyStore
  for (const key of ["k1", "k2"]) {
    const scope = { partnerId: partner.id, route: "POST /v1/payments", key }
    yield* keys.claim(scope, "fp", key, new Date(0), new Date(0))
    yield* keys.complete({ scope, token: key, response: { status: 201, body: "{}" } })
  }
  const event = (n: number) =>
    new PayEvent({
      id: `evt_${String(n).padStart(20, "0")}` as EventId,
      partnerId: partner.id,
      type: "merchant.updated",
      createdAt: new Date(0),
      paymentId: null,
      merchantId: merchant.id,
      data: "{}"
    })
  const unwanted = event(1)
  yield* (yield* MerchantStore).update(merchant.id, { name: "M1" }, new Date(0), () => [unwanted])
  yield* (yield* WebhookEndpointStore).insert(
    new WebhookEndpoint({
      id: "whep_00000000000000000001" as WebhookEndpointId,
      partnerId: partner.id,
      url: "https://hooks.example/pay",
      events: null,
      merchantId: null,
      description: null,
      apiVersion: "2026-02-18",
      status: "enabled",
      disabledReason: null,
      secret: "sealed",
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: new Date(0),
      updatedAt: new Date(0),
      deletedAt: null
    })
  )
  const delivered = event(2)
  const waiting = event(3)
  yield* (yield* MerchantStore).update(merchant.id, { name: "M2" }, new Date(0), () => [
    delivered,
    waiting
  ])
  const deliveries = yield* WebhookDeliveryStore
  const claimed = yield* deliveries.claimDue(new Date(2000), 10, 60_000, 10)
  for (const c of claimed) {
    const ok = c.event.id === delivered.id
    yield* deliveries.record(c.lease, {
      attempt: new WebhookAttempt({
        attemptedAt: new Date(2000),
        durationMs: 5,
        responseStatus: ok ? 204 : 500,
        responseBody: null,
        error: ok ? null : "HTTP 500"
      }),
      state: ok ? "delivered" : "pending",
      nextAttemptAt: new Date(ok ? 2000 : 1000 * DAY),
      endpoint: { _tag: "Succeeded" }
    })
  }
  yield* (yield* SettlementStore).insertAll(
    [
      {
        id: "crypto_00000000000000000001" as CryptoSettlementId,
        merchantId: merchant.id,
        asset: USDC,
        destination: account,
        createdAt: new Date(0),
        updatedAt: new Date(0)
      }
    ],
    undefined,
    undefined,
    (rows) =>
      rows.map((s) =>
        auditEntryOf(
          { id: "aud_00000000000000000001" as AuditEntryId, at: new Date(0) },
          {
            partnerId: partner.id,
            actor: apiKeyActor("key_1"),
            action: "settlement.created",
            subject: s.id,
            before: null,
            after: { asset: s.asset }
          }
        )
      )
  )
  const events = yield* EventStore
  const has = <A>(found: Effect.Effect<Option.Option<A>>) => Effect.map(found, Option.isSome)
  return {
    option: (n: number) => has(gateway.findOption(options[n - 1]!.id)),
    data: has(gateway.findCollectedData(paid.id, account)),
    event: (e: PayEvent) => has(events.find(e.id)),
    events: { unwanted, delivered, waiting },
    delivery: (e: PayEvent) =>
      Effect.flatMap(WebhookDeliveryStore, (s) =>
        has(s.find("whep_00000000000000000001" as WebhookEndpointId, e.id))
      ),
    audit: Effect.map(
      Effect.flatMap(AuditStore, (s) => s.list({ limit: 10 })),
      (entries) => entries.length
    ),
    key: (key: string) =>
      Effect.map(
        keys.claim(
          { partnerId: partner.id, route: "POST /v1/payments", key },
          "other",
          "probe",
          new Date(0),
          new Date(0)
        ),
        (outcome) => outcome._tag === "Mismatch"
      )
  }
})

describe("the purge's pace", () => {
  it("halves a batch that took too long, grows one that was quick, within its bounds", () => {
    const at = (size: number, ms: number) => nextBatch(DEFAULT_PACING, size, ms)
    expect(at(1000, 25)).toBe(500)
    expect(at(150, 25)).toBe(100)
    expect(at(100, 500)).toBe(100)
    expect(at(500, 15)).toBe(500)
    expect(at(500, 5)).toBe(750)
    expect(at(900, 5)).toBe(1000)
    // A fifth of the time at most: four times a batch's length, never under 20 ms.
    expect(Duration.toMillis(DEFAULT_PACING.pauseAfter(2))).toBe(20)
    expect(Duration.toMillis(DEFAULT_PACING.pauseAfter(10))).toBe(40)
  })
})

describe("the purge", () => {
  it.effect(
    "deletes what is past each retention, in batches; keeps the option paid with, a pending delivery's event, the audit trail",
    () =>
      Effect.gen(function* () {
        const shop = yield* seeded
        // 100 days on: every retention but the buyer data's (365 here) has passed.
        yield* TestClock.setTime(100 * DAY)
        const { counts, complete } = yield* purgePass(NO_PAUSE)
        expect(complete).toBe(true)
        expect(counts).toEqual({
          collected_data: 0,
          payment_options: 2,
          idempotency_keys: 2,
          webhook_deliveries: 1,
          webhook_attempts: 1,
          events: 2,
          audit_log: 0
        })
        expect([yield* shop.option(1), yield* shop.option(2), yield* shop.option(3)]).toEqual([
          true,
          false,
          false
        ])
        expect(yield* shop.event(shop.events.unwanted)).toBe(false)
        expect(yield* shop.event(shop.events.delivered)).toBe(false)
        expect(yield* shop.delivery(shop.events.delivered)).toBe(false)
        expect(yield* shop.event(shop.events.waiting)).toBe(true)
        expect(yield* shop.delivery(shop.events.waiting)).toBe(true)
        expect(yield* shop.data).toBe(true)
        expect(yield* shop.audit).toBe(1)
        // Gone keys are new again: a different request is no longer refused.
        expect(yield* shop.key("k1")).toBe(false)
        // A second pass finds nothing; the paid-with option is never read again.
        const again = yield* purgePass(NO_PAUSE)
        expect(Object.values(again.counts).every((n) => n === 0)).toBe(true)
        expect(yield* shop.option(1)).toBe(true)
      }).pipe(Effect.provide(Layer.merge(MemoryStorage, settings({}, 365))))
  )

  it.effect("keeps each record until its own retention has passed", () =>
    Effect.gen(function* () {
      const shop = yield* seeded
      // Just inside every default retention (2 s: the latest record's time).
      const at = (ms: number) => TestClock.setTime(ms)
      yield* at(DAY + 999)
      expect((yield* purgePass(NO_PAUSE)).counts.payment_options).toBe(0)
      yield* at(DAY + 1001)
      expect((yield* purgePass(NO_PAUSE)).counts.payment_options).toBe(2)
      yield* at(7 * DAY)
      expect((yield* purgePass(NO_PAUSE)).counts.idempotency_keys).toBe(0)
      expect(yield* shop.key("k1")).toBe(true)
      yield* at(7 * DAY + 1)
      expect((yield* purgePass(NO_PAUSE)).counts.idempotency_keys).toBe(2)
      yield* at(30 * DAY + 2000)
      expect((yield* purgePass(NO_PAUSE)).counts.webhook_deliveries).toBe(0)
      yield* at(30 * DAY + 2001)
      const deliveries = (yield* purgePass(NO_PAUSE)).counts
      expect([deliveries.webhook_deliveries, deliveries.events]).toEqual([1, 0])
      yield* at(90 * DAY)
      expect((yield* purgePass(NO_PAUSE)).counts.events).toBe(0)
      yield* at(90 * DAY + 1)
      expect((yield* purgePass(NO_PAUSE)).counts.events).toBe(2)
      // Buyer data 90 days after its payment was final (at 1 s).
      yield* at(90 * DAY + 1000)
      expect((yield* purgePass(NO_PAUSE)).counts.collected_data).toBe(0)
      yield* at(90 * DAY + 1001)
      expect((yield* purgePass(NO_PAUSE)).counts.collected_data).toBe(1)
      expect(yield* shop.data).toBe(false)
      // The audit trail, never by default.
      yield* at(10_000 * DAY)
      expect((yield* purgePass(NO_PAUSE)).counts.audit_log).toBe(0)
      expect(yield* shop.audit).toBe(1)
    }).pipe(Effect.provide(Layer.merge(MemoryStorage, settings())))
  )

  it.effect("purges the audit trail once a retention is set for it", () =>
    Effect.gen(function* () {
      const shop = yield* seeded
      yield* TestClock.setTime(365 * DAY)
      expect((yield* purgePass(NO_PAUSE)).counts.audit_log).toBe(0)
      yield* TestClock.setTime(365 * DAY + 1)
      expect((yield* purgePass(NO_PAUSE)).counts.audit_log).toBe(1)
      expect(yield* shop.audit).toBe(0)
    }).pipe(Effect.provide(Layer.merge(MemoryStorage, settings({ auditTrailMs: 365 * DAY }))))
  )

  it.effect("counts what it deletes in pay_purged_rows_total, by table", () =>
    Effect.gen(function* () {
      yield* seeded
      const of = (table: string) =>
        Effect.map(Metric.value(Metric.tagged(purgedRows, "table", table)), (s) => s.count)
      const before = [yield* of("payment_options"), yield* of("events")]
      yield* TestClock.setTime(100 * DAY)
      yield* purgePass(NO_PAUSE)
      expect([yield* of("payment_options"), yield* of("events")]).toEqual([
        before[0]! + 2,
        before[1]! + 2
      ])
    }).pipe(Effect.provide(Layer.merge(MemoryStorage, settings())))
  )

  it.effect("stops a pass at its next batch once its lease is lost", () =>
    Effect.gen(function* () {
      yield* seeded
      yield* TestClock.setTime(100 * DAY)
      // Batches of one: the first batch of options runs, then the lease is gone.
      const result = yield* purgePass({ ...NO_PAUSE, batch: 1, minBatch: 1 }, Effect.succeed(false))
      expect(result.complete).toBe(false)
      expect(result.counts.payment_options + result.counts.collected_data).toBeLessThanOrEqual(1)
      expect(result.counts.events).toBe(0)
    }).pipe(Effect.provide(Layer.merge(MemoryStorage, settings({}, 1))))
  )

  /** Counts the passes run (each reads the events once, at least), wherever they run. */
  const countingPasses = (passes: { n: number }) =>
    Layer.effect(
      RetentionStore,
      Effect.map(RetentionStore, (store) =>
        RetentionStore.of({
          ...store,
          purgeEvents: (before, limit) =>
            Effect.suspend(() => {
              passes.n++
              return store.purgeEvents(before, limit)
            })
        })
      )
    ).pipe(Layer.provideMerge(MemoryStorage))

  it.effect(
    "runs one pass an interval whatever the number of instances; another takes over once the holder is gone",
    () => {
      const passes = { n: 0 }
      return Effect.gen(function* () {
        // One instance starts and takes the lease for the hour; two more start 10 minutes on.
        const first = yield* Effect.fork(purgeForever(NO_PAUSE))
        yield* TestClock.adjust(Duration.zero)
        expect(passes.n).toBe(1)
        yield* TestClock.adjust(Duration.minutes(10))
        const others = yield* Effect.all([
          Effect.fork(purgeForever(NO_PAUSE)),
          Effect.fork(purgeForever(NO_PAUSE))
        ])
        yield* TestClock.adjust(Duration.zero)
        expect(passes.n).toBe(1)
        // One pass an hour, not three.
        for (let hour = 1; hour <= 5; hour++) {
          yield* TestClock.adjust(Duration.hours(1))
          expect(passes.n, `hour ${hour}`).toBe(1 + hour)
        }
        // The holder dies (5 h 10 min): its lease runs out at 6 h, one of the others runs at
        // its next turn (6 h 10 min), and from then on one of them, once an hour.
        yield* Fiber.interrupt(first)
        yield* TestClock.adjust(Duration.minutes(59))
        expect(passes.n).toBe(6)
        yield* TestClock.adjust(Duration.minutes(1))
        expect(passes.n).toBe(7)
        for (let hour = 1; hour <= 3; hour++) {
          yield* TestClock.adjust(Duration.hours(1))
          expect(passes.n, `after the takeover, hour ${hour}`).toBe(7 + hour)
        }
        yield* Fiber.interruptAll(others)
      }).pipe(Effect.provide(Layer.merge(countingPasses(passes), settings())))
    }
  )
})
