/**
 * The storage contract: one suite of rules that every implementation of the
 * storage ports must pass (in memory, SQLite, PostgreSQL). A store is correct
 * when this suite passes against it unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, type Layer, Option } from "effect"
import type { IdempotencyScope } from "../idempotency/Idempotency.js"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { Merchant, type MerchantId } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { Partner, type PartnerId } from "../partners/Partner.js"
import { PartnerStore } from "../partners/PartnerStore.js"
import type { CryptoSettlement, CryptoSettlementId } from "../settlements/Settlement.js"
import { SettlementStore } from "../settlements/SettlementStore.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { makeIdBody } from "../shared/Ids.js"

export type Stores = PartnerStore | MerchantStore | SettlementStore | IdempotencyStore

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0)
let clock = T0
/** Distinct, increasing times, so ids sort in creation order. */
const tick = () => {
  clock += 1000
  return clock
}

const partnerId = () => `ptnr_${makeIdBody(tick())}` as PartnerId
const merchantId = () => `mrch_${makeIdBody(tick())}` as MerchantId
const settlementId = () => `crypto_${makeIdBody(tick())}` as CryptoSettlementId

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42" as Caip19
const WALLET_A = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10
const WALLET_B = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10

const aPartner = (name = "Partner") =>
  new Partner({ id: partnerId(), name, apiVersion: "2026-02-18", createdAt: new Date(tick()) })

const storedKey = (partner: Partner, prefix = `pk_${makeIdBody(tick()).slice(0, 12)}_`) => ({
  prefix,
  hash: "ab".repeat(32),
  partnerId: partner.id,
  createdAt: partner.createdAt
})

const aMerchant = (partner: Partner, fields: Partial<Merchant> = {}) => {
  const at = new Date(tick())
  return new Merchant({
    id: merchantId(),
    partnerId: partner.id,
    name: "Acme Store",
    email: "billing@acme.store",
    iconUrl: null,
    status: "active",
    createdAt: at,
    updatedAt: at,
    deletedAt: null,
    ...fields
  })
}

const aSettlement = (
  merchant: Merchant,
  asset: Caip19 = USDC_BASE,
  destination: Caip10 = WALLET_A
): CryptoSettlement => {
  const at = new Date(tick())
  return {
    id: settlementId(),
    merchantId: merchant.id,
    asset,
    destination,
    createdAt: at,
    updatedAt: at
  }
}

/** A partner and one merchant of it, stored. */
const seed = Effect.gen(function* () {
  const partner = aPartner()
  yield* (yield* PartnerStore).insert(partner, storedKey(partner))
  const merchant = aMerchant(partner)
  yield* (yield* MerchantStore).insert(merchant)
  return { partner, merchant }
})

const scope = (
  key: string,
  partner = "ptnr_contract",
  route = "POST /v1/merchants"
): IdempotencyScope => ({
  partnerId: partner,
  route,
  key
})

/**
 * Registers the suite. `layer` must give a fresh, empty store each time it is
 * built: each test builds it once.
 */
export const storageContract = (name: string, layer: () => Layer.Layer<Stores, unknown>) =>
  describe(`storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, Stores>) =>
      it.effect(title, () => Effect.provide(body, layer()), 20_000)

    describe("partners", () => {
      test(
        "stores a partner with its key, found by the key's prefix",
        Effect.gen(function* () {
          const store = yield* PartnerStore
          const partner = aPartner("First")
          const key = storedKey(partner)
          yield* store.insert(partner, key)
          const found = Option.getOrThrow(yield* store.findByKeyPrefix(key.prefix))
          expect(found.partner).toEqual(partner)
          expect(found.key).toEqual(key)
          expect(Option.getOrThrow(yield* store.find(partner.id))).toEqual(partner)
          expect(Option.isNone(yield* store.findByKeyPrefix("pk_nothing_here_"))).toBe(true)
        })
      )

      test(
        "refuses a taken key prefix and stores nothing of that partner",
        Effect.gen(function* () {
          const store = yield* PartnerStore
          const first = aPartner("First")
          const key = storedKey(first)
          yield* store.insert(first, key)
          const second = aPartner("Second")
          const exit = yield* Effect.exit(store.insert(second, { ...key, partnerId: second.id }))
          expect(Exit.isFailure(exit)).toBe(true)
          expect(Option.isNone(yield* store.find(second.id))).toBe(true)
        })
      )

      test(
        "lists partners oldest first",
        Effect.gen(function* () {
          const store = yield* PartnerStore
          const a = aPartner("A")
          const b = aPartner("B")
          yield* store.insert(b, storedKey(b))
          yield* store.insert(a, storedKey(a))
          expect((yield* store.list).map((p) => p.name)).toEqual(["A", "B"])
        })
      )
    })

    describe("merchants", () => {
      test(
        "round-trips every field",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const store = yield* MerchantStore
          const merchant = aMerchant(partner, {
            name: "Ünïcode ☕ Store",
            email: null,
            iconUrl: "https://example.com/logo.png",
            status: "suspended"
          })
          yield* store.insert(merchant)
          expect(Option.getOrThrow(yield* store.find(merchant.id))).toEqual(merchant)
          expect(Option.isNone(yield* store.find(merchantId()))).toBe(true)
        })
      )

      test(
        "lists a partner's live merchants newest first, filtered, with keyset pages",
        Effect.gen(function* () {
          const { partner, merchant: first } = yield* seed
          const store = yield* MerchantStore
          const other = aPartner("Other")
          yield* (yield* PartnerStore).insert(other, storedKey(other))
          yield* store.insert(aMerchant(other, { name: "Acme elsewhere" }))
          const cafe = aMerchant(partner, { name: "Café Ünïcode" })
          const idle = aMerchant(partner, { name: "Idle Shop", status: "inactive" })
          const gone = aMerchant(partner, { name: "Acme Gone" })
          for (const m of [cafe, idle, gone]) yield* store.insert(m)
          yield* store.markDeleted(gone.id, new Date(tick()))

          const all = yield* store.list({ partnerId: partner.id, limit: 10 })
          expect(all.merchants.map((m) => m.id)).toEqual([idle.id, cafe.id, first.id])
          expect(all.totalCount).toBe(3)

          const page1 = yield* store.list({ partnerId: partner.id, limit: 2 })
          expect(page1.merchants.map((m) => m.id)).toEqual([idle.id, cafe.id])
          expect(page1.totalCount).toBe(3)
          const page2 = yield* store.list({ partnerId: partner.id, limit: 2, before: cafe.id })
          expect(page2.merchants.map((m) => m.id)).toEqual([first.id])
          expect(page2.totalCount).toBe(3)

          const inactive = yield* store.list({
            partnerId: partner.id,
            status: "inactive",
            limit: 10
          })
          expect(inactive.merchants.map((m) => m.id)).toEqual([idle.id])

          const byName = yield* store.list({ partnerId: partner.id, search: "CAFÉ ünï", limit: 10 })
          expect(byName.merchants.map((m) => m.id)).toEqual([cafe.id])
          const byId = yield* store.list({
            partnerId: partner.id,
            search: first.id.slice(-12).toUpperCase(),
            limit: 10
          })
          expect(byId.merchants.map((m) => m.id)).toEqual([first.id])
          const literal = yield* store.list({ partnerId: partner.id, search: "%", limit: 10 })
          expect(literal.totalCount).toBe(0)
          const underscore = yield* store.list({ partnerId: partner.id, search: "_", limit: 10 })
          expect(underscore.totalCount).toBe(3)
        })
      )

      test(
        "updates only the given fields, clears the logo with null, and not a deleted merchant",
        Effect.gen(function* () {
          const { merchant } = yield* seed
          const store = yield* MerchantStore
          const at = new Date(tick())
          const withLogo = Option.getOrThrow(
            yield* store.update(merchant.id, { iconUrl: "https://example.com/a.png" }, at)
          )
          expect(withLogo).toEqual(
            new Merchant({ ...merchant, iconUrl: "https://example.com/a.png", updatedAt: at })
          )
          const renamed = Option.getOrThrow(
            yield* store.update(merchant.id, { name: "Renamed", iconUrl: null }, at)
          )
          expect(renamed.name).toBe("Renamed")
          expect(renamed.iconUrl).toBeNull()
          expect(renamed.email).toBe(merchant.email)
          yield* store.markDeleted(merchant.id, at)
          expect(Option.isNone(yield* store.update(merchant.id, { name: "x" }, at))).toBe(true)
          expect(Option.isNone(yield* store.update(merchantId(), { name: "x" }, at))).toBe(true)
        })
      )

      test(
        "sets the status, and keeps the first deletion time",
        Effect.gen(function* () {
          const { merchant } = yield* seed
          const store = yield* MerchantStore
          const s = Option.getOrThrow(
            yield* store.setStatus(merchant.id, "inactive", new Date(tick()))
          )
          expect(s.status).toBe("inactive")
          const first = new Date(tick())
          yield* store.markDeleted(merchant.id, first)
          const again = Option.getOrThrow(yield* store.markDeleted(merchant.id, new Date(tick())))
          expect(again.deletedAt).toEqual(first)
          expect(Option.getOrThrow(yield* store.find(merchant.id)).deletedAt).toEqual(first)
          expect(Option.isNone(yield* store.markDeleted(merchantId(), first))).toBe(true)
        })
      )
    })

    describe("settlements", () => {
      test(
        "stores all entries and lists the live ones oldest first",
        Effect.gen(function* () {
          const { merchant } = yield* seed
          const store = yield* SettlementStore
          const usdc = aSettlement(merchant, USDC_BASE)
          const eurc = aSettlement(merchant, EURC_BASE, WALLET_B)
          yield* store.insertAll([usdc, eurc])
          expect(yield* store.listByMerchant(merchant.id)).toEqual([usdc, eurc])
        })
      )

      test(
        "refuses an asset the merchant already has, or twice in one batch, storing none",
        Effect.gen(function* () {
          const { merchant } = yield* seed
          const store = yield* SettlementStore
          yield* store.insertAll([aSettlement(merchant, USDC_BASE)])
          const clash = yield* Effect.flip(
            store.insertAll([aSettlement(merchant, EURC_BASE), aSettlement(merchant, USDC_BASE)])
          )
          expect(clash._tag).toBe("SettlementAssetConflict")
          expect(clash.asset).toBe(USDC_BASE)
          const twice = yield* Effect.flip(
            store.insertAll([aSettlement(merchant, EURC_BASE), aSettlement(merchant, EURC_BASE)])
          )
          expect(twice.asset).toBe(EURC_BASE)
          expect((yield* store.listByMerchant(merchant.id)).map((s) => s.asset)).toEqual([
            USDC_BASE
          ])
        })
      )

      test(
        "lets exactly one of concurrent registrations of an asset win",
        Effect.gen(function* () {
          const { merchant } = yield* seed
          const store = yield* SettlementStore
          const exits = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.exit(store.insertAll([aSettlement(merchant)]))),
            { concurrency: "unbounded" }
          )
          expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
          expect(yield* store.listByMerchant(merchant.id)).toHaveLength(1)
        })
      )

      test(
        "changes a destination, removes softly, and frees the asset for a new settlement",
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const store = yield* SettlementStore
          const usdc = aSettlement(merchant)
          yield* store.insertAll([usdc])
          const at = new Date(tick())
          const moved = Option.getOrThrow(
            yield* store.updateDestination(merchant.id, usdc.id, WALLET_B, at)
          )
          expect(moved).toEqual({ ...usdc, destination: WALLET_B, updatedAt: at })

          const stranger = aMerchant(partner)
          yield* (yield* MerchantStore).insert(stranger)
          expect(yield* store.remove(stranger.id, usdc.id, at)).toBe("not_found")
          expect(
            Option.isNone(yield* store.updateDestination(stranger.id, usdc.id, WALLET_A, at))
          ).toBe(true)

          expect(yield* store.remove(merchant.id, usdc.id, at)).toBe("removed")
          expect(yield* store.remove(merchant.id, usdc.id, at)).toBe("already_removed")
          expect(yield* store.remove(merchant.id, settlementId(), at)).toBe("not_found")
          expect(yield* store.listByMerchant(merchant.id)).toEqual([])
          expect(
            Option.isNone(yield* store.updateDestination(merchant.id, usdc.id, WALLET_A, at))
          ).toBe(true)
          yield* store.insertAll([aSettlement(merchant)])
          expect(yield* store.listByMerchant(merchant.id)).toHaveLength(1)
        })
      )
    })

    describe("idempotency", () => {
      const now = () => new Date(tick())
      const long_ago = new Date(0)

      test(
        "claims once, then reports in progress, mismatch, and replays the completed response",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-1")
          expect((yield* store.claim(s, "fp-a", now(), long_ago))._tag).toBe("Claimed")
          expect((yield* store.claim(s, "fp-a", now(), long_ago))._tag).toBe("InProgress")
          expect((yield* store.claim(s, "fp-b", now(), long_ago))._tag).toBe("Mismatch")
          yield* store.complete(s, { status: 201, body: '{"ok":true}' })
          expect(yield* store.claim(s, "fp-a", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: '{"ok":true}' }
          })
          expect((yield* store.claim(s, "fp-b", now(), long_ago))._tag).toBe("Mismatch")
          // Scopes are independent.
          expect(
            (yield* store.claim(scope("key-1", "ptnr_other"), "fp-b", now(), long_ago))._tag
          ).toBe("Claimed")
          expect(
            (yield* store.claim(
              scope("key-1", "ptnr_contract", "POST /other"),
              "fp-b",
              now(),
              long_ago
            ))._tag
          ).toBe("Claimed")
        })
      )

      test(
        "releases an unfinished claim but never a finished one",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-2")
          yield* store.claim(s, "fp", now(), long_ago)
          yield* store.release(s)
          expect((yield* store.claim(s, "other-fp", now(), long_ago))._tag).toBe("Claimed")
          yield* store.complete(s, { status: 200, body: "{}" })
          yield* store.release(s)
          expect((yield* store.claim(s, "other-fp", now(), long_ago))._tag).toBe("Replay")
        })
      )

      test(
        "lets a stale claim be taken over",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-3")
          const first = now()
          yield* store.claim(s, "fp", first, long_ago)
          expect((yield* store.claim(s, "fp", now(), first))._tag).toBe("InProgress")
          expect((yield* store.claim(s, "fp", now(), new Date(first.getTime() + 1)))._tag).toBe(
            "Claimed"
          )
        })
      )

      test(
        "grants exactly one of many concurrent claims",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const outcomes = yield* Effect.all(
            Array.from({ length: 16 }, () => store.claim(scope("key-4"), "fp", now(), long_ago)),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o._tag === "Claimed")).toHaveLength(1)
        })
      )

      test(
        "records the response in the same write as a merchant or settlements",
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const store = yield* IdempotencyStore
          const m = scope("key-5", partner.id)
          yield* store.claim(m, "fp", now(), long_ago)
          yield* (yield* MerchantStore).insert(aMerchant(partner), {
            scope: m,
            response: { status: 201, body: "merchant" }
          })
          expect(yield* store.claim(m, "fp", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: "merchant" }
          })
          const st = scope("key-6", partner.id, "POST /settlements")
          yield* store.claim(st, "fp", now(), long_ago)
          yield* (yield* SettlementStore).insertAll([aSettlement(merchant)], {
            scope: st,
            response: { status: 201, body: "settlements" }
          })
          expect((yield* store.claim(st, "fp", now(), long_ago))._tag).toBe("Replay")
        })
      )

      test(
        "purges finished keys older than the retention, keeping newer and unfinished ones",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const old = scope("old")
          const unfinished = scope("unfinished")
          yield* store.claim(old, "fp", new Date(T0 - 100_000), long_ago)
          yield* store.complete(old, { status: 200, body: "{}" })
          yield* store.claim(unfinished, "fp", new Date(T0 - 100_000), long_ago)
          const fresh = scope("fresh")
          yield* store.claim(fresh, "fp", now(), long_ago)
          yield* store.complete(fresh, { status: 200, body: "{}" })
          expect(yield* store.purge(new Date(T0 - 50_000))).toBe(1)
          expect((yield* store.claim(old, "other", now(), long_ago))._tag).toBe("Claimed")
          expect((yield* store.claim(fresh, "other", now(), long_ago))._tag).toBe("Mismatch")
          expect((yield* store.claim(unfinished, "other", now(), long_ago))._tag).toBe("Mismatch")
        })
      )
    })
  })
