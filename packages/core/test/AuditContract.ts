/**
 * The audit trail's storage contract: a change's entries are written in its
 * transaction (there when it committed, gone when it rolled back, none when
 * it changed nothing), kept as they were given (actor, before and after as
 * JSON), and listed newest first, per partner or for all, a page at a time.
 * Run by each storage package beside the storage contract.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer, Option } from "effect"
import {
  type AuditAction,
  type AuditActor,
  AuditEntry,
  type AuditEntryId,
  apiKeyActor,
  cliActor,
  embedderActor,
  engineActor
} from "../src/audit/AuditEntry.js"
import { AuditStore } from "../src/audit/AuditStore.js"
import { auditEntryOf } from "../src/audit/NewAuditEntry.js"
import type { IdempotencyScope } from "../src/idempotency/IdempotencyStore.js"
import { IdempotencyClaimLost, IdempotencyStore } from "../src/idempotency/IdempotencyStore.js"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import type { CryptoSettlement, CryptoSettlementId } from "../src/merchants/Settlement.js"
import { SettlementStore } from "../src/merchants/SettlementStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import type { Caip10, Caip19 } from "../src/shared/Caip.js"
import { makeIdBody } from "../src/shared/Ids.js"
import { partnerKey } from "./KeyFixtures.js"

export type AuditStores =
  | AuditStore
  | PartnerStore
  | MerchantStore
  | SettlementStore
  | IdempotencyStore

const T0 = Date.UTC(2026, 1, 1, 9, 0, 0)
let clock = T0
/** Distinct, increasing times, so ids sort in creation order. */
const tick = () => {
  clock += 1000
  return clock
}

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42" as Caip19
const WALLET_A = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10
const WALLET_B = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10

/** A distinct ERC-20 asset on Base per number. */
const erc20 = (n: number) => `eip155:8453/erc20:0x${n.toString(16).padStart(40, "0")}` as Caip19

const auditId = () => `aud_${makeIdBody(tick())}` as AuditEntryId

/** A partner and one merchant of it, stored. */
const seed = Effect.gen(function* () {
  const at = new Date(tick())
  const partner = new Partner({
    id: `ptnr_${makeIdBody(tick())}` as PartnerId,
    name: "Audited",
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
  return { partner, merchant }
})

const aSettlement = (merchant: Merchant, asset: Caip19, destination = WALLET_A) => {
  const at = new Date(tick())
  return {
    id: `crypto_${makeIdBody(tick())}` as CryptoSettlementId,
    merchantId: merchant.id,
    asset,
    destination,
    createdAt: at,
    updatedAt: at
  } satisfies CryptoSettlement
}

const settlementValue = (s: CryptoSettlement | null) =>
  s && { asset: s.asset, destination: s.destination }

/** The entry a settlement write records: made from what the write hands its log. */
const entry = (
  partnerId: PartnerId,
  action: AuditAction,
  before: CryptoSettlement | null,
  after: CryptoSettlement | null,
  actor: AuditActor = apiKeyActor("key_contract")
): AuditEntry => {
  const subject = (after ?? before)!
  return auditEntryOf(
    { id: auditId(), at: new Date(tick()) },
    {
      partnerId,
      actor,
      action,
      subject: subject.id,
      merchantId: subject.merchantId,
      before: settlementValue(before),
      after: settlementValue(after)
    }
  )
}

/** What the list shows of entries, for comparing. */
const summary = (entries: ReadonlyArray<AuditEntry>) =>
  entries.map((e) => [e.action, e.subject, e.before, e.after])

const died = <A, E, R>(write: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(write), (exit) =>
    Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
  )

/**
 * Registers the suite. `layer` must give a fresh, empty store each time it is
 * built: each test builds it once.
 */
export const auditStorageContract = (
  name: string,
  layer: () => Layer.Layer<AuditStores, unknown>
) =>
  describe(`audit storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, AuditStores>) =>
      it.effect(title, () => Effect.provide(body, layer()), 20_000)

    test(
      "records each settlement created, changed and removed with its change, old and new values, newest first",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed
        const store = yield* SettlementStore
        const audit = yield* AuditStore
        const usdc = aSettlement(merchant, USDC_BASE)
        const eurc = aSettlement(merchant, EURC_BASE)
        yield* store.insertAll([usdc, eurc], undefined, undefined, (rows) =>
          rows.map((s) => entry(partner.id, "settlement.created", null, s))
        )
        const at = new Date(tick())
        const moved = Option.getOrThrow(
          yield* store.updateDestination(
            merchant.id,
            usdc.id,
            WALLET_B,
            at,
            undefined,
            ({ before, after }) => [entry(partner.id, "settlement.updated", before, after)]
          )
        )
        expect(moved.destination).toBe(WALLET_B)
        const removal = (before: CryptoSettlement) => [
          entry(partner.id, "settlement.deleted", before, null)
        ]
        expect(yield* store.remove(merchant.id, eurc.id, at, undefined, removal)).toBe("removed")

        const listed = yield* audit.list({ partnerId: partner.id, limit: 10 })
        expect(summary(listed)).toEqual([
          ["settlement.deleted", eurc.id, settlementValue(eurc), null],
          [
            "settlement.updated",
            usdc.id,
            { asset: USDC_BASE, destination: WALLET_A },
            { asset: USDC_BASE, destination: WALLET_B }
          ],
          ["settlement.created", eurc.id, null, settlementValue(eurc)],
          ["settlement.created", usdc.id, null, settlementValue(usdc)]
        ])
        for (const e of listed) {
          expect(e.partnerId).toBe(partner.id)
          expect(e.merchantId).toBe(merchant.id)
          expect(e.actor).toEqual({ kind: "api_key", keyId: "key_contract" })
          expect(e.id).toMatch(/^aud_/)
          expect(e.at).toBeInstanceOf(Date)
        }
      })
    )

    test(
      "records nothing for a change that changed nothing: a second removal, an unknown or removed settlement",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed
        const store = yield* SettlementStore
        const usdc = aSettlement(merchant, USDC_BASE)
        yield* store.insertAll([usdc])
        const at = new Date(tick())
        const removal = (before: CryptoSettlement) => [
          entry(partner.id, "settlement.deleted", before, null)
        ]
        const change = ({
          before,
          after
        }: {
          readonly before: CryptoSettlement
          readonly after: CryptoSettlement
        }) => [entry(partner.id, "settlement.updated", before, after)]
        const unknown = `crypto_${makeIdBody(tick())}` as CryptoSettlementId
        expect(yield* store.remove(merchant.id, unknown, at, undefined, removal)).toBe("not_found")
        yield* store.updateDestination(merchant.id, unknown, WALLET_B, at, undefined, change)
        expect(yield* store.remove(merchant.id, usdc.id, at, undefined, removal)).toBe("removed")
        expect(yield* store.remove(merchant.id, usdc.id, at, undefined, removal)).toBe(
          "already_removed"
        )
        yield* store.updateDestination(merchant.id, usdc.id, WALLET_B, at, undefined, change)
        const listed = yield* (yield* AuditStore).list({ partnerId: partner.id, limit: 10 })
        expect(summary(listed)).toEqual([
          ["settlement.deleted", usdc.id, settlementValue(usdc), null]
        ])
      })
    )

    test(
      "writes no entry for a change that rolls back: an asset conflict, a lost idempotency claim",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed
        const store = yield* SettlementStore
        const audit = yield* AuditStore
        const created = (rows: ReadonlyArray<CryptoSettlement>) =>
          rows.map((s) => entry(partner.id, "settlement.created", null, s))
        const usdc = aSettlement(merchant, USDC_BASE)
        yield* store.insertAll([usdc], undefined, undefined, created)
        // EURC first, then a USDC that clashes: neither is kept, nor audited.
        const clash = yield* Effect.flip(
          store.insertAll(
            [aSettlement(merchant, EURC_BASE), aSettlement(merchant, USDC_BASE)],
            undefined,
            undefined,
            created
          )
        )
        expect(clash._tag).toBe("SettlementAssetConflict")

        const keys = yield* IdempotencyStore
        const scope: IdempotencyScope = {
          partnerId: partner.id,
          route: "POST /settlements",
          key: `audit-${tick()}`
        }
        yield* keys.claim(scope, "fp", "t1", new Date(tick()), new Date(0))
        yield* keys.release(scope, "t1")
        const late = aSettlement(merchant, EURC_BASE)
        expect(
          yield* died(
            store.insertAll(
              [late],
              { scope, token: "t1", response: { status: 201, body: "late" } },
              undefined,
              created
            )
          )
        ).toBeInstanceOf(IdempotencyClaimLost)

        expect(summary(yield* audit.list({ partnerId: partner.id, limit: 10 }))).toEqual([
          ["settlement.created", usdc.id, null, settlementValue(usdc)]
        ])
        expect((yield* store.listByMerchant(merchant.id)).map((s) => s.id)).toEqual([usdc.id])
      })
    )

    test(
      "makes no change whose entry cannot be written (the entry's id is taken): one transaction",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed
        const store = yield* SettlementStore
        const audit = yield* AuditStore
        const usdc = aSettlement(merchant, USDC_BASE)
        const created = entry(partner.id, "settlement.created", null, usdc)
        yield* store.insertAll([usdc], undefined, undefined, () => [created])
        /** The entry `make` makes, under the id of the one written already. */
        const taken =
          <A>(make: (changed: A) => AuditEntry) =>
          (changed: A) => [new AuditEntry({ ...make(changed), id: created.id })]
        const at = new Date(tick())
        expect(
          yield* died(
            store.updateDestination(
              merchant.id,
              usdc.id,
              WALLET_B,
              at,
              undefined,
              taken(({ before, after }) => entry(partner.id, "settlement.updated", before, after))
            )
          )
        ).toBeDefined()
        expect(
          yield* died(
            store.remove(
              merchant.id,
              usdc.id,
              at,
              undefined,
              taken((before) => entry(partner.id, "settlement.deleted", before, null))
            )
          )
        ).toBeDefined()
        expect(yield* store.listByMerchant(merchant.id)).toEqual([usdc])
        expect(summary(yield* audit.list({ partnerId: partner.id, limit: 10 }))).toEqual([
          ["settlement.created", usdc.id, null, settlementValue(usdc)]
        ])
      })
    )

    test(
      "keeps every kind of actor as given",
      Effect.gen(function* () {
        const { partner, merchant } = yield* seed
        const store = yield* SettlementStore
        const actors: ReadonlyArray<AuditActor> = [
          apiKeyActor("key_0123456789"),
          apiKeyActor(),
          cliActor,
          embedderActor,
          engineActor
        ]
        const rows = [USDC_BASE, EURC_BASE, ...[1, 2, 3].map(erc20)].map((asset) =>
          aSettlement(merchant, asset)
        )
        yield* store.insertAll(rows, undefined, undefined, (written) =>
          written.map((s, i) => entry(partner.id, "settlement.created", null, s, actors[i]))
        )
        const listed = yield* (yield* AuditStore).list({ partnerId: partner.id, limit: 10 })
        expect(listed.map((e) => e.actor).reverse()).toEqual(actors)
      })
    )

    test(
      "lists one partner's entries or everyone's, newest first, a page at a time",
      Effect.gen(function* () {
        const first = yield* seed
        const second = yield* seed
        const store = yield* SettlementStore
        const audit = yield* AuditStore
        const register = (s: typeof first, asset: Caip19) => {
          const settlement = aSettlement(s.merchant, asset)
          return Effect.as(
            store.insertAll([settlement], undefined, undefined, (rows) =>
              rows.map((r) => entry(s.partner.id, "settlement.created", null, r))
            ),
            settlement.id
          )
        }
        const ids = [
          yield* register(first, USDC_BASE),
          yield* register(second, USDC_BASE),
          yield* register(first, EURC_BASE),
          yield* register(second, EURC_BASE),
          yield* register(first, erc20(1))
        ]
        const subjects = (entries: ReadonlyArray<AuditEntry>) => entries.map((e) => e.subject)

        const everyone = yield* audit.list({ limit: 100 })
        expect(subjects(everyone)).toEqual([...ids].reverse())
        const mine = yield* audit.list({ partnerId: first.partner.id, limit: 100 })
        expect(subjects(mine)).toEqual([ids[4], ids[2], ids[0]])

        const page = yield* audit.list({ partnerId: first.partner.id, limit: 2 })
        expect(subjects(page)).toEqual([ids[4], ids[2]])
        const next = yield* audit.list({
          partnerId: first.partner.id,
          before: page[1]!.id,
          limit: 2
        })
        expect(subjects(next)).toEqual([ids[0]])
        const rest = yield* audit.list({ before: everyone[1]!.id, limit: 3 })
        expect(subjects(rest)).toEqual([ids[2], ids[1], ids[0]])
        expect(yield* audit.list({ before: auditId(), limit: 10 })).toEqual([])
      })
    )
  })
