/**
 * Status changes of payments, published inside the engine. Long-polls wait on
 * them instead of polling the database. The port keeps publishing and waking
 * apart, so a store shared by many instances can carry the same events
 * between them (publish sends; a listener wakes the local waiters).
 */
import { Context, Deferred, Effect, Layer, type Scope } from "effect"
import type { PaymentId, PaymentStatus } from "./Payment.js"

export interface PaymentStatusChanged {
  readonly paymentId: PaymentId
  readonly status: PaymentStatus
}

export class PaymentEvents extends Context.Tag("@pay/core/PaymentEvents")<
  PaymentEvents,
  {
    readonly publish: (event: PaymentStatusChanged) => Effect.Effect<void>
    /**
     * Registers interest in the payment's next change, for the life of the
     * scope; the returned effect completes when it happens. Register before
     * reading the payment, so a change between the read and the wait is not missed.
     */
    readonly nextChange: (id: PaymentId) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>() {}

/**
 * Waiters by payment id. A held long-poll costs one Deferred and one map
 * entry; a change wakes only its own payment's waiters.
 */
export const makeLocalPaymentEvents = () => {
  const waiters = new Map<string, Set<Deferred.Deferred<void>>>()

  const wake = (id: string) =>
    Effect.suspend(() => {
      const set = waiters.get(id)
      if (set === undefined) return Effect.void
      waiters.delete(id)
      return Effect.forEach(set, (deferred) => Deferred.succeed(deferred, undefined), {
        discard: true
      })
    })

  const events = PaymentEvents.of({
    publish: (event) => wake(event.paymentId),
    nextChange: (id) =>
      Effect.acquireRelease(
        Effect.map(Deferred.make<void>(), (deferred) => {
          const set = waiters.get(id) ?? new Set()
          set.add(deferred)
          waiters.set(id, set)
          return deferred
        }),
        (deferred) =>
          Effect.sync(() => {
            const set = waiters.get(id)
            set?.delete(deferred)
            if (set?.size === 0) waiters.delete(id)
          })
      ).pipe(Effect.map(Deferred.await))
  })
  return { events, wake, waiting: () => waiters.size }
}

/** Events within one process. */
export const LocalPaymentEvents = Layer.sync(PaymentEvents, () => makeLocalPaymentEvents().events)
