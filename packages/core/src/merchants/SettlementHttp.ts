/**
 * The crypto settlement route handlers.
 */
import { Effect } from "effect"
import { requestActor } from "../audit/Actor.js"
import { keptReplyOf } from "../http/ErrorResponses.js"
import { json, type Reply } from "../http/Exchange.js"
import { implement } from "../http/Route.js"
import { idempotently } from "../idempotency/Http.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import { merchantFailures } from "./Failures.js"
import { SettlementsApi } from "./SettlementApi.js"
import { type RegisteredSettlements, Settlements } from "./Settlements.js"
import { settlementView } from "./SettlementView.js"
import type { SettlementWarning } from "./SettlementWarnings.js"

/** `warnings` only when there is one: the answer is otherwise SPEC.md's, field for field. */
const withWarnings = (warnings: ReadonlyArray<SettlementWarning>) =>
  warnings.length === 0 ? {} : { warnings }

/** The handlers, with the services they use resolved once, not per request. */
export const settlementHandlers = Effect.gen(function* () {
  const settlements = yield* Settlements
  return implement(SettlementsApi, {
    createCrypto: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const actor = yield* requestActor
        const reply = ({ settlements: created, warnings }: RegisteredSettlements): Reply =>
          json(201, { settlements: created.map(settlementView), ...withWarnings(warnings) })
        return yield* idempotently(
          input,
          input.headers["idempotency-key"],
          (complete) =>
            settlements
              .register(
                partner,
                input.path.merchantId,
                input.payload.settlements,
                actor,
                (created) => complete(reply(created))
              )
              .pipe(Effect.map(reply)),
          // A conflict is the answer to this request: a replay must get it again.
          (error) =>
            error._tag === "SettlementAssetConflict"
              ? keptReplyOf(merchantFailures.SettlementAssetConflict(error))
              : undefined
        )
      }),

    list: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const crypto = yield* settlements.list(partner, path.merchantId)
        return json(200, { crypto: crypto.map(settlementView), fiat: [] })
      }),

    updateCrypto: ({ path, payload }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const { settlement, warnings } = yield* settlements.changeDestination(
          partner,
          path.merchantId,
          path.id,
          payload.destination,
          yield* requestActor
        )
        return json(200, { settlement: settlementView(settlement), ...withWarnings(warnings) })
      }),

    deleteCrypto: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        yield* settlements.remove(partner, path.merchantId, path.id, yield* requestActor)
        return json(200, { id: path.id, deleted: true })
      })
  })
})
