/**
 * The settlement rules: a destination must be on its asset's chain, a
 * merchant has one live settlement per asset, and only the merchant's own
 * partner sees or changes them. Every change is recorded in the audit trail
 * with who made it (`actor`), in the change's own transaction.
 */
import { Clock, Effect, Option } from "effect"
import type { AuditAction, AuditActor } from "../audit/AuditEntry.js"
import { type AuditStamp, auditEntryOf, auditStamp, auditStamps } from "../audit/NewAuditEntry.js"
import { eventOf, stamp, stamps } from "../events/NewEvent.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { MerchantId } from "../merchants/Merchant.js"
import { Merchants } from "../merchants/Merchants.js"
import type { Partner } from "../partners/Partner.js"
import { type Caip10, type Caip19, chainOfCaip10, chainOfCaip19 } from "../shared/Caip.js"
import { type FieldIssue, InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import {
  type CryptoSettlement,
  type CryptoSettlementId,
  SettlementAssetConflict,
  SettlementNotFound
} from "./Settlement.js"
import { SettlementStore } from "./SettlementStore.js"
import { settlementView } from "./SettlementView.js"

export interface NewCryptoSettlement {
  readonly asset: Caip19
  readonly destination: Caip10
}

/** What the audit trail keeps of a settlement: where the money in which asset goes. */
export const settlementAuditValue = (s: CryptoSettlement) => ({
  asset: s.asset,
  destination: s.destination
})

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const chainMismatch = (asset: Caip19, destination: Caip10): string | undefined => {
  const [assetChain, destinationChain] = [chainOfCaip19(asset), chainOfCaip10(destination)]
  return assetChain === destinationChain
    ? undefined
    : `must be an account on ${assetChain}, the asset's chain, not on ${destinationChain}`
}

export class Settlements extends Effect.Service<Settlements>()("@pay/core/Settlements", {
  effect: Effect.gen(function* () {
    const store = yield* SettlementStore
    const merchants = yield* Merchants

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
      complete?: (settlements: ReadonlyArray<CryptoSettlement>) => IdempotencyCompletion
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
          complete?.(settlements),
          (rows) =>
            rows.map((s, i) =>
              eventOf(created[i]!, partner.id, "settlement.created", settlementView(s), {
                merchantId
              })
            ),
          (rows) => rows.map((s, i) => entryOf(audited[i]!, s.id, merchantId, null, s))
        )
        return settlements
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
        const current = (yield* list(partner, merchantId)).find((s) => s.id === id)
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
        return yield* Option.match(updated, {
          onNone: () => new SettlementNotFound({ settlementId: id }),
          onSome: Effect.succeed
        })
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
  })
}) {}
