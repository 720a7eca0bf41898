/**
 * The merchant rules: a partner sees and changes only its own merchants, a
 * deleted merchant is gone for everything but a repeated delete, and status
 * is the operator's to change, never a PATCH's. A logo URL is fetched,
 * checked and frozen (LogoCapture, LogoStore) before the merchant is written,
 * outside any transaction: a refused logo writes no merchant.
 */
import { Clock, Effect, Option } from "effect"
import { eventOf, stamp } from "../events/NewEvent.js"
import { HttpConfig } from "../http/HttpConfig.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { Partner } from "../identity/Partner.js"
import { Forbidden } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import { LogoCapture, LogoStore } from "./Logo.js"
import {
  Merchant,
  type MerchantChanges,
  type MerchantId,
  MerchantNotFound,
  type MerchantStatus
} from "./Merchant.js"
import { type MerchantQuery, MerchantStore } from "./MerchantStore.js"
import { merchantProfileView } from "./MerchantView.js"
import { SettlementStore } from "./SettlementStore.js"

export interface NewMerchant {
  readonly name: string
  readonly email: string
  readonly iconUrl: string | null
}

/** What a PATCH may change: `iconUrl` null removes the logo, a URL freezes it anew. */
export interface MerchantUpdate {
  readonly name?: string | undefined
  readonly email?: string | undefined
  readonly iconUrl?: string | null | undefined
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * How long a merchant read for a new payment is used again: a change made by
 * another process (an instance, the CLI) is honoured by every create at most
 * this long after it committed; one made through this process, at once.
 */
export const MERCHANT_READ_REUSE_MS = 500
/** Merchants kept at once; past it the oldest read goes first. */
const MERCHANT_READS_KEPT = 10_000

export class Merchants extends Effect.Service<Merchants>()("@pay/core/Merchants", {
  effect: Effect.gen(function* () {
    const store = yield* MerchantStore
    const settlementStore = yield* SettlementStore
    const { publicUrl } = yield* HttpConfig

    /**
     * The outbox of a change to a merchant: `merchant.updated` carrying its
     * profile as the API shows it, with its live settlements.
     */
    const updatedEvent = (id: MerchantId) =>
      Effect.gen(function* () {
        const at = yield* stamp
        const settlements = yield* settlementStore.listByMerchant(id)
        return (m: Merchant) => [
          eventOf(
            at,
            m.partnerId,
            "merchant.updated",
            merchantProfileView(publicUrl, m, settlements),
            { merchantId: m.id }
          )
        ]
      })
    const logoCapture = yield* LogoCapture
    const logoStore = yield* LogoStore

    /**
     * Fetches, checks and keeps the logo (even a URL given before: its image may
     * have changed). An orphan kept by a write that then fails is harmless: its
     * name is its content's.
     */
    const freezeLogo = (iconUrl: string) =>
      Effect.gen(function* () {
        const logo = yield* logoCapture.capture(iconUrl)
        yield* logoStore.put(logo)
        return { iconUrl, logoName: logo.name }
      })

    /** The merchant `read` found, if it is the partner's, deleted or not. */
    const owned =
      (partner: Partner, id: MerchantId) =>
      (found: Option.Option<Merchant>): Effect.Effect<Merchant, MerchantNotFound | Forbidden> => {
        if (Option.isNone(found)) return Effect.fail(new MerchantNotFound({ merchantId: id }))
        if (found.value.partnerId !== partner.id) {
          return Effect.fail(
            new Forbidden({ message: `Merchant ${id} belongs to another partner account` })
          )
        }
        return Effect.succeed(found.value)
      }

    /** A deleted merchant is gone for everything but a repeated delete. */
    const live = (merchant: Merchant): Effect.Effect<Merchant, MerchantNotFound> =>
      merchant.deletedAt === null
        ? Effect.succeed(merchant)
        : Effect.fail(new MerchantNotFound({ merchantId: merchant.id }))

    /** The merchant if it is the partner's, deleted or not. */
    const findOwned = (partner: Partner, id: MerchantId) =>
      Effect.flatMap(store.find(id), owned(partner, id))

    /** The partner's live merchant: what every route but delete works on. */
    const get = (partner: Partner, id: MerchantId) => Effect.flatMap(findOwned(partner, id), live)

    // Every payment created reads its merchant (owner, deleted, status); under load most of
    // those reads are of a few merchants, so a read is used again for MERCHANT_READ_REUSE_MS.
    // Only found merchants are kept: one created elsewhere a moment ago is read at once.
    const clock = yield* Effect.clock
    const recentReads = new Map<MerchantId, { readonly merchant: Merchant; readonly at: number }>()
    // Counts this process's merchant writes: a read that was under way during one is not
    // kept, or a create right after a suspension could reuse what the read saw before it.
    let writes = 0
    const forget = (id: MerchantId) =>
      Effect.sync(() => {
        writes++
        recentReads.delete(id)
      })
    const readRecently = (id: MerchantId) =>
      Effect.suspend(() => {
        const at = clock.unsafeCurrentTimeMillis()
        const kept = recentReads.get(id)
        if (kept !== undefined && at - kept.at < MERCHANT_READ_REUSE_MS) {
          return Effect.succeed(Option.some(kept.merchant))
        }
        const writesBefore = writes
        return Effect.tap(store.find(id), (found) => {
          recentReads.delete(id)
          if (Option.isNone(found) || writes !== writesBefore) return
          if (recentReads.size >= MERCHANT_READS_KEPT) {
            const oldest = recentReads.keys().next()
            if (!oldest.done) recentReads.delete(oldest.value)
          }
          recentReads.set(id, { merchant: found.value, at })
        })
      })

    /**
     * `get` for a new payment: the same answers, from a read at most
     * MERCHANT_READ_REUSE_MS old (this process's own changes are seen at once).
     */
    const getForPayment = (partner: Partner, id: MerchantId) =>
      Effect.flatMap(Effect.flatMap(readRecently(id), owned(partner, id)), live)

    const create = (
      partner: Partner,
      input: NewMerchant,
      complete?: (merchant: Merchant) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        const logo = input.iconUrl === null ? null : yield* freezeLogo(input.iconUrl)
        const at = yield* now
        const merchant = new Merchant({
          id: yield* newId<MerchantId>("mrch"),
          partnerId: partner.id,
          name: input.name,
          email: input.email,
          iconUrl: logo?.iconUrl ?? null,
          logoName: logo?.logoName ?? null,
          status: "active",
          createdAt: at,
          updatedAt: at,
          deletedAt: null
        })
        const created = yield* stamp
        yield* store.insert(merchant, complete?.(merchant), (m) => [
          eventOf(created, m.partnerId, "merchant.created", merchantProfileView(publicUrl, m, []), {
            merchantId: m.id
          })
        ])
        return merchant
      })

    const list = (partner: Partner, query: Omit<MerchantQuery, "partnerId">) =>
      store.list({ ...query, partnerId: partner.id })

    const update = (partner: Partner, id: MerchantId, update: MerchantUpdate) =>
      Effect.gen(function* () {
        yield* get(partner, id)
        const { iconUrl } = update
        const changes: MerchantChanges = {
          name: update.name,
          email: update.email,
          logo: iconUrl === undefined || iconUrl === null ? iconUrl : yield* freezeLogo(iconUrl)
        }
        const outbox = yield* updatedEvent(id)
        const updated = yield* store
          .update(id, changes, yield* now, outbox)
          .pipe(Effect.ensuring(forget(id)))
        // Deleted between the check and the write.
        return yield* Option.match(updated, {
          onNone: () => new MerchantNotFound({ merchantId: id }),
          onSome: Effect.succeed
        })
      })

    /** Idempotent: deleting a deleted merchant answers as the first time did. */
    const remove = (partner: Partner, id: MerchantId) =>
      Effect.gen(function* () {
        yield* findOwned(partner, id)
        const at = yield* stamp
        const deleted = yield* store
          .markDeleted(id, yield* now, (m) => [
            eventOf(
              at,
              m.partnerId,
              "merchant.deleted",
              { id: m.id, deleted: true },
              {
                merchantId: m.id
              }
            )
          ])
          .pipe(Effect.ensuring(forget(id)))
        return yield* Option.match(deleted, {
          onNone: () => new MerchantNotFound({ merchantId: id }),
          onSome: Effect.succeed
        })
      })

    /** The operator's switch (CLI), across partners. */
    const setStatus = (id: MerchantId, status: MerchantStatus) =>
      Effect.gen(function* () {
        const outbox = yield* updatedEvent(id)
        const updated = yield* store
          .setStatus(id, status, yield* now, outbox)
          .pipe(Effect.ensuring(forget(id)))
        return yield* Option.match(updated, {
          onNone: () => new MerchantNotFound({ merchantId: id }),
          onSome: Effect.succeed
        })
      })

    /** Any merchant by id, deleted ones too, without an owner check: for names in payment views. */
    const lookup = (id: MerchantId) => store.find(id)

    return {
      get,
      getForPayment,
      create: spanned("Merchants.create", create),
      list: spanned("Merchants.list", list),
      update: spanned("Merchants.update", update),
      remove: spanned("Merchants.remove", remove),
      setStatus: spanned("Merchants.setStatus", setStatus),
      lookup
    } as const
  })
}) {}
