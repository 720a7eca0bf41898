/**
 * The crypto settlement route handlers.
 */
import { Effect } from "effect"
import { errorReply } from "../http/ErrorResponses.js"
import { json, type Reply } from "../http/Exchange.js"
import { idempotently, requiredIdempotencyKey } from "../http/Idempotent.js"
import { partnerRoute } from "../http/Route.js"
import {
  type CryptoSettlementView,
  createCryptoSettlements,
  deleteCryptoSettlement,
  listSettlements,
  updateCryptoSettlement
} from "./Api.js"
import type { CryptoSettlement } from "./Settlement.js"
import { Settlements } from "./Settlements.js"

export const settlementView = (s: CryptoSettlement): typeof CryptoSettlementView.Type => ({
  id: s.id,
  configId: s.id,
  asset: s.asset,
  destination: s.destination
})

/** The routes, with the services they use resolved once, not per request. */
export const settlementRoutes = Effect.gen(function* () {
  const settlements = yield* Settlements
  return [
    partnerRoute(createCryptoSettlements, (input) =>
      Effect.gen(function* () {
        const key = yield* requiredIdempotencyKey(input)
        const reply = (created: ReadonlyArray<CryptoSettlement>): Reply =>
          json(201, { settlements: created.map(settlementView) })
        return yield* idempotently(
          input,
          key,
          (complete) =>
            settlements
              .register(
                input.partner,
                input.path.merchantId,
                input.payload.settlements,
                (created) => complete(reply(created))
              )
              .pipe(Effect.map(reply)),
          // A conflict is the answer to this request: a replay must get it again.
          (error) =>
            error._tag === "SettlementAssetConflict"
              ? ((e) => json(e.status, e.body))(errorReply(error))
              : undefined
        )
      })
    ),

    partnerRoute(listSettlements, ({ partner, path }) =>
      Effect.gen(function* () {
        const crypto = yield* settlements.list(partner, path.merchantId)
        return json(200, { crypto: crypto.map(settlementView), fiat: [] })
      })
    ),

    partnerRoute(updateCryptoSettlement, ({ partner, path, payload }) =>
      Effect.gen(function* () {
        const updated = yield* settlements.changeDestination(
          partner,
          path.merchantId,
          path.id,
          payload.destination
        )
        return json(200, { settlement: settlementView(updated) })
      })
    ),

    partnerRoute(deleteCryptoSettlement, ({ partner, path }) =>
      Effect.gen(function* () {
        yield* settlements.remove(partner, path.merchantId, path.id)
        return json(200, { id: path.id, deleted: true })
      })
    )
  ]
})
