/**
 * The settlement rules: a destination must be on its asset's chain, a
 * merchant has one live settlement per asset, and only the merchant's own
 * partner sees or changes them.
 */
import { Clock, Effect, Option } from "effect"
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

    const register = (
      partner: Partner,
      merchantId: MerchantId,
      entries: ReadonlyArray<NewCryptoSettlement>,
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
        yield* store.insertAll(settlements, complete?.(settlements), (rows) =>
          rows.map((s, i) =>
            eventOf(created[i]!, partner.id, "settlement.created", settlementView(s), {
              merchantId
            })
          )
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
      destination: Caip10
    ) =>
      Effect.gen(function* () {
        const current = (yield* list(partner, merchantId)).find((s) => s.id === id)
        if (current === undefined) return yield* new SettlementNotFound({ settlementId: id })
        const mismatch = chainMismatch(current.asset, destination)
        if (mismatch) return yield* InvalidInput.of("destination", mismatch)
        const at = yield* stamp
        const updated = yield* store.updateDestination(
          merchantId,
          id,
          destination,
          yield* now,
          (s) => [eventOf(at, partner.id, "settlement.updated", settlementView(s), { merchantId })]
        )
        return yield* Option.match(updated, {
          onNone: () => new SettlementNotFound({ settlementId: id }),
          onSome: Effect.succeed
        })
      })

    /** Idempotent, like merchant deletion. */
    const remove = (partner: Partner, merchantId: MerchantId, id: CryptoSettlementId) =>
      Effect.gen(function* () {
        yield* merchants.get(partner, merchantId)
        const at = yield* stamp
        const outcome = yield* store.remove(merchantId, id, yield* now, (removed) => [
          eventOf(
            at,
            partner.id,
            "settlement.deleted",
            { id: removed, deleted: true },
            {
              merchantId
            }
          )
        ])
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
