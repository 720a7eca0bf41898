/**
 * Status changes of payments, published inside the engine. Long-polls wait on
 * them instead of polling the database. The port keeps publishing and waiting
 * apart, so a store shared by many instances can carry the same events
 * between them (publish sends; a listener wakes the local waiters).
 *
 * A waiter costs one small record, not a fiber of its own: thousands of held
 * long-polls stay cheap. Their timeouts share one timer fiber, which sleeps on
 * the Effect clock until the earliest deadline (so tests drive it with TestClock).
 */
import { Clock, Context, Deferred, Effect, Layer } from "effect"
import type { PaymentId, PaymentStatus } from "./Payment.js"

export interface PaymentStatusChanged {
  readonly paymentId: PaymentId
  readonly status: PaymentStatus
}

export class PaymentEvents extends Context.Tag("@pay/core/PaymentEvents")<
  PaymentEvents,
  {
    readonly publish: (event: PaymentStatusChanged) => Effect.Effect<void>
    /** Where the stream of events is now: read it before reading a payment, then wait from it. */
    readonly position: Effect.Effect<number>
    /**
     * Completes at the payment's first change after `since`, at once if there
     * was one already, or when `timeoutMs` has passed.
     */
    readonly awaitChange: (id: PaymentId, since: number, timeoutMs: number) => Effect.Effect<void>
    /** How many waits are held now (long-polls waiting for a change). */
    readonly held: Effect.Effect<number>
  }
>() {}

interface Waiter {
  readonly id: string
  readonly deadline: number
  readonly since: number
  done: boolean
  readonly wake: () => void
}

/** A binary min-heap of waiters by deadline; woken ones are dropped lazily. */
class Deadlines {
  private readonly heap: Array<Waiter> = []
  get size() {
    return this.heap.length
  }
  peek(): Waiter | undefined {
    return this.heap[0]
  }
  push(w: Waiter) {
    const h = this.heap
    h.push(w)
    let i = h.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (h[parent]!.deadline <= w.deadline) break
      h[i] = h[parent]!
      i = parent
    }
    h[i] = w
  }
  pop(): Waiter | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined || h.length === 0) return top
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= h.length) break
      const right = left + 1
      const child = right < h.length && h[right]!.deadline < h[left]!.deadline ? right : left
      if (h[child]!.deadline >= last.deadline) break
      h[i] = h[child]!
      i = child
    }
    h[i] = last
    return top
  }
}

/** Keep at most this many "last change" marks; older ones no waiter can still need. */
const MARKS_MAX = 50_000

/**
 * The waiting side of the events, with the ways to wake it: publishing in
 * process is `wake`; an implementation that carries events between instances
 * calls `wake` for each change it receives, and `wakeAll` when it may have
 * missed some.
 */
export interface PaymentWaiters {
  readonly events: Context.Tag.Service<PaymentEvents>
  /** A change to the payment: wakes its waiters, and any wait on it from an earlier position. */
  readonly wake: (paymentId: PaymentId) => Effect.Effect<void>
  /** A change to every payment, as far as waiters can tell. */
  readonly wakeAll: Effect.Effect<void>
}

export const makePaymentWaiters = Effect.gen(function* () {
  let position = 0
  /** The position of each payment's latest change (recent ones). */
  const lastChange = new Map<string, number>()
  /** Where `wakeAll` last counted every payment as changed. */
  let allChangedAt = 0
  const waiters = new Map<string, Set<Waiter>>()
  const deadlines = new Deadlines()
  let reschedule = yield* Deferred.make<void>()
  let scheduledFor = Number.POSITIVE_INFINITY

  let held = 0
  const settle = (w: Waiter) => {
    if (w.done) return
    w.done = true
    held--
    const set = waiters.get(w.id)
    set?.delete(w)
    if (set?.size === 0) waiters.delete(w.id)
    w.wake()
  }

  const forgetOldMarks = () => {
    if (lastChange.size <= MARKS_MAX) return
    let oldestNeeded = position
    for (const set of waiters.values())
      for (const w of set) oldestNeeded = Math.min(oldestNeeded, w.since)
    for (const [id, at] of lastChange) if (at <= oldestNeeded) lastChange.delete(id)
  }

  const wake = (paymentId: PaymentId) =>
    Effect.sync(() => {
      position++
      lastChange.set(paymentId, position)
      forgetOldMarks()
      const set = waiters.get(paymentId)
      if (set !== undefined) for (const w of [...set]) settle(w)
    })

  const wakeAll = Effect.sync(() => {
    position++
    allChangedAt = position
    for (const set of [...waiters.values()]) for (const w of [...set]) settle(w)
  })

  const awaitChange = (id: PaymentId, since: number, timeoutMs: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const changedAt = Math.max(lastChange.get(id) ?? 0, allChangedAt)
      if (changedAt > since || timeoutMs <= 0) return Effect.void
      return Effect.async<void>((resume) => {
        const waiter: Waiter = {
          id,
          deadline: now + timeoutMs,
          since,
          done: false,
          wake: () => resume(Effect.void)
        }
        const set = waiters.get(id) ?? new Set()
        held++
        set.add(waiter)
        waiters.set(id, set)
        deadlines.push(waiter)
        if (waiter.deadline < scheduledFor) Deferred.unsafeDone(reschedule, Effect.void)
        return Effect.sync(() => settle(waiter))
      })
    })

  /** The one timer: wakes waiters whose time ran out, then sleeps until the next deadline. */
  const timer = Effect.gen(function* () {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      for (
        let w = deadlines.peek();
        w !== undefined && (w.done || w.deadline <= now);
        w = deadlines.peek()
      ) {
        deadlines.pop()
        settle(w)
      }
      const next = deadlines.peek()
      if (yield* Deferred.isDone(reschedule)) reschedule = yield* Deferred.make<void>()
      scheduledFor = next?.deadline ?? Number.POSITIVE_INFINITY
      yield* next === undefined
        ? Deferred.await(reschedule)
        : Effect.raceFirst(Effect.sleep(next.deadline - now), Deferred.await(reschedule))
    }
  })
  yield* Effect.forkScoped(timer)

  const events = PaymentEvents.of({
    publish: (event) => wake(event.paymentId),
    position: Effect.sync(() => position),
    awaitChange,
    held: Effect.sync(() => held)
  })
  return { events, wake, wakeAll } satisfies PaymentWaiters
})

export const makeLocalPaymentEvents = Effect.map(makePaymentWaiters, (waiters) => waiters.events)

/** Events within one process. */
export const LocalPaymentEvents = Layer.scoped(PaymentEvents, makeLocalPaymentEvents)
