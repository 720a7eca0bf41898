/**
 * The settlement rules: a destination must be on its asset's chain, a
 * merchant has one live settlement per asset, and only the merchant's own
 * partner sees or changes them. Every change is recorded in the audit trail
 * with who made it (`actor`), in the change's own transaction. A settlement in
 * an asset none of the engine's networks can pay is kept, with a warning in the
 * answer and the log (SettlementWarnings.ts).
 */
import { Clock, Effect, Option } from "effect"
import type { AuditAction, AuditActor } from "../audit/AuditEntry.js"
import { type AuditStamp, auditEntryOf, auditStamp, auditStamps } from "../audit/NewAuditEntry.js"
import { Chain } from "../chain/Chain.js"
import { eventOf, stamp, stamps } from "../events/NewEvent.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { Partner } from "../identity/Partner.js"
import { type Caip10, type Caip19, chainOfCaip10, chainOfCaip19 } from "../shared/Caip.js"
import { type FieldIssue, InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import type { MerchantId } from "./Merchant.js"
import { Merchants } from "./Merchants.js"
import {
  type CryptoSettlement,
  type CryptoSettlementId,
  SettlementAssetConflict,
  SettlementNotFound
} from "./Settlement.js"
import { SettlementStore } from "./SettlementStore.js"
import { settlementView } from "./SettlementView.js"
import { type SettlementWarning, settlementWarnings } from "./SettlementWarnings.js"

export interface NewCryptoSettlement {
  readonly asset: Caip19
  readonly destination: Caip10
}

/** What the audit trail keeps of a settlement: where the money in which asset goes. */
export const settlementAuditValue = (s: CryptoSettlement) => ({
  asset: s.asset,
  destination: s.destination
})

/** Settlements just registered, with the warnings about them (empty when every asset can be paid). */
export interface RegisteredSettlements {
  readonly settlements: ReadonlyArray<CryptoSettlement>
  readonly warnings: ReadonlyArray<SettlementWarning>
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** Why `destination` cannot receive `asset` (another chain's account), or undefined. */
export const chainMismatch = (asset: Caip19, destination: Caip10): string | undefined => {
  const [assetChain, destinationChain] = [chainOfCaip19(asset), chainOfCaip10(destination)]
  return assetChain === destinationChain
    ? undefined
    : `must be an account on ${assetChain}, the asset's chain, not on ${destinationChain}`
}

export class Settlements extends Effect.Service<Settlements>()("@pay/core/Settlements", {
  effect: Effect.gen(function* () {
    const store = yield* SettlementStore
    const merchants = yield* Merchants
    const chain = yield* Chain
    const registry = yield* TokenRegistry

    /** The warnings about `assets`, given every asset the merchant settles in after the change. */
    const warningsOf = (assets: ReadonlyArray<Caip19>, live: ReadonlyArray<Caip19>) =>
      settlementWarnings(chain.networks, registry, assets, live)

    const logWarnings = (merchantId: MerchantId, warnings: ReadonlyArray<SettlementWarning>) =>
      Effect.forEach(
        warnings,
        (w) =>
          Effect.logWarning("settlement saved in an asset no configured network pays", {
            merchantId,
            asset: w.asset,
            code: w.code,
            reason: w.message
          }),
        { discard: true }
      )

    /** An audit entry of `partner`'s settlement change by `actor`. */
    const auditOf =
      (partner: Partner, actor: AuditActor, action: AuditAction) =>
      (
        stamp: AuditStamp,
        subject: CryptoSettlementId,
        merchantId: MerchantId,
        before: CryptoSettlement | null,
        after: CryptoSettlement | null
      ) =>
        auditEntryOf(stamp, {
          partnerId: partner.id,
          actor,
          action,
          subject,
          merchantId,
          before: before && settlementAuditValue(before),
          after: after && settlementAuditValue(after)
        })

    /** `actor`: who registers them, for the audit trail (a request's key, the embedder, …). */
    const register = (
      partner: Partner,
      merchantId: MerchantId,
      entries: ReadonlyArray<NewCryptoSettlement>,
      actor: AuditActor,
      complete?: (registered: RegisteredSettlements) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        yield* merchants.get(partner, merchantId)
        const issues: Array<FieldIssue> = []
        entries.forEach(({ asset, destination }, i) => {
          const mismatch = chainMismatch(asset, destination)
          if (mismatch) issues.push({ field: `settlements.${i}.destination`, message: mismatch })
        })
        if (issues.length > 0) {
          return yield* new InvalidInput({ message: "Settlement destinations are invalid", issues })
        }
        const seen = new Set<string>()
        for (const { asset } of entries) {
          if (seen.has(asset)) return yield* new SettlementAssetConflict({ asset, merchantId })
          seen.add(asset)
        }
        // Read before the insert: a warning's words, not a rule, so a concurrent change may be missed.
        const existing = yield* store.listByMerchant(merchantId)
        const assets = entries.map((e) => e.asset)
        const warnings = warningsOf(assets, [...existing.map((s) => s.asset), ...assets])
        const at = yield* now
        const settlements = yield* Effect.forEach(entries, ({ asset, destination }) =>
          Effect.map(
            newId<CryptoSettlementId>("crypto"),
            (id): CryptoSettlement => ({
              id,
              merchantId,
              asset,
              destination,
              createdAt: at,
              updatedAt: at
            })
          )
        )
        const created = yield* stamps(settlements.length)
        const audited = yield* auditStamps(settlements.length)
        const entryOf = auditOf(partner, actor, "settlement.created")
        yield* store.insertAll(
          settlements,
          complete?.({ settlements, warnings }),
          (rows) =>
            rows.map((s, i) =>
              eventOf(created[i]!, partner.id, "settlement.created", settlementView(s), {
                merchantId
              })
            ),
          (rows) => rows.map((s, i) => entryOf(audited[i]!, s.id, merchantId, null, s))
        )
        yield* logWarnings(merchantId, warnings)
        return { settlements, warnings } satisfies RegisteredSettlements
      })

    const list = (partner: Partner, merchantId: MerchantId) =>
      Effect.gen(function* () {
        yield* merchants.get(partner, merchantId)
        return yield* store.listByMerchant(merchantId)
      })

    const changeDestination = (
      partner: Partner,
      merchantId: MerchantId,
      id: CryptoSettlementId,
      destination: Caip10,
      actor: AuditActor
    ) =>
      Effect.gen(function* () {
        const live = yield* list(partner, merchantId)
        const current = live.find((s) => s.id === id)
        if (current === undefined) return yield* new SettlementNotFound({ settlementId: id })
        const mismatch = chainMismatch(current.asset, destination)
        if (mismatch) return yield* InvalidInput.of("destination", mismatch)
        const at = yield* stamp
        const audited = yield* auditStamp
        const entryOf = auditOf(partner, actor, "settlement.updated")
        const updated = yield* store.updateDestination(
          merchantId,
          id,
          destination,
          yield* now,
          (s) => [eventOf(at, partner.id, "settlement.updated", settlementView(s), { merchantId })],
          ({ before, after }) => [entryOf(audited, id, merchantId, before, after)]
        )
        const settlement = yield* Option.match(updated, {
          onNone: () => new SettlementNotFound({ settlementId: id }),
          onSome: Effect.succeed
        })
        const warnings = warningsOf(
          [settlement.asset],
          live.map((s) => s.asset)
        )
        yield* logWarnings(merchantId, warnings)
        return { settlement, warnings }
      })

    /** Idempotent, like merchant deletion. */
    const remove = (
      partner: Partner,
      merchantId: MerchantId,
      id: CryptoSettlementId,
      actor: AuditActor
    ) =>
      Effect.gen(function* () {
        yield* merchants.get(partner, merchantId)
        const at = yield* stamp
        const audited = yield* auditStamp
        const entryOf = auditOf(partner, actor, "settlement.deleted")
        const outcome = yield* store.remove(
          merchantId,
          id,
          yield* now,
          (removed) => [
            eventOf(
              at,
              partner.id,
              "settlement.deleted",
              { id: removed, deleted: true },
              {
                merchantId
              }
            )
          ],
          (before) => [entryOf(audited, id, merchantId, before, null)]
        )
        if (outcome === "not_found") return yield* new SettlementNotFound({ settlementId: id })
      })

    return {
      register: spanned("Settlements.register", register),
      list: spanned("Settlements.list", list),
      changeDestination: spanned("Settlements.changeDestination", changeDestination),
      remove: spanned("Settlements.remove", remove)
    } as const
  }),
  dependencies: [Merchants.Default]
}) {}
