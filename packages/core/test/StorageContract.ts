/**
 * The storage contract: one suite of rules that every implementation of the
 * storage ports must pass (in memory, SQLite, PostgreSQL). A store is correct
 * when this suite passes against it unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer, Option } from "effect"
import { WalletApp, type WalletAppId } from "../src/apps/WalletApp.js"
import { WalletAppStore } from "../src/apps/WalletAppStore.js"
import { type EventId, EventStore, type EventType, PayEvent } from "../src/events/Event.js"
import type { IdempotencyScope } from "../src/idempotency/IdempotencyStore.js"
import { IdempotencyClaimLost, IdempotencyStore } from "../src/idempotency/IdempotencyStore.js"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import type { ApiKeyId, KeyOwner, KeyRecord } from "../src/keys/KeyRecord.js"
import { KeyStore } from "../src/keys/KeyStore.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import type { CryptoSettlement, CryptoSettlementId } from "../src/merchants/Settlement.js"
import { SettlementStore } from "../src/merchants/SettlementStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import type { Caip10, Caip19 } from "../src/shared/Caip.js"
import { makeIdBody } from "../src/shared/Ids.js"
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  WebhookAttempt,
  WebhookDeliveryStore
} from "../src/webhooks/WebhookDelivery.js"
import {
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "../src/webhooks/WebhookEndpoint.js"
import { aKeyRecord } from "./KeyFixtures.js"

export type Stores =
  | PartnerStore
  | KeyStore
  | EventStore
  | WebhookEndpointStore
  | WebhookDeliveryStore
  | MerchantStore
  | SettlementStore
  | IdempotencyStore
  | WalletAppStore

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0)
let clock = T0
/** Distinct, increasing times, so ids sort in creation order. */
const tick = () => {
  clock += 1000
  return clock
}

const partnerId = () => `ptnr_${makeIdBody(tick())}` as PartnerId
const merchantId = () => `mrch_${makeIdBody(tick())}` as MerchantId
const walletAppId = () => `app_${makeIdBody(tick())}` as WalletAppId
const eventId = () => `evt_${makeIdBody(tick())}` as EventId
const settlementId = () => `crypto_${makeIdBody(tick())}` as CryptoSettlementId

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42" as Caip19
const WALLET_A = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10
const WALLET_B = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10

const aPartner = (name = "Partner") =>
  new Partner({ id: partnerId(), name, apiVersion: "2026-02-18", createdAt: new Date(tick()) })

const storedKey = (partner: Partner, fields: Partial<KeyRecord> = {}) =>
  aKeyRecord({ kind: "partner", id: partner.id }, partner.createdAt, fields)

const aWalletApp = (name = "Wallet", iconUrl: string | null = null) => {
  const createdAt = new Date(tick())
  return new WalletApp({
    id: walletAppId(),
    name,
    iconUrl,
    createdAt,
    status: "active",
    lastUsedAt: null
  })
}

const appKey = (app: WalletApp, fields: Partial<KeyRecord> = {}) =>
  aKeyRecord({ kind: "wallet_app", id: app.id }, app.createdAt, fields)

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

/** The defect a write died of (a lost idempotency claim), or undefined. */
const lostClaim = <A, E, R>(write: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(write), (exit) =>
    Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
  )

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
        "stores a partner with its first key",
        Effect.gen(function* () {
          const store = yield* PartnerStore
          const partner = aPartner("First")
          const key = storedKey(partner, { name: "first" })
          yield* store.insert(partner, key)
          expect(Option.getOrThrow(yield* store.find(partner.id))).toEqual(partner)
          const keys = yield* KeyStore
          expect(Option.getOrThrow(yield* keys.findByLookupId(key.lookupId!))).toEqual(key)
          expect(Option.getOrThrow(yield* keys.findByHash(key.hash))).toEqual(key)
          expect(Option.isNone(yield* keys.findByLookupId("nothingHere0"))).toBe(true)
        })
      )

      test(
        "refuses a taken lookup id or hash and stores nothing of that partner",
        Effect.gen(function* () {
          const store = yield* PartnerStore
          const first = aPartner("First")
          const key = storedKey(first)
          yield* store.insert(first, key)
          const second = aPartner("Second")
          const sameLookup = storedKey(second, { lookupId: key.lookupId })
          expect((yield* Effect.flip(store.insert(second, sameLookup)))._tag).toBe(
            "ApiKeyLookupTaken"
          )
          const sameHash = storedKey(second, { hash: key.hash })
          expect((yield* Effect.flip(store.insert(second, sameHash)))._tag).toBe(
            "ApiKeyLookupTaken"
          )
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

    describe("keys", () => {
      const ownerOf = (partner: Partner): KeyOwner => ({ kind: "partner", id: partner.id })
      const later = (key: KeyRecord, ms: number) => new Date(key.createdAt.getTime() + ms)

      test(
        "stores every field of a key; a key of the operator's choosing has no lookup id",
        Effect.gen(function* () {
          const partner = aPartner()
          const first = storedKey(partner)
          yield* (yield* PartnerStore).insert(partner, first)
          const keys = yield* KeyStore
          const full = storedKey(partner, {
            name: "CI ☕",
            createdAt: new Date(tick()),
            expiresAt: new Date(tick() + 86_400_000),
            lastUsedAt: new Date(tick())
          })
          const chosen = storedKey(partner, { lookupId: null, createdAt: new Date(tick()) })
          yield* keys.insert(full)
          yield* keys.insert(chosen)
          expect(Option.getOrThrow(yield* keys.find(ownerOf(partner), full.id))).toEqual(full)
          expect(Option.getOrThrow(yield* keys.findByHash(chosen.hash))).toEqual(chosen)
          expect((yield* keys.list(ownerOf(partner))).map((k) => k.id)).toEqual([
            chosen.id,
            full.id,
            first.id
          ])
          // Another partner sees none of them.
          const other: KeyOwner = { kind: "partner", id: partnerId() }
          expect(Option.isNone(yield* keys.find(other, full.id))).toBe(true)
          expect(yield* keys.list(other)).toEqual([])
          const asApp: KeyOwner = { kind: "wallet_app", id: partner.id }
          expect(Option.isNone(yield* keys.find(asApp, full.id))).toBe(true)
        })
      )

      test(
        "keeps each key's scopes, and a rotation's replacement its own",
        Effect.gen(function* () {
          const partner = aPartner()
          const first = storedKey(partner)
          yield* (yield* PartnerStore).insert(partner, first)
          const keys = yield* KeyStore
          const owner = ownerOf(partner)
          const readOnly = storedKey(partner, { createdAt: new Date(tick()), scopes: ["read"] })
          const some = storedKey(partner, {
            createdAt: new Date(tick()),
            scopes: ["payments", "refunds", "keys"]
          })
          yield* keys.insert(readOnly)
          yield* keys.insert(some)
          expect(Option.getOrThrow(yield* keys.find(owner, readOnly.id)).scopes).toEqual(["read"])
          expect(Option.getOrThrow(yield* keys.findByHash(some.hash)).scopes).toEqual([
            "payments",
            "refunds",
            "keys"
          ])
          expect(Option.getOrThrow(yield* keys.find(owner, first.id)).scopes).toEqual([
            "read",
            "payments",
            "merchants",
            "webhooks",
            "refunds",
            "keys"
          ])
          const replacement = storedKey(partner, {
            createdAt: new Date(tick()),
            scopes: ["payments", "refunds", "keys"]
          })
          const at = replacement.createdAt
          const rotated = yield* keys.rotate(
            owner,
            some.id,
            replacement,
            later(replacement, 1000),
            at
          )
          expect(rotated._tag).toBe("Rotated")
          expect(Option.getOrThrow(yield* keys.find(owner, replacement.id)).scopes).toEqual([
            "payments",
            "refunds",
            "keys"
          ])
          expect(Option.getOrThrow(yield* keys.find(owner, some.id)).scopes).toEqual(some.scopes)
        })
      )

      test(
        "revokes a key once; with keepOneActive, never the owner's last active one",
        Effect.gen(function* () {
          const partner = aPartner()
          const a = storedKey(partner)
          yield* (yield* PartnerStore).insert(partner, a)
          const keys = yield* KeyStore
          const owner = ownerOf(partner)
          const at = later(a, 1000)
          const refused = yield* keys.revoke(owner, a.id, at, { keepOneActive: true })
          expect(refused._tag).toBe("LastActiveKey")
          expect(Option.getOrThrow(yield* keys.find(owner, a.id)).revokedAt).toBeNull()
          // An expired key is no second key.
          const expired = storedKey(partner, { expiresAt: later(a, 500) })
          yield* keys.insert(expired)
          expect((yield* keys.revoke(owner, a.id, at, { keepOneActive: true }))._tag).toBe(
            "LastActiveKey"
          )
          const b = storedKey(partner)
          yield* keys.insert(b)
          const revoked = yield* keys.revoke(owner, a.id, at, { keepOneActive: true })
          expect(revoked._tag).toBe("Revoked")
          expect(Option.getOrThrow(yield* keys.find(owner, a.id)).revokedAt).toEqual(at)
          const again = yield* keys.revoke(owner, a.id, later(a, 2000), { keepOneActive: true })
          expect(again._tag).toBe("AlreadyRevoked")
          expect(Option.getOrThrow(yield* keys.find(owner, a.id)).revokedAt).toEqual(at)
          // The CLI may revoke the last one.
          expect((yield* keys.revoke(owner, b.id, at, { keepOneActive: false }))._tag).toBe(
            "Revoked"
          )
          const unknown = `key_${makeIdBody(tick())}` as ApiKeyId
          expect((yield* keys.revoke(owner, unknown, at, { keepOneActive: false }))._tag).toBe(
            "NotFound"
          )
          const stranger: KeyOwner = { kind: "partner", id: partnerId() }
          expect((yield* keys.revoke(stranger, a.id, at, { keepOneActive: false }))._tag).toBe(
            "NotFound"
          )
        })
      )

      test(
        "of two revocations racing for an owner's last two keys, exactly one wins",
        Effect.gen(function* () {
          const keys = yield* KeyStore
          for (let round = 0; round < 5; round++) {
            const partner = aPartner()
            const a = storedKey(partner)
            yield* (yield* PartnerStore).insert(partner, a)
            const b = storedKey(partner)
            yield* keys.insert(b)
            const at = later(a, 1000)
            const outcomes = yield* Effect.all(
              [a, b].map((k) => keys.revoke(ownerOf(partner), k.id, at, { keepOneActive: true })),
              { concurrency: "unbounded" }
            )
            expect(outcomes.map((o) => o._tag).sort()).toEqual(["LastActiveKey", "Revoked"])
            const left = (yield* keys.list(ownerOf(partner))).filter((k) => k.revokedAt === null)
            expect(left).toHaveLength(1)
          }
        })
      )

      test(
        "rotates an active key: the replacement stored, the old one ending at the overlap",
        Effect.gen(function* () {
          const partner = aPartner()
          const old = storedKey(partner, { name: "prod" })
          yield* (yield* PartnerStore).insert(partner, old)
          const keys = yield* KeyStore
          const owner = ownerOf(partner)
          const at = later(old, 1000)
          const replacement = storedKey(partner, { name: "prod", createdAt: at })
          const ends = later(old, 3_600_000)
          const rotated = yield* keys.rotate(owner, old.id, replacement, ends, at)
          if (rotated._tag !== "Rotated") throw new Error(rotated._tag)
          expect(rotated.old.revokedAt).toEqual(ends)
          expect(rotated.old.rotatedTo).toBe(replacement.id)
          expect(Option.getOrThrow(yield* keys.find(owner, replacement.id))).toEqual(replacement)
          // A second rotation within the overlap never extends the old key's life.
          const third = storedKey(partner, { createdAt: later(old, 2000) })
          const again = yield* keys.rotate(
            owner,
            old.id,
            third,
            later(old, 7_200_000),
            later(old, 2000)
          )
          if (again._tag !== "Rotated") throw new Error(again._tag)
          expect(again.old.revokedAt).toEqual(ends)
          // Past its end, the old key cannot be rotated; nothing is stored.
          const fourth = storedKey(partner, { createdAt: later(old, 3_600_001) })
          const late = yield* keys.rotate(owner, old.id, fourth, later(old, 9e6), fourth.createdAt)
          expect(late._tag).toBe("Inactive")
          expect(Option.isNone(yield* keys.find(owner, fourth.id))).toBe(true)
          const unknown = `key_${makeIdBody(tick())}` as ApiKeyId
          const none = yield* keys.rotate(owner, unknown, fourth, later(old, 9e6), at)
          expect(none._tag).toBe("NotFound")
          // A replacement whose lookup id is taken stores nothing and ends nothing.
          const clash = storedKey(partner, { lookupId: replacement.lookupId })
          const taken = yield* Effect.flip(
            keys.rotate(owner, replacement.id, clash, later(old, 9e6), at)
          )
          expect(taken._tag).toBe("ApiKeyLookupTaken")
          expect(Option.getOrThrow(yield* keys.find(owner, replacement.id)).revokedAt).toBeNull()
        })
      )

      test(
        "records a use only when the last one recorded is older than asked",
        Effect.gen(function* () {
          const partner = aPartner()
          const key = storedKey(partner)
          yield* (yield* PartnerStore).insert(partner, key)
          const keys = yield* KeyStore
          const owner = ownerOf(partner)
          yield* keys.touch(key.id, later(key, 1000), later(key, 0))
          yield* keys.touch(key.id, later(key, 2000), later(key, 500))
          expect(Option.getOrThrow(yield* keys.find(owner, key.id)).lastUsedAt).toEqual(
            later(key, 1000)
          )
          yield* keys.touch(key.id, later(key, 70_000), later(key, 10_000))
          expect(Option.getOrThrow(yield* keys.find(owner, key.id)).lastUsedAt).toEqual(
            later(key, 70_000)
          )
        })
      )
    })

    describe("wallet apps", () => {
      test(
        "stores an app with its key, found by id and by the key's lookup id, every field intact",
        Effect.gen(function* () {
          const store = yield* WalletAppStore
          const app = aWalletApp("Ünïcode Wallet ☕", "https://wallet.example/icon.png")
          const key = appKey(app)
          yield* store.insert(app, key)
          const found = Option.getOrThrow(yield* (yield* KeyStore).findByLookupId(key.lookupId!))
          expect(found).toEqual(key)
          expect(found.ownerKind).toBe("wallet_app")
          expect(Option.getOrThrow(yield* store.find(app.id))).toEqual(app)
          const plain = aWalletApp("Plain")
          yield* store.insert(plain, appKey(plain))
          expect(Option.getOrThrow(yield* store.find(plain.id)).iconUrl).toBeNull()
          expect(Option.isNone(yield* store.find(walletAppId()))).toBe(true)
        })
      )

      test(
        "refuses a taken lookup id and stores nothing of that app",
        Effect.gen(function* () {
          const store = yield* WalletAppStore
          const first = aWalletApp("First")
          const key = appKey(first)
          yield* store.insert(first, key)
          const second = aWalletApp("Second")
          const refused = yield* Effect.flip(
            store.insert(second, appKey(second, { lookupId: key.lookupId }))
          )
          expect(refused._tag).toBe("ApiKeyLookupTaken")
          expect(Option.isNone(yield* store.find(second.id))).toBe(true)
          expect(yield* store.list).toEqual([first])
        })
      )

      test(
        "lists apps oldest first",
        Effect.gen(function* () {
          const store = yield* WalletAppStore
          expect(yield* store.list).toEqual([])
          const a = aWalletApp("A")
          const b = aWalletApp("B")
          yield* store.insert(b, appKey(b))
          yield* store.insert(a, appKey(a))
          expect((yield* store.list).map((app) => app.name)).toEqual(["A", "B"])
        })
      )

      test(
        "switches an app's status, answering it as it is now, and none for an unknown id",
        Effect.gen(function* () {
          const store = yield* WalletAppStore
          const app = aWalletApp("Switched")
          yield* store.insert(app, appKey(app))
          const disabled = Option.getOrThrow(yield* store.setStatus(app.id, "disabled"))
          expect(disabled).toEqual(new WalletApp({ ...app, status: "disabled" }))
          expect(Option.getOrThrow(yield* store.find(app.id)).status).toBe("disabled")
          expect((yield* store.list).map((a) => a.status)).toEqual(["disabled"])
          const enabled = Option.getOrThrow(yield* store.setStatus(app.id, "active"))
          expect(enabled.status).toBe("active")
          expect(Option.getOrThrow(yield* store.find(app.id))).toEqual(app)
          expect(Option.isNone(yield* store.setStatus(walletAppId(), "disabled"))).toBe(true)
        })
      )

      test(
        "records an app's last use unless one was recorded since the given time",
        Effect.gen(function* () {
          const store = yield* WalletAppStore
          const app = aWalletApp("Used")
          yield* store.insert(app, appKey(app))
          const lastUsed = () =>
            Effect.map(store.find(app.id), (found) => Option.getOrThrow(found).lastUsedAt)
          const t0 = new Date(Date.UTC(2026, 0, 2, 10, 0, 0))
          yield* store.touch(app.id, t0, new Date(t0.getTime() - 60_000))
          expect(yield* lastUsed()).toEqual(t0)
          // Another instance 30 s later, within the minute: nothing written.
          const t1 = new Date(t0.getTime() + 30_000)
          yield* store.touch(app.id, t1, new Date(t1.getTime() - 60_000))
          expect(yield* lastUsed()).toEqual(t0)
          const t2 = new Date(t0.getTime() + 61_000)
          yield* store.touch(app.id, t2, new Date(t2.getTime() - 60_000))
          expect(yield* lastUsed()).toEqual(t2)
          // An unknown id writes nothing and fails nothing.
          yield* store.touch(walletAppId(), t2, t0)
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
            logoName: `${"ab".repeat(32)}.webp`,
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
          const logo = { iconUrl: "https://example.com/a.png", logoName: `${"cd".repeat(32)}.webp` }
          const withLogo = Option.getOrThrow(yield* store.update(merchant.id, { logo }, at))
          expect(withLogo).toEqual(new Merchant({ ...merchant, ...logo, updatedAt: at }))
          const renamed = Option.getOrThrow(
            yield* store.update(merchant.id, { name: "Renamed" }, at)
          )
          expect(renamed.name).toBe("Renamed")
          expect(renamed.logoName).toBe(logo.logoName)
          const cleared = Option.getOrThrow(yield* store.update(merchant.id, { logo: null }, at))
          expect(cleared.iconUrl).toBeNull()
          expect(cleared.logoName).toBeNull()
          expect(cleared.name).toBe("Renamed")
          expect(cleared.email).toBe(merchant.email)
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
      const done = (s: IdempotencyScope, token: string, status: number, body: string) => ({
        scope: s,
        token,
        response: { status, body }
      })
      /** The defect a completion dies with, when its claim is no longer its own. */
      test(
        "claims once, then reports in progress, mismatch, and replays the completed response",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-1")
          expect((yield* store.claim(s, "fp-a", "t1", now(), long_ago))._tag).toBe("Claimed")
          expect((yield* store.claim(s, "fp-a", "t2", now(), long_ago))._tag).toBe("InProgress")
          expect((yield* store.claim(s, "fp-b", "t3", now(), long_ago))._tag).toBe("Mismatch")
          yield* store.complete(done(s, "t1", 201, '{"ok":true}'))
          expect(yield* store.claim(s, "fp-a", "t4", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: '{"ok":true}' }
          })
          expect((yield* store.claim(s, "fp-b", "t5", now(), long_ago))._tag).toBe("Mismatch")
          // Scopes are independent.
          expect(
            (yield* store.claim(scope("key-1", "ptnr_other"), "fp-b", "t6", now(), long_ago))._tag
          ).toBe("Claimed")
          expect(
            (yield* store.claim(
              scope("key-1", "ptnr_contract", "POST /other"),
              "fp-b",
              "t7",
              now(),
              long_ago
            ))._tag
          ).toBe("Claimed")
        })
      )

      test(
        "releases an unfinished claim of its own token, never another's nor a finished one",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-2")
          yield* store.claim(s, "fp", "t1", now(), long_ago)
          yield* store.release(s, "not-the-owner")
          expect((yield* store.claim(s, "fp", "t2", now(), long_ago))._tag).toBe("InProgress")
          yield* store.release(s, "t1")
          expect((yield* store.claim(s, "other-fp", "t3", now(), long_ago))._tag).toBe("Claimed")
          yield* store.complete(done(s, "t3", 200, "{}"))
          yield* store.release(s, "t3")
          expect((yield* store.claim(s, "other-fp", "t4", now(), long_ago))._tag).toBe("Replay")
        })
      )

      test(
        "lets a claim whose lease was not renewed be taken over, and a renewed one not",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const s = scope("key-3")
          const first = now()
          yield* store.claim(s, "fp", "t1", first, long_ago)
          expect((yield* store.claim(s, "fp", "t2", now(), first))._tag).toBe("InProgress")
          const renewed = now()
          expect(yield* store.renew(s, "t1", renewed)).toBe(true)
          expect(yield* store.renew(s, "someone-else", now())).toBe(false)
          // Stale by the first claim's time, but not by the renewal's.
          const afterFirst = new Date(first.getTime() + 1)
          expect((yield* store.claim(s, "fp", "t2", now(), afterFirst))._tag).toBe("InProgress")
          const afterRenewal = new Date(renewed.getTime() + 1)
          expect((yield* store.claim(s, "fp", "t2", now(), afterRenewal))._tag).toBe("Claimed")
          // The old owner has lost it: it can neither renew nor complete nor release.
          expect(yield* store.renew(s, "t1", now())).toBe(false)
          expect(yield* lostClaim(store.complete(done(s, "t1", 201, "old")))).toBeInstanceOf(
            IdempotencyClaimLost
          )
          yield* store.release(s, "t1")
          yield* store.complete(done(s, "t2", 201, "new"))
          expect(yield* store.claim(s, "fp", "t3", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: "new" }
          })
          expect(yield* store.renew(s, "t2", now())).toBe(false)
        })
      )

      test(
        "grants exactly one of many concurrent claims",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const outcomes = yield* Effect.all(
            Array.from({ length: 16 }, (_, i) =>
              store.claim(scope("key-4"), "fp", `t${i}`, now(), long_ago)
            ),
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
          yield* store.claim(m, "fp", "t1", now(), long_ago)
          yield* (yield* MerchantStore).insert(aMerchant(partner), done(m, "t1", 201, "merchant"))
          expect(yield* store.claim(m, "fp", "t2", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: "merchant" }
          })
          const st = scope("key-6", partner.id, "POST /settlements")
          yield* store.claim(st, "fp", "t3", now(), long_ago)
          yield* (yield* SettlementStore).insertAll(
            [aSettlement(merchant)],
            done(st, "t3", 201, "settlements")
          )
          expect((yield* store.claim(st, "fp", "t4", now(), long_ago))._tag).toBe("Replay")
        })
      )

      test(
        "rolls the work back when its claim was taken over: one effect per key",
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const store = yield* IdempotencyStore
          const merchants = yield* MerchantStore
          const m = scope("key-7", partner.id)
          const first = now()
          yield* store.claim(m, "fp", "stalled", first, long_ago)
          yield* store.claim(m, "fp", "taker", now(), new Date(first.getTime() + 1))
          const late = aMerchant(partner)
          expect(
            yield* lostClaim(merchants.insert(late, done(m, "stalled", 201, "late")))
          ).toBeInstanceOf(IdempotencyClaimLost)
          expect(Option.isNone(yield* merchants.find(late.id))).toBe(true)
          const st = scope("key-8", partner.id, "POST /settlements")
          yield* store.claim(st, "fp", "t1", now(), long_ago)
          yield* store.release(st, "t1")
          const settlement = aSettlement(merchant)
          expect(
            yield* lostClaim(
              (yield* SettlementStore).insertAll([settlement], done(st, "t1", 201, "late"))
            )
          ).toBeInstanceOf(IdempotencyClaimLost)
          expect(yield* (yield* SettlementStore).listByMerchant(merchant.id)).toEqual([])
          // The one who holds the key writes.
          const winner = aMerchant(partner)
          yield* merchants.insert(winner, done(m, "taker", 201, "winner"))
          expect(Option.isSome(yield* merchants.find(winner.id))).toBe(true)
        })
      )

      test(
        "purges finished keys older than the retention in batches, keeping newer and unfinished ones",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const old = scope("old")
          const older = [scope("older-1"), scope("older-2")]
          const unfinished = scope("unfinished")
          yield* store.claim(old, "fp", "t1", new Date(T0 - 100_000), long_ago)
          yield* store.complete(done(old, "t1", 200, "{}"))
          for (const [i, s] of older.entries()) {
            yield* store.claim(s, "fp", `t1-${i}`, new Date(T0 - 200_000), long_ago)
            yield* store.complete(done(s, `t1-${i}`, 200, "{}"))
          }
          yield* store.claim(unfinished, "fp", "t2", new Date(T0 - 100_000), long_ago)
          const fresh = scope("fresh")
          yield* store.claim(fresh, "fp", "t3", now(), long_ago)
          yield* store.complete(done(fresh, "t3", 200, "{}"))
          // At most `limit` a call, until none is left.
          expect(yield* store.purge(new Date(T0 - 50_000), 2)).toBe(2)
          expect(yield* store.purge(new Date(T0 - 50_000), 2)).toBe(1)
          expect(yield* store.purge(new Date(T0 - 50_000), 2)).toBe(0)
          for (const s of older) {
            expect((yield* store.claim(s, "other", "t9", now(), long_ago))._tag).toBe("Claimed")
          }
          expect((yield* store.claim(old, "other", "t4", now(), long_ago))._tag).toBe("Claimed")
          expect((yield* store.claim(fresh, "other", "t5", now(), long_ago))._tag).toBe("Mismatch")
          expect((yield* store.claim(unfinished, "other", "t6", now(), long_ago))._tag).toBe(
            "Mismatch"
          )
        })
      )

      test(
        "claims a finished key past its replay window afresh, whatever its request, and replays the new answer",
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          const since = new Date(T0 - 50_000)
          const old = scope("window-old")
          const kept = scope("window-kept")
          const fresh = scope("window-fresh")
          for (const [s, t] of [
            [old, "w1"],
            [kept, "w2"]
          ] as const) {
            yield* store.claim(s, "fp", t, new Date(T0 - 100_000), long_ago)
            yield* store.complete(done(s, t, 201, `{"first":"${t}"}`))
          }
          yield* store.claim(fresh, "fp", "w3", now(), long_ago)
          yield* store.complete(done(fresh, "w3", 201, "{}"))
          // Past the window, another request with the same key is a new request…
          expect((yield* store.claim(old, "other", "w4", now(), long_ago, since))._tag).toBe(
            "Claimed"
          )
          // …held like any claim, and the old claim's token can no longer write.
          expect((yield* store.claim(old, "other", "w5", now(), long_ago, since))._tag).toBe(
            "InProgress"
          )
          const stale = yield* Effect.exit(store.complete(done(old, "w1", 201, "{}")))
          expect(Exit.isFailure(stale)).toBe(true)
          yield* store.complete(done(old, "w4", 201, '{"second":true}'))
          expect(yield* store.claim(old, "other", "w6", now(), long_ago, since)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: '{"second":true}' }
          })
          // Without a window, a kept record replays as long as it is kept.
          expect(yield* store.claim(kept, "fp", "w7", now(), long_ago)).toEqual({
            _tag: "Replay",
            response: { status: 201, body: '{"first":"w2"}' }
          })
          // Within the window, as ever.
          expect((yield* store.claim(fresh, "other", "w8", now(), long_ago, since))._tag).toBe(
            "Mismatch"
          )
        })
      )
    })

    describe("events", () => {
      /** The outbox of a merchant write: one event of `type` with the merchant as its data. */
      const outboxOf =
        (type: EventType, paymentId: string | null = null) =>
        (m: Merchant) => [
          new PayEvent({
            id: eventId(),
            partnerId: m.partnerId,
            type,
            createdAt: new Date(tick()),
            paymentId,
            merchantId: m.id,
            data: JSON.stringify({ id: m.id, name: m.name, deleted: m.deletedAt !== null })
          })
        ]
      const typesOf = (events: ReadonlyArray<PayEvent>) => events.map((e) => e.type)

      test(
        "are written with the merchant write that makes them, newest first, each found by id",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const merchants = yield* MerchantStore
          const events = yield* EventStore
          const merchant = aMerchant(partner)
          yield* merchants.insert(merchant, undefined, outboxOf("merchant.created"))
          const at = new Date(tick())
          yield* merchants.update(
            merchant.id,
            { name: "Renamed" },
            at,
            outboxOf("merchant.updated")
          )
          yield* merchants.setStatus(merchant.id, "inactive", at, outboxOf("merchant.updated"))
          yield* merchants.markDeleted(merchant.id, at, outboxOf("merchant.deleted"))
          // Gone already: no change, so no event.
          yield* merchants.markDeleted(merchant.id, new Date(tick()), outboxOf("merchant.deleted"))
          yield* merchants.update(merchant.id, { name: "x" }, at, outboxOf("merchant.updated"))
          yield* merchants.setStatus(merchant.id, "active", at, outboxOf("merchant.updated"))
          const listed = yield* events.list({ partnerId: partner.id, limit: 10 })
          expect(typesOf(listed)).toEqual([
            "merchant.deleted",
            "merchant.updated",
            "merchant.updated",
            "merchant.created"
          ])
          expect(JSON.parse(listed[2]!.data)).toEqual({
            id: merchant.id,
            name: "Renamed",
            deleted: false
          })
          expect(JSON.parse(listed[0]!.data).deleted).toBe(true)
          for (const event of listed) {
            expect(Option.getOrThrow(yield* events.find(event.id))).toEqual(event)
          }
          expect(Option.isNone(yield* events.find(eventId()))).toBe(true)
        })
      )

      test(
        "are written with settlement writes: each one created, a changed destination, a removal once; none for a refused batch",
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const settlements = yield* SettlementStore
          const events = yield* EventStore
          const eventFor =
            (type: EventType) =>
            (about: string): PayEvent =>
              new PayEvent({
                id: eventId(),
                partnerId: partner.id,
                type,
                createdAt: new Date(tick()),
                paymentId: null,
                merchantId: merchant.id,
                data: JSON.stringify({ about })
              })
          const a = aSettlement(merchant, USDC_BASE)
          const b = aSettlement(merchant, EURC_BASE)
          yield* settlements.insertAll([a, b], undefined, (rows) =>
            rows.map((r) => eventFor("settlement.created")(r.id))
          )
          // Clashes with `a`: nothing of the batch is written, its events neither.
          const clash = yield* Effect.either(
            settlements.insertAll([aSettlement(merchant, USDC_BASE)], undefined, (rows) =>
              rows.map((r) => eventFor("settlement.created")(r.id))
            )
          )
          expect(clash._tag).toBe("Left")
          const at = new Date(tick())
          yield* settlements.updateDestination(merchant.id, a.id, WALLET_B, at, (r) => [
            eventFor("settlement.updated")(r.destination)
          ])
          for (let i = 0; i < 2; i++) {
            yield* settlements.remove(merchant.id, b.id, at, (id) => [
              eventFor("settlement.deleted")(id)
            ])
          }
          const listed = yield* events.list({ partnerId: partner.id, limit: 10 })
          expect(listed.map((e) => [e.type, JSON.parse(e.data).about])).toEqual([
            ["settlement.deleted", b.id],
            ["settlement.updated", WALLET_B],
            ["settlement.created", b.id],
            ["settlement.created", a.id]
          ])
        })
      )

      test(
        "are never written by a write that rolls back (its idempotency claim was lost)",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const keys = yield* IdempotencyStore
          const m = scope("events-1", partner.id)
          const first = new Date(tick())
          yield* keys.claim(m, "fp", "stalled", first, new Date(0))
          yield* keys.claim(m, "fp", "taker", new Date(tick()), new Date(first.getTime() + 1))
          const late = aMerchant(partner)
          expect(
            yield* lostClaim(
              (yield* MerchantStore).insert(
                late,
                { scope: m, token: "stalled", response: { status: 201, body: "late" } },
                outboxOf("merchant.created")
              )
            )
          ).toBeInstanceOf(IdempotencyClaimLost)
          expect(yield* (yield* EventStore).list({ partnerId: partner.id, limit: 10 })).toEqual([])
        })
      )

      test(
        "are listed per partner, by types, payment and time, in keyset pages",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const other = aPartner("Other")
          yield* (yield* PartnerStore).insert(other, storedKey(other))
          const merchants = yield* MerchantStore
          const events = yield* EventStore
          const write = (p: Partner, type: EventType, paymentId: string | null = null) =>
            merchants.insert(aMerchant(p), undefined, outboxOf(type, paymentId))
          yield* write(partner, "merchant.created")
          yield* write(partner, "payment.succeeded", "pay_A")
          yield* write(other, "payment.succeeded", "pay_A")
          const middle = new Date(tick())
          yield* write(partner, "payment.settled", "pay_A")
          yield* write(partner, "payment.succeeded", "pay_B")
          const all = yield* events.list({ partnerId: partner.id, limit: 100 })
          expect(typesOf(all)).toEqual([
            "payment.succeeded",
            "payment.settled",
            "payment.succeeded",
            "merchant.created"
          ])
          const page = (q: Partial<Parameters<typeof events.list>[0]>) =>
            events.list({ partnerId: partner.id, limit: 100, ...q })
          expect(
            (yield* page({
              types: ["payment.succeeded", "payment.settled"],
              paymentId: "pay_A"
            })).map((e) => e.type)
          ).toEqual(["payment.settled", "payment.succeeded"])
          expect(typesOf(yield* page({ types: ["merchant.created"] }))).toEqual([
            "merchant.created"
          ])
          expect(yield* page({ from: middle })).toEqual(all.slice(0, 2))
          expect(yield* page({ to: middle })).toEqual(all.slice(2))
          // Keyset pages of two: each page continues after the last one's final event.
          const first = yield* page({ limit: 2 })
          expect(first).toEqual(all.slice(0, 2))
          expect(yield* page({ limit: 2, before: first[1]!.id })).toEqual(all.slice(2, 4))
          expect(yield* page({ limit: 2, before: all[3]!.id })).toEqual([])
          expect(
            (yield* events.list({ partnerId: other.id, limit: 100 })).map((e) => e.paymentId)
          ).toEqual(["pay_A"])
        })
      )
    })

    describe("webhook endpoints", () => {
      const anEndpoint = (partner: Partner, fields: Partial<WebhookEndpoint> = {}) => {
        const at = new Date(tick())
        return new WebhookEndpoint({
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
          createdAt: at,
          updatedAt: at,
          deletedAt: null,
          ...fields
        })
      }

      test(
        "round-trip every field, listed per partner newest first, without deleted ones",
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const other = aPartner("Other")
          yield* (yield* PartnerStore).insert(other, storedKey(other))
          const store = yield* WebhookEndpointStore
          const full = anEndpoint(partner, {
            events: ["payment.succeeded", "settlement.updated"],
            merchantId: merchant.id,
            description: "Ünïcode ☕ hooks",
            apiVersion: "2026-02-19.preview",
            status: "disabled",
            disabledReason: "answered 410 Gone",
            previousSecret: "v1.old",
            previousSecretExpiresAt: new Date(tick())
          })
          const plain = anEndpoint(partner)
          const theirs = anEndpoint(other)
          for (const e of [full, plain, theirs]) yield* store.insert(e)
          expect(Option.getOrThrow(yield* store.find(full.id))).toEqual(full)
          expect(Option.getOrThrow(yield* store.find(plain.id))).toEqual(plain)
          expect(yield* store.list(partner.id)).toEqual([plain, full])
          const gone = Option.getOrThrow(yield* store.markDeleted(plain.id, new Date(tick())))
          expect(gone.deletedAt).not.toBeNull()
          // Deleted twice: the first time stands.
          expect(
            Option.getOrThrow(yield* store.markDeleted(plain.id, new Date(tick()))).deletedAt
          ).toEqual(gone.deletedAt)
          expect(yield* store.list(partner.id)).toEqual([full])
          expect(yield* store.list(other.id)).toEqual([theirs])
        })
      )

      test(
        "update only the given fields, null clears, and never a deleted endpoint",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const store = yield* WebhookEndpointStore
          const endpoint = anEndpoint(partner, { description: "first" })
          yield* store.insert(endpoint)
          const at = new Date(tick())
          const changed = Option.getOrThrow(
            yield* store.update(
              endpoint.id,
              { url: "https://hooks.shop.example/v2", events: ["refund.requested"] },
              at
            )
          )
          expect(changed).toEqual(
            new WebhookEndpoint({
              ...endpoint,
              url: "https://hooks.shop.example/v2",
              events: ["refund.requested"],
              updatedAt: at
            })
          )
          const disabled = Option.getOrThrow(
            yield* store.update(
              endpoint.id,
              {
                status: "disabled",
                disabledReason: "by the partner",
                description: null,
                events: null
              },
              at
            )
          )
          expect([
            disabled.status,
            disabled.disabledReason,
            disabled.description,
            disabled.events
          ]).toEqual(["disabled", "by the partner", null, null])
          expect(disabled.url).toBe("https://hooks.shop.example/v2")
          yield* store.markDeleted(endpoint.id, at)
          expect(Option.isNone(yield* store.update(endpoint.id, { description: "x" }, at))).toBe(
            true
          )
        })
      )

      test(
        "queue each event's delivery for every endpoint that wants it then, in the event's write; none for a write rolled back",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const other = aPartner("Other")
          yield* (yield* PartnerStore).insert(other, storedKey(other))
          const endpoints = yield* WebhookEndpointStore
          const deliveries = yield* WebhookDeliveryStore
          const merchants = yield* MerchantStore
          const x = aMerchant(partner, { name: "X" })
          const y = aMerchant(partner, { name: "Y" })
          const all = anEndpoint(partner)
          const updatesOnly = anEndpoint(partner, { events: ["merchant.updated"] })
          const onlyX = anEndpoint(partner, { merchantId: x.id })
          const disabled = anEndpoint(partner, { status: "disabled" })
          const deleted = anEndpoint(partner)
          const theirs = anEndpoint(other)
          for (const e of [all, updatesOnly, onlyX, disabled, deleted, theirs]) {
            yield* endpoints.insert(e)
          }
          yield* endpoints.markDeleted(deleted.id, new Date(tick()))
          const event = (type: EventType, m: Merchant) =>
            new PayEvent({
              id: eventId(),
              partnerId: m.partnerId,
              type,
              createdAt: new Date(tick()),
              paymentId: `pay_of_${m.name}`,
              merchantId: m.id,
              data: "{}"
            })
          const created = event("merchant.created", x)
          yield* merchants.insert(x, undefined, () => [created])
          const updated = event("merchant.updated", x)
          yield* merchants.update(x.id, { name: "X2" }, new Date(tick()), () => [updated])
          const ofY = event("merchant.created", y)
          yield* merchants.insert(y, undefined, () => [ofY])
          // Rolled back (its claim was lost): no event, no delivery.
          const keys = yield* IdempotencyStore
          const s = scope("deliveries-1", partner.id)
          const first = new Date(tick())
          yield* keys.claim(s, "fp", "stalled", first, new Date(0))
          yield* keys.claim(s, "fp", "taker", new Date(tick()), new Date(first.getTime() + 1))
          const lost = aMerchant(partner)
          yield* lostClaim(
            merchants.insert(
              lost,
              { scope: s, token: "stalled", response: { status: 201, body: "{}" } },
              () => [event("merchant.created", lost)]
            )
          )
          // Registered after the events: none of them.
          const late = anEndpoint(partner)
          yield* endpoints.insert(late)

          const queued = (e: WebhookEndpoint) =>
            Effect.map(deliveries.list({ endpointId: e.id, limit: 100 }), (rs) =>
              rs.map(({ delivery: d }) => [d.eventId, d.state, d.attempts, d.paymentId])
            )
          expect(yield* queued(all)).toEqual([
            [ofY.id, "pending", 0, "pay_of_Y"],
            [updated.id, "pending", 0, "pay_of_X"],
            [created.id, "pending", 0, "pay_of_X"]
          ])
          expect(yield* queued(updatesOnly)).toEqual([[updated.id, "pending", 0, "pay_of_X"]])
          expect(yield* queued(onlyX)).toEqual([
            [updated.id, "pending", 0, "pay_of_X"],
            [created.id, "pending", 0, "pay_of_X"]
          ])
          for (const none of [disabled, deleted, theirs, late]) {
            expect(yield* queued(none)).toEqual([])
          }
        })
      )

      /** A partner, a merchant, endpoints, and a way to write its events through a store. */
      const deliverySetup = (...fields: Array<Partial<WebhookEndpoint>>) =>
        Effect.gen(function* () {
          const { partner, merchant } = yield* seed
          const endpoints = yield* WebhookEndpointStore
          const made = fields.map((f) => anEndpoint(partner, f))
          for (const e of made) yield* endpoints.insert(e)
          const merchants = yield* MerchantStore
          const write = (paymentId: string | null, type: EventType = "merchant.updated") =>
            Effect.gen(function* () {
              const event = new PayEvent({
                id: eventId(),
                partnerId: partner.id,
                type,
                createdAt: new Date(tick()),
                paymentId,
                merchantId: merchant.id,
                data: JSON.stringify({ paymentId })
              })
              yield* merchants.update(
                merchant.id,
                { name: `M ${tick()}` },
                new Date(tick()),
                () => [event]
              )
              return event
            })
          return { partner, merchant, endpoints: made, write }
        })

      const outcome = (
        state: AttemptOutcome["state"],
        at: Date,
        fields: Partial<AttemptOutcome> = {}
      ): AttemptOutcome => ({
        attempt: new WebhookAttempt({
          attemptedAt: at,
          durationMs: 12,
          responseStatus: state === "delivered" ? 204 : 500,
          responseBody: state === "delivered" ? "" : "Ünïcode ☕ oops",
          error: state === "delivered" ? null : "HTTP 500"
        }),
        state,
        nextAttemptAt: new Date(at.getTime() + 5_000),
        endpoint:
          state === "delivered"
            ? { _tag: "Succeeded" }
            : { _tag: "Failed", disableIfFailingSince: new Date(0), reason: "five days" },
        ...fields
      })

      test(
        "claim due deliveries under a lease, record attempts only while it holds, retry when due, take a lapsed lease over",
        Effect.gen(function* () {
          const { endpoints, write } = yield* deliverySetup({})
          const [endpoint] = endpoints
          const store = yield* WebhookDeliveryStore
          const first = yield* write(null)
          const at = new Date(tick())
          const [claimed, ...more] = yield* store.claimDue(at, 10, 60_000, 8)
          expect(more).toEqual([])
          expect(claimed!.event).toEqual(first)
          expect(claimed!.endpoint).toEqual(endpoint)
          expect(claimed!.attempts).toBe(0)
          // Leased: not claimed again meanwhile.
          expect(yield* store.claimDue(at, 10, 60_000, 8)).toEqual([])
          const failedAt = new Date(tick())
          yield* store.record(claimed!.lease, outcome("pending", failedAt))
          // Recorded once: the token is spent.
          const again = yield* Effect.flip(
            store.record(claimed!.lease, outcome("delivered", failedAt))
          )
          expect(again._tag).toBe("WebhookDeliveryLeaseLost")
          // Not due before its next attempt.
          expect(
            yield* store.claimDue(new Date(failedAt.getTime() + 4_999), 10, 60_000, 8)
          ).toEqual([])
          const due = new Date(failedAt.getTime() + 5_000)
          const [retry] = yield* store.claimDue(due, 10, 1_000, 8)
          expect(retry!.attempts).toBe(1)
          // Its lease ran out: another instance takes it over, and the first holder records nothing.
          const [takeover] = yield* store.claimDue(new Date(due.getTime() + 1_000), 10, 60_000, 8)
          expect(takeover!.lease.token).not.toBe(retry!.lease.token)
          const lost = yield* Effect.flip(store.record(retry!.lease, outcome("delivered", due)))
          expect(lost._tag).toBe("WebhookDeliveryLeaseLost")
          const doneAt = new Date(due.getTime() + 2_000)
          yield* store.record(takeover!.lease, outcome("delivered", doneAt))
          expect(yield* store.claimDue(new Date(doneAt.getTime() + 86_400_000), 10, 1, 8)).toEqual(
            []
          )
          const record = Option.getOrThrow(yield* store.find(endpoint!.id, first.id))
          expect(record.delivery.state).toBe("delivered")
          expect(record.delivery.attempts).toBe(2)
          expect(record.eventType).toBe("merchant.updated")
          expect(record.attempts.map((a) => [a.attemptedAt, a.responseStatus, a.error])).toEqual([
            [doneAt, 204, null],
            [failedAt, 500, "HTTP 500"]
          ])
          expect(record.attempts[1]!.responseBody).toBe("Ünïcode ☕ oops")
          expect(record.attempts[1]!.durationMs).toBe(12)
        })
      )

      test(
        "deliver one payment's events to an endpoint in order: a later one waits while an earlier one is pending, and goes once it failed for good; other payments do not wait",
        Effect.gen(function* () {
          const { endpoints, write } = yield* deliverySetup({})
          const store = yield* WebhookDeliveryStore
          const a1 = yield* write("pay_a")
          const b1 = yield* write("pay_b")
          const a2 = yield* write("pay_a")
          const none = yield* write(null)
          const a3 = yield* write("pay_a")
          const at = new Date(tick())
          const ids = (cs: ReadonlyArray<{ readonly event: PayEvent }>) =>
            cs.map((c) => c.event.id).sort()
          const firstRound = yield* store.claimDue(at, 10, 60_000, 8)
          expect(ids(firstRound)).toEqual([a1.id, b1.id, none.id].sort())
          for (const c of firstRound) {
            // a1 is retried later; the others are delivered.
            yield* store.record(
              c.lease,
              outcome(c.event.id === a1.id ? "pending" : "delivered", at, {
                nextAttemptAt: new Date(at.getTime() + 60_000)
              })
            )
          }
          // a2 waits for a1 while a1 is being retried.
          expect(yield* store.claimDue(new Date(at.getTime() + 30_000), 10, 60_000, 8)).toEqual([])
          const [retry, ...others] = yield* store.claimDue(
            new Date(at.getTime() + 60_000),
            10,
            60_000,
            8
          )
          expect([retry!.event.id, others]).toEqual([a1.id, []])
          // a1 fails for good: a2 (only: a3 waits for it) goes on.
          yield* store.record(retry!.lease, outcome("failed", new Date(at.getTime() + 60_000)))
          const next = yield* store.claimDue(new Date(at.getTime() + 61_000), 10, 60_000, 8)
          expect(ids(next)).toEqual([a2.id])
          yield* store.record(next[0]!.lease, outcome("delivered", new Date(at.getTime() + 61_000)))
          const last = yield* store.claimDue(new Date(at.getTime() + 62_000), 10, 60_000, 8)
          expect(ids(last)).toEqual([a3.id])
          const listed = yield* store.list({ endpointId: endpoints[0]!.id, limit: 10 })
          expect(listed.map((r) => [r.delivery.eventId, r.delivery.state])).toEqual([
            [a3.id, "pending"],
            [none.id, "delivered"],
            [a2.id, "delivered"],
            [b1.id, "delivered"],
            [a1.id, "failed"]
          ])
          const failed = yield* store.list({
            endpointId: endpoints[0]!.id,
            state: "failed",
            limit: 10
          })
          expect(failed.map((r) => r.delivery.eventId)).toEqual([a1.id])
          const page = yield* store.list({ endpointId: endpoints[0]!.id, before: a2.id, limit: 10 })
          expect(page.map((r) => r.delivery.eventId)).toEqual([b1.id, a1.id])
        })
      )

      test(
        "never more in flight to one partner's endpoints together than its limit (perPartner)",
        Effect.gen(function* () {
          const { write } = yield* deliverySetup({}, {}, {})
          const store = yield* WebhookDeliveryStore
          for (let i = 0; i < 4; i++) yield* write(`pay_${i}`)
          const at = new Date(tick())
          // 12 due (3 endpoints, 4 each, room 8 each): the partner's 5 only.
          const first = yield* store.claimDue(at, 100, 60_000, 8, 5)
          expect(first.length).toBe(5)
          expect(yield* store.claimDue(at, 100, 60_000, 8, 5)).toEqual([])
          // One settled: one more place, whichever endpoint it goes to.
          yield* store.record(first[0]!.lease, outcome("delivered", at))
          expect((yield* store.claimDue(at, 100, 60_000, 8, 5)).length).toBe(1)
          // Without a partner cap, the rest.
          expect((yield* store.claimDue(at, 100, 60_000, 8)).length).toBe(6)
        })
      )

      test(
        "never more in flight to one endpoint than its limit; disabled and deleted endpoints' deliveries wait",
        Effect.gen(function* () {
          const { endpoints, write } = yield* deliverySetup({}, {}, {})
          const [busy, toDisable, toDelete] = endpoints
          const store = yield* WebhookDeliveryStore
          const endpointStore = yield* WebhookEndpointStore
          for (let i = 0; i < 5; i++) yield* write(`pay_${i}`)
          const at = new Date(tick())
          yield* endpointStore.update(toDisable!.id, { status: "disabled" }, at)
          yield* endpointStore.markDeleted(toDelete!.id, at)
          const first = yield* store.claimDue(at, 100, 60_000, 2)
          expect(first.map((c) => c.endpoint.id)).toEqual([busy!.id, busy!.id])
          // Two in flight: none more, in this claim or the next.
          expect(yield* store.claimDue(at, 100, 60_000, 2)).toEqual([])
          yield* store.record(first[0]!.lease, outcome("delivered", at))
          expect((yield* store.claimDue(at, 100, 60_000, 2)).length).toBe(1)
          // Let go without an attempt (an instance stopping): due again at once, attempts unchanged.
          yield* store.release(first[1]!.lease, at)
          const released = Option.getOrThrow(yield* store.find(busy!.id, first[1]!.event.id))
          expect([released.delivery.state, released.delivery.attempts, released.attempts]).toEqual([
            "pending",
            0,
            []
          ])
          const retaken = yield* store.claimDue(at, 100, 60_000, 10)
          expect(retaken.map((c) => c.event.id)).toContain(first[1]!.event.id)
          // Enabled again: its deliveries go.
          yield* endpointStore.update(toDisable!.id, { status: "enabled" }, at)
          expect((yield* store.claimDue(at, 100, 60_000, 2)).map((c) => c.endpoint.id)).toEqual([
            toDisable!.id,
            toDisable!.id
          ])
        })
      )

      test(
        "eight claims at once never lease one delivery twice, nor more than the limit to one endpoint",
        Effect.gen(function* () {
          const { write } = yield* deliverySetup({}, {}, {})
          const store = yield* WebhookDeliveryStore
          for (let i = 0; i < 12; i++) yield* write(i % 3 === 0 ? null : `pay_${i}`)
          const at = new Date(tick())
          // Rounds of eight at once until one claims nothing (a claim skips an endpoint another
          // is claiming for, so one round may not fill every endpoint).
          const claimed: Array<ClaimedDelivery> = []
          for (let round = 0; round < 10; round++) {
            const got = (yield* Effect.all(
              Array.from({ length: 8 }, () => store.claimDue(at, 5, 60_000, 3)),
              { concurrency: "unbounded" }
            )).flat()
            if (got.length === 0) break
            claimed.push(...got)
          }
          const keys = claimed.map((c) => `${c.endpoint.id}/${c.event.id}`)
          expect(new Set(keys).size).toBe(keys.length)
          const perEndpoint = new Map<string, number>()
          for (const c of claimed) {
            perEndpoint.set(c.endpoint.id, (perEndpoint.get(c.endpoint.id) ?? 0) + 1)
          }
          // 36 deliveries due, three endpoints at three each: exactly nine leased.
          expect([...perEndpoint.values()]).toEqual([3, 3, 3])
        })
      )

      test(
        "disable an endpoint for a 410 at once, and after a run of failures as long as the limit; a success ends the run",
        Effect.gen(function* () {
          const { endpoints, write } = yield* deliverySetup({}, {})
          const [gone, flaky] = endpoints
          const store = yield* WebhookDeliveryStore
          const endpointStore = yield* WebhookEndpointStore
          for (let i = 0; i < 4; i++) yield* write(`pay_${i}`)
          const t = tick()
          /** One of the endpoint's deliveries; the others claimed with it are let go. */
          const claim = (endpointId: string, at: number) =>
            Effect.gen(function* () {
              const claimed = yield* store.claimDue(new Date(at), 100, 60_000, 1)
              for (const c of claimed) {
                if (c.endpoint.id !== endpointId) yield* store.release(c.lease, new Date(at))
              }
              return claimed.find((c) => c.endpoint.id === endpointId)!
            })
          const first = yield* claim(gone!.id, t)
          yield* store.record(
            first.lease,
            outcome("failed", new Date(t), { endpoint: { _tag: "Gone", reason: "answered 410" } })
          )
          const goneNow = Option.getOrThrow(yield* endpointStore.find(gone!.id))
          expect([goneNow.status, goneNow.disabledReason]).toEqual(["disabled", "answered 410"])
          const failing = (at: number, sinceLimit: number) =>
            outcome("pending", new Date(at), {
              nextAttemptAt: new Date(at),
              endpoint: {
                _tag: "Failed",
                disableIfFailingSince: new Date(sinceLimit),
                reason: "failed for 5 days"
              }
            })
          const statusOf = Effect.map(
            endpointStore.find(flaky!.id),
            (e) => Option.getOrThrow(e).status
          )
          // Failing since t: not yet long enough at t + 10.
          yield* store.record((yield* claim(flaky!.id, t)).lease, failing(t, t - 100))
          yield* store.record((yield* claim(flaky!.id, t + 10)).lease, failing(t + 10, t - 90))
          expect(yield* statusOf).toBe("enabled")
          // A success ends the run; the next failure starts a new one at t + 30.
          yield* store.record(
            (yield* claim(flaky!.id, t + 20)).lease,
            outcome("delivered", new Date(t + 20))
          )
          yield* store.record((yield* claim(flaky!.id, t + 30)).lease, failing(t + 30, t + 10))
          expect(yield* statusOf).toBe("enabled")
          yield* store.record((yield* claim(flaky!.id, t + 40)).lease, failing(t + 40, t + 30))
          const disabled = Option.getOrThrow(yield* endpointStore.find(flaky!.id))
          expect([disabled.status, disabled.disabledReason]).toEqual([
            "disabled",
            "failed for 5 days"
          ])
          // Enabled again by the partner: its run of failures starts over.
          yield* endpointStore.update(
            flaky!.id,
            { status: "enabled", disabledReason: null },
            new Date(t + 50)
          )
          yield* store.record((yield* claim(flaky!.id, t + 60)).lease, failing(t + 60, t + 30))
          expect(yield* statusOf).toBe("enabled")
          yield* store.record((yield* claim(flaky!.id, t + 70)).lease, failing(t + 70, t + 60))
          expect(yield* statusOf).toBe("disabled")
        })
      )

      test(
        "redeliver an event: the same delivery made pending with a fresh schedule and its attempts kept, or a new one; a direct event reaches one endpoint only",
        Effect.gen(function* () {
          const { endpoints, write, partner } = yield* deliverySetup({}, {})
          const [one, other] = endpoints
          const store = yield* WebhookDeliveryStore
          const event = yield* write("pay_x")
          const at = new Date(tick())
          for (const c of yield* store.claimDue(at, 10, 60_000, 8)) {
            yield* store.record(c.lease, outcome("failed", at))
          }
          const later = new Date(tick())
          const again = yield* store.redeliver(one!.id, event, later)
          expect([again.state, again.attempts, again.nextAttemptAt]).toEqual(["pending", 0, later])
          const kept = Option.getOrThrow(yield* store.find(one!.id, event.id))
          expect(kept.attempts.length).toBe(1)
          // An endpoint registered after the event gets it when asked.
          const late = anEndpoint(partner)
          yield* (yield* WebhookEndpointStore).insert(late)
          const added = yield* store.redeliver(late.id, event, later)
          expect([added.endpointId, added.state, added.attempts]).toEqual([late.id, "pending", 0])
          const claimed = yield* store.claimDue(later, 10, 60_000, 8)
          expect(claimed.map((c) => c.endpoint.id).sort()).toEqual([one!.id, late.id].sort())
          // A ping: its event is written, and queued to that endpoint only.
          const ping = new PayEvent({
            id: eventId(),
            partnerId: partner.id,
            type: "ping",
            createdAt: new Date(tick()),
            paymentId: null,
            merchantId: null,
            data: "{}"
          })
          const queued = yield* store.queueDirect(ping, other!.id)
          expect([queued.endpointId, queued.eventId, queued.state]).toEqual([
            other!.id,
            ping.id,
            "pending"
          ])
          expect(Option.getOrThrow(yield* (yield* EventStore).find(ping.id))).toEqual(ping)
          expect(Option.isNone(yield* store.find(one!.id, ping.id))).toBe(true)
          const pinged = yield* store.claimDue(ping.createdAt, 10, 60_000, 8)
          expect(pinged.map((c) => [c.endpoint.id, c.event.type])).toEqual([[other!.id, "ping"]])
        })
      )

      test(
        "rotate the secret keeping the previous one, with the idempotent answer in the same write",
        Effect.gen(function* () {
          const { partner } = yield* seed
          const store = yield* WebhookEndpointStore
          const keys = yield* IdempotencyStore
          const endpoint = anEndpoint(partner)
          yield* store.insert(endpoint)
          const s = scope("rotate-1", partner.id, "POST /rotate")
          yield* keys.claim(s, "fp", "t1", new Date(tick()), new Date(0))
          const until = new Date(tick() + 86_400_000)
          const rotated = Option.getOrThrow(
            yield* store.rotateSecret(
              endpoint.id,
              { secret: "v1.new", previousSecret: endpoint.secret, previousSecretExpiresAt: until },
              new Date(tick()),
              { scope: s, token: "t1", response: { status: 200, body: "rotated" } }
            )
          )
          expect([rotated.secret, rotated.previousSecret, rotated.previousSecretExpiresAt]).toEqual(
            ["v1.new", "v1.sealed-secret", until]
          )
          expect(yield* keys.claim(s, "fp", "t2", new Date(tick()), new Date(0))).toEqual({
            _tag: "Replay",
            response: { status: 200, body: "rotated" }
          })
          yield* store.markDeleted(endpoint.id, new Date(tick()))
          expect(
            Option.isNone(
              yield* store.rotateSecret(
                endpoint.id,
                { secret: "v1.newer", previousSecret: null, previousSecretExpiresAt: null },
                new Date(tick())
              )
            )
          ).toBe(true)
        })
      )
    })
  })
