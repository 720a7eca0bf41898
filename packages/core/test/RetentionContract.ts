/**
 * The purge's storage contract (core retention/RetentionStore.ts): each purge
 * deletes only rows past its cutoff, at most a batch a call until none is
 * left, and never what it must keep (a pending delivery, an event a delivery
 * still holds); every attempt goes with its delivery; one holder at a time
 * has the purge's lease. Rows are counted before and after. Run by each
 * storage package beside the storage contract. (Options, buyer data and
 * idempotency keys purge through their own stores: the payment and storage
 * contracts.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { type AuditEntryId, apiKeyActor } from "../src/audit/AuditEntry.js"
import { AuditStore } from "../src/audit/AuditStore.js"
import { auditEntryOf } from "../src/audit/NewAuditEntry.js"
import { type EventId, EventStore, PayEvent } from "../src/events/Event.js"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import type { CryptoSettlement, CryptoSettlementId } from "../src/merchants/Settlement.js"
import { SettlementStore } from "../src/merchants/SettlementStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import { RetentionStore } from "../src/retention/RetentionStore.js"
import type { Caip10, Caip19 } from "../src/shared/Caip.js"
import { makeIdBody } from "../src/shared/Ids.js"
import {
  type AttemptOutcome,
  WebhookAttempt,
  WebhookDeliveryStore
} from "../src/webhooks/WebhookDelivery.js"
import {
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "../src/webhooks/WebhookEndpoint.js"
import { partnerKey } from "./KeyFixtures.js"

export type RetentionStores =
  | RetentionStore
  | PartnerStore
  | MerchantStore
  | SettlementStore
  | AuditStore
  | EventStore
  | WebhookEndpointStore
  | WebhookDeliveryStore

const T0 = Date.UTC(2026, 3, 1, 8, 0, 0)
let clock = T0
/** Distinct, increasing times (ids sort in creation order). */
const tick = () => {
  clock += 1000
  return clock
}
const LEASE_MS = 60_000

/** A partner, a merchant of it, an endpoint that wants every event (unless `endpoint` is false). */
const seed = (endpoint = true) =>
  Effect.gen(function* () {
    const at = new Date(tick())
    const partner = new Partner({
      id: `ptnr_${makeIdBody(tick())}` as PartnerId,
      name: "Purged",
      apiVersion: "2026-02-18",
      createdAt: at
    })
    yield* (yield* PartnerStore).insert(partner, partnerKey(partner))
    const merchant = new Merchant({
      id: `mrch_${makeIdBody(tick())}` as MerchantId,
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
    const addEndpoint = Effect.gen(function* () {
      const made = new WebhookEndpoint({
        id: `whep_${makeIdBody(tick())}` as WebhookEndpointId,
        partnerId: partner.id,
        url: "https://hooks.shop.example/pay",
        events: null,
        merchantId: null,
        description: null,
        apiVersion: "2026-02-18",
        status: "enabled",
        disabledReason: null,
        secret: "v1.sealed-secret",
        previousSecret: null,
        previousSecretExpiresAt: null,
        createdAt: new Date(tick()),
        updatedAt: new Date(tick()),
        deletedAt: null
      })
      yield* (yield* WebhookEndpointStore).insert(made)
      return made
    })
    /** An event written with a merchant change at `at` (queued to the endpoints there are). */
    const write = (at: number) =>
      Effect.gen(function* () {
        const event = new PayEvent({
          id: `evt_${makeIdBody(tick())}` as EventId,
          partnerId: partner.id,
          type: "merchant.updated",
          createdAt: new Date(at),
          paymentId: null,
          merchantId: merchant.id,
          data: "{}"
        })
        yield* (yield* MerchantStore).update(
          merchant.id,
          { name: `M ${tick()}` },
          new Date(at),
          () => [event]
        )
        return event
      })
    const made = endpoint ? yield* addEndpoint : undefined
    return { partner, merchant, endpoint: made, addEndpoint, write }
  })

const outcome = (state: AttemptOutcome["state"], at: number, next = at): AttemptOutcome => ({
  attempt: new WebhookAttempt({
    attemptedAt: new Date(at),
    durationMs: 12,
    responseStatus: state === "delivered" ? 204 : 500,
    responseBody: null,
    error: state === "delivered" ? null : "HTTP 500"
  }),
  state,
  nextAttemptAt: new Date(next),
  endpoint:
    state === "delivered"
      ? { _tag: "Succeeded" }
      : { _tag: "Failed", disableIfFailingSince: new Date(0), reason: "never" }
})

/** Claims the delivery of `event` (due at `at`) and records `result` for it. */
const attempt = (event: PayEvent, at: number, result: AttemptOutcome) =>
  Effect.gen(function* () {
    const store = yield* WebhookDeliveryStore
    const claimed = yield* store.claimDue(new Date(at), 100, LEASE_MS, 100)
    const mine = claimed.find((c) => c.event.id === event.id)
    if (mine === undefined) throw new Error(`the delivery of ${event.id} was not due at ${at}`)
    for (const other of claimed) {
      if (other !== mine) yield* store.release(other.lease, new Date(at))
    }
    yield* store.record(mine.lease, result)
  })

/**
 * Registers the suite. `layer` must give a fresh, empty store each time it is
 * built: each test builds it once.
 */
export const retentionStorageContract = (
  name: string,
  layer: () => Layer.Layer<RetentionStores, unknown>
) =>
  describe(`retention storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, RetentionStores>) =>
      it.effect(title, () => Effect.provide(body, layer()), 30_000)

    test(
      "deletes finished deliveries whose last attempt is past the cutoff, in batches, each with every attempt; never a pending one",
      Effect.gen(function* () {
        const { endpoint, write } = yield* seed()
        const deliveries = yield* WebhookDeliveryStore
        const store = yield* RetentionStore
        const base = tick()
        const [delivered, failed, recent, pending] = [
          yield* write(base + 1),
          yield* write(base + 2),
          yield* write(base + 3),
          yield* write(base + 4)
        ] as const
        // Delivered at +10; failed for good at +30 after one retry; delivered late (+5000);
        // still pending (a retry due at +1,000,000), its first attempt long ago.
        yield* attempt(delivered, base + 10, outcome("delivered", base + 10))
        yield* attempt(failed, base + 20, outcome("pending", base + 20, base + 30))
        yield* attempt(failed, base + 30, outcome("failed", base + 30))
        yield* attempt(pending, base + 40, outcome("pending", base + 40, base + 1_000_000))
        yield* attempt(recent, base + 5000, outcome("delivered", base + 5000))
        const attemptsOf = (event: PayEvent) =>
          Effect.map(deliveries.find(endpoint!.id, event.id), (found) =>
            Option.match(found, { onNone: () => -1, onSome: (r) => r.attempts.length })
          )
        expect([
          yield* attemptsOf(delivered),
          yield* attemptsOf(failed),
          yield* attemptsOf(recent),
          yield* attemptsOf(pending)
        ]).toEqual([1, 2, 1, 1])
        const cutoff = new Date(base + 1000)
        const batches = [
          yield* store.purgeWebhookDeliveries(cutoff, 1),
          yield* store.purgeWebhookDeliveries(cutoff, 1),
          yield* store.purgeWebhookDeliveries(cutoff, 1)
        ]
        expect(batches.map((b) => b.deliveries)).toEqual([1, 1, 0])
        // Every attempt of the two deleted, none of the others.
        expect(batches.reduce((sum, b) => sum + b.attempts, 0)).toBe(3)
        expect([
          yield* attemptsOf(delivered),
          yield* attemptsOf(failed),
          yield* attemptsOf(recent),
          yield* attemptsOf(pending)
        ]).toEqual([-1, -1, 1, 1])
        // However late the cutoff, the pending one stays.
        expect(yield* store.purgeWebhookDeliveries(new Date(base + 1e9), 10)).toEqual({
          deliveries: 1,
          attempts: 1
        })
        expect(yield* attemptsOf(pending)).toBe(1)
        const listed = yield* deliveries.list({ endpointId: endpoint!.id, limit: 10 })
        expect(listed.map((r) => [r.delivery.eventId, r.delivery.state])).toEqual([
          [pending.id, "pending"]
        ])
      })
    )

    test(
      "deletes events written before the cutoff, oldest first, in batches; never one a delivery still holds",
      Effect.gen(function* () {
        const { addEndpoint, write, partner } = yield* seed(false)
        const events = yield* EventStore
        const store = yield* RetentionStore
        const base = tick()
        // Three old events no endpoint wanted, then an endpoint: two old events queued to it.
        const unwanted = [yield* write(base + 1), yield* write(base + 2), yield* write(base + 3)]
        const endpoint = yield* addEndpoint
        const waiting = yield* write(base + 4)
        const sent = yield* write(base + 5)
        const fresh = yield* write(base + 5000)
        yield* attempt(sent, base + 10, outcome("delivered", base + 10))
        const present = (e: PayEvent) => Effect.map(events.find(e.id), Option.isSome)
        const cutoff = new Date(base + 1000)
        expect(yield* store.purgeEvents(cutoff, 2)).toBe(2)
        expect(yield* store.purgeEvents(cutoff, 2)).toBe(1)
        expect(yield* store.purgeEvents(cutoff, 2)).toBe(0)
        for (const e of unwanted) expect(yield* present(e)).toBe(false)
        for (const e of [waiting, sent, fresh]) expect(yield* present(e)).toBe(true)
        // Once the sent one's delivery is purged, its event goes; the waiting one stays.
        yield* store.purgeWebhookDeliveries(cutoff, 10)
        expect(yield* store.purgeEvents(cutoff, 10)).toBe(1)
        expect(yield* present(sent)).toBe(false)
        expect(yield* present(waiting)).toBe(true)
        const listed = yield* events.list({ partnerId: partner.id, limit: 10 })
        expect(listed.map((e) => e.id)).toEqual([fresh.id, waiting.id])
        // The waiting delivery still reads its event when it is claimed.
        const [claimed] = yield* (yield* WebhookDeliveryStore).claimDue(
          new Date(base + 10_000),
          10,
          LEASE_MS,
          10
        )
        expect(claimed?.event).toEqual(waiting)
        expect(claimed?.endpoint.id).toBe(endpoint.id)
      })
    )

    test(
      "deletes audit entries made before the cutoff, oldest first, in batches",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed(false)
        const settlements = yield* SettlementStore
        const audit = yield* AuditStore
        const store = yield* RetentionStore
        const base = tick()
        const settlement = (n: number): CryptoSettlement => ({
          id: `crypto_${makeIdBody(tick())}` as CryptoSettlementId,
          merchantId: merchant.id,
          asset: `eip155:8453/erc20:0x${n.toString(16).padStart(40, "0")}` as Caip19,
          destination: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
          createdAt: new Date(base),
          updatedAt: new Date(base)
        })
        // Entries at +1, +2, +3 and +5000.
        for (const at of [1, 2, 3, 5000]) {
          yield* settlements.insertAll([settlement(at)], undefined, undefined, (rows) =>
            rows.map((s) =>
              auditEntryOf(
                { id: `aud_${makeIdBody(tick())}` as AuditEntryId, at: new Date(base + at) },
                {
                  partnerId: partner.id,
                  actor: apiKeyActor("key_contract"),
                  action: "settlement.created",
                  subject: s.id,
                  merchantId: s.merchantId,
                  before: null,
                  after: { asset: s.asset }
                }
              )
            )
          )
        }
        const cutoff = new Date(base + 1000)
        expect(yield* store.purgeAuditTrail(cutoff, 2)).toBe(2)
        expect(yield* store.purgeAuditTrail(cutoff, 2)).toBe(1)
        expect(yield* store.purgeAuditTrail(cutoff, 2)).toBe(0)
        const left = yield* audit.list({ partnerId: partner.id, limit: 10 })
        expect(left.map((e) => e.at.getTime())).toEqual([base + 5000])
      })
    )

    test(
      "gives a lease to one holder at a time: its own to extend, another's once it ran out",
      Effect.gen(function* () {
        const store = yield* RetentionStore
        const at = (ms: number) => new Date(T0 + ms)
        expect(yield* store.takeLease("purge", "a", at(0), at(1000))).toBe(true)
        expect(yield* store.takeLease("purge", "b", at(500), at(1500))).toBe(false)
        // Its holder takes it again at will; another name is another lease.
        expect(yield* store.takeLease("purge", "a", at(600), at(2000))).toBe(true)
        expect(yield* store.takeLease("other", "b", at(600), at(2000))).toBe(true)
        expect(yield* store.extendLease("purge", "b", at(5000))).toBe(false)
        expect(yield* store.extendLease("purge", "a", at(3000))).toBe(true)
        expect(yield* store.takeLease("purge", "b", at(2999), at(9000))).toBe(false)
        // Ran out (its end at or before now): the next one takes it, and the first lost it.
        expect(yield* store.takeLease("purge", "b", at(3000), at(9000))).toBe(true)
        expect(yield* store.extendLease("purge", "a", at(10_000))).toBe(false)
        expect(yield* store.takeLease("purge", "a", at(8999), at(10_000))).toBe(false)
        // Many at once for a lapsed lease: exactly one wins.
        const winners = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) =>
            store.takeLease("purge", `racer-${i}`, at(9000), at(20_000))
          ),
          { concurrency: "unbounded" }
        )
        expect(winners.filter(Boolean)).toHaveLength(1)
      })
    )
  })
