/**
 * Counts payments into `pay_payment_transitions_total` where their status is
 * written: the payment store as given, its `insert` and `transition` counted
 * once they have returned (so after the commit, and only a transition that
 * took place). The store knows nothing of it.
 */
import { Context, Effect, Layer, Option } from "effect"
import { countPaymentStatus } from "./metrics/EngineMetrics.js"
import { PaymentStore } from "./payments/PaymentStore.js"
import type { PayStorage } from "./Storage.js"

export const countingPaymentStore = Layer.effectContext(
  Effect.gen(function* () {
    const given = yield* Effect.context<PayStorage>()
    const payments = yield* PaymentStore
    return Context.add(
      given,
      PaymentStore,
      PaymentStore.of({
        ...payments,
        insert: (payment, completion) =>
          Effect.tap(payments.insert(payment, completion), () =>
            countPaymentStatus(payment.status)
          ),
        transition: (id, from, change, completion, outbox) =>
          Effect.tap(payments.transition(id, from, change, completion, outbox), (written) => {
            if (Option.isSome(written)) countPaymentStatus(written.value.status)
          })
      })
    )
  })
)
