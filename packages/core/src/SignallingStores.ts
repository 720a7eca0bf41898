/**
 * The engine's assembly of the outbox signal (events/OutboxSignal.ts): the
 * stores know nothing of it, so `signallingStores` wraps the storage ports
 * whose writes take an outbox and signals after a write that made events has
 * returned (so after its commit, on every store).
 */
import { Context, Effect, Layer } from "effect"
import { ChainJobStore } from "./chainwork/ChainJobStore.js"
import type { Outbox } from "./events/Event.js"
import { OutboxSignal } from "./events/OutboxSignal.js"
import { MerchantStore } from "./merchants/MerchantStore.js"
import { SettlementStore } from "./merchants/SettlementStore.js"
import { PaymentStore } from "./payments/PaymentStore.js"
import type { PayStorage } from "./Storage.js"

/**
 * The outbox as given, noting whether it made any event, and what to do once
 * the write has returned: signal if it did.
 */
const tracked = <A>(written: Effect.Effect<void>, outbox: Outbox<A> | undefined) => {
  if (outbox === undefined) return { outbox, after: Effect.void }
  let made = false
  return {
    outbox: (value: A) => {
      const events = outbox(value)
      if (events.length > 0) made = true
      return events
    },
    after: Effect.suspend(() => (made ? written : Effect.void))
  }
}

/** `write` with its outbox tracked, signalling after it returned if events were made. */
const signalling = <A, R, E>(
  written: Effect.Effect<void>,
  outbox: Outbox<A> | undefined,
  write: (outbox: Outbox<A> | undefined) => Effect.Effect<R, E>
) => {
  const t = tracked(written, outbox)
  return Effect.tap(write(t.outbox), () => t.after)
}

/**
 * Every storage port as given, and the signal, but the ports that write events
 * signalling once a write's events are committed.
 */
export const signallingStores = Layer.effectContext(
  Effect.gen(function* () {
    const given = yield* Effect.context<PayStorage | OutboxSignal>()
    const { written } = yield* OutboxSignal
    const merchants = yield* MerchantStore
    const settlements = yield* SettlementStore
    const payments = yield* PaymentStore
    const jobs = yield* ChainJobStore
    return given.pipe(
      Context.add(
        MerchantStore,
        MerchantStore.of({
          ...merchants,
          insert: (m, completion, outbox) =>
            signalling(written, outbox, (o) => merchants.insert(m, completion, o)),
          update: (id, changes, at, outbox) =>
            signalling(written, outbox, (o) => merchants.update(id, changes, at, o)),
          setStatus: (id, status, at, outbox) =>
            signalling(written, outbox, (o) => merchants.setStatus(id, status, at, o)),
          markDeleted: (id, at, outbox) =>
            signalling(written, outbox, (o) => merchants.markDeleted(id, at, o))
        })
      ),
      Context.add(
        SettlementStore,
        SettlementStore.of({
          ...settlements,
          insertAll: (all, completion, outbox, audit) =>
            signalling(written, outbox, (o) => settlements.insertAll(all, completion, o, audit)),
          updateDestination: (merchantId, id, destination, at, outbox, audit) =>
            signalling(written, outbox, (o) =>
              settlements.updateDestination(merchantId, id, destination, at, o, audit)
            ),
          remove: (merchantId, id, at, outbox, audit) =>
            signalling(written, outbox, (o) => settlements.remove(merchantId, id, at, o, audit))
        })
      ),
      Context.add(
        PaymentStore,
        PaymentStore.of({
          ...payments,
          transition: (id, from, change, completion, outbox) =>
            signalling(written, outbox, (o) =>
              payments.transition(id, from, change, completion, o)
            ),
          addRefund: (id, refund, completion, outbox) =>
            signalling(written, outbox, (o) => payments.addRefund(id, refund, completion, o))
        })
      ),
      Context.add(
        ChainJobStore,
        ChainJobStore.of({
          ...jobs,
          complete: (lease, now, settlement) =>
            Effect.tap(jobs.complete(lease, now, settlement), () =>
              (settlement?.events?.length ?? 0) > 0 ? written : Effect.void
            )
        })
      )
    )
  })
)
