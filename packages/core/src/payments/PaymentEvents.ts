/**
 * Status changes of payments, published inside the engine. Long-polls wait on
 * them instead of polling the database. The port keeps publishing and waiting
 * apart, so a store shared by many instances can carry the same events
 * between them (publish sends; a listener wakes the local waiters).
 *
 * A waiter costs one small record, not a fiber of its own: thousands of held
 * long-polls stay cheap. A payment's waiters are a list threaded through the
 * records themselves (no set per payment). Their timeouts share one timer
 * fiber, which sleeps on the Effect clock until the earliest deadline (so
 * tests drive it with TestClock). `waitChange` is the same wait without an
 * effect, for a long-poll held without a fiber of its own (Payments.statusNow).
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
    /** `position`, read on the spot. */
    readonly positionNow: () => number
    /**
     * `awaitChange` without an effect: calls `wake` once, at the payment's
     * first change after `since` (on the spot if there was one already), or
     * when `timeoutMs` has passed, or with `stopped` true when the events stop
     * (the engine closes: waiting again would end at once). Returns what lets
     * go of the wait without calling `wake` (the client went away).
     */
    readonly waitChange: (
      id: PaymentId,
      since: number,
      timeoutMs: number,
      wake: (stopped: boolean) => void
    ) => () => void
  }
>() {}

/** One wait: in its payment's list (prev/next) and in the deadlines' heap. */
class Waiter {
  done = false
  prev: Waiter | undefined = undefined
  next: Waiter | undefined = undefined
  constructor(
    readonly id: string,
    readonly deadline: number,
    readonly since: number,
    /** Dropped once released: a waiter left in the heap until its deadline holds nothing else. */
    public wake: (stopped: boolean) => void,
    /** Held without a fiber (waitChange): woken when the events stop, as no interrupt frees it. */
    readonly plain: boolean
  ) {}
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

const NOTHING = () => {}

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
  /** The first waiter of each payment with any; the rest follow through `next`. */
  const waiters = new Map<string, Waiter>()
  const deadlines = new Deadlines()
  let reschedule = yield* Deferred.make<void>()
  let scheduledFor = Number.POSITIVE_INFINITY
  const clock = yield* Effect.clock

  let held = 0
  /** Takes the waiter out of its payment's list, once; true if it was still waiting. */
  const release = (w: Waiter): boolean => {
    if (w.done) return false
    w.done = true
    held--
    if (w.prev !== undefined) w.prev.next = w.next
    else if (w.next !== undefined) waiters.set(w.id, w.next)
    else waiters.delete(w.id)
    if (w.next !== undefined) w.next.prev = w.prev
    w.prev = undefined
    w.next = undefined
    w.wake = NOTHING
    return true
  }
  let stopped = false
  const settle = (w: Waiter) => {
    const wakeUp = w.wake
    if (release(w)) wakeUp(stopped)
  }
  /** Every waiter, so that settling them may change the lists. */
  const everyWaiter = () => {
    const all: Array<Waiter> = []
    for (const first of waiters.values()) {
      for (let w: Waiter | undefined = first; w !== undefined; w = w.next) all.push(w)
    }
    return all
  }

  const forgetOldMarks = () => {
    if (lastChange.size <= MARKS_MAX) return
    let oldestNeeded = position
    for (const w of everyWaiter()) oldestNeeded = Math.min(oldestNeeded, w.since)
    for (const [id, at] of lastChange) if (at <= oldestNeeded) lastChange.delete(id)
  }

  const wake = (paymentId: PaymentId) =>
    Effect.sync(() => {
      position++
      lastChange.set(paymentId, position)
      forgetOldMarks()
      const first = waiters.get(paymentId)
      if (first === undefined) return
      const woken: Array<Waiter> = []
      for (let w: Waiter | undefined = first; w !== undefined; w = w.next) woken.push(w)
      for (const w of woken) settle(w)
    })

  const wakeAll = Effect.sync(() => {
    position++
    allChangedAt = position
    for (const w of everyWaiter()) settle(w)
  })

  /** Registers a wait (the caller checked it is needed); returns the waiter. */
  const register = (
    id: string,
    since: number,
    deadline: number,
    wakeUp: (stopped: boolean) => void,
    plain: boolean
  ) => {
    const waiter = new Waiter(id, deadline, since, wakeUp, plain)
    const first = waiters.get(id)
    if (first !== undefined) {
      waiter.next = first
      first.prev = waiter
    }
    waiters.set(id, waiter)
    held++
    deadlines.push(waiter)
    if (waiter.deadline < scheduledFor) Deferred.unsafeDone(reschedule, Effect.void)
    return waiter
  }

  const changedSince = (id: string, since: number) =>
    Math.max(lastChange.get(id) ?? 0, allChangedAt) > since

  const awaitChange = (id: PaymentId, since: number, timeoutMs: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (changedSince(id, since) || timeoutMs <= 0) return Effect.void
      return Effect.async<void>((resume) => {
        const waiter = register(id, since, now + timeoutMs, () => resume(Effect.void), false)
        return Effect.sync(() => settle(waiter))
      })
    })

  const waitChange = (
    id: PaymentId,
    since: number,
    timeoutMs: number,
    wakeUp: (stopped: boolean) => void
  ): (() => void) => {
    if (stopped || changedSince(id, since) || timeoutMs <= 0) {
      wakeUp(stopped)
      return NOTHING
    }
    const waiter = register(id, since, clock.unsafeCurrentTimeMillis() + timeoutMs, wakeUp, true)
    return () => {
      release(waiter)
    }
  }

  // Waits held without a fiber have no interrupt to free them: when the events stop (the
  // engine closes), they are answered rather than left hanging.
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      stopped = true
      for (const w of everyWaiter()) if (w.plain) settle(w)
    })
  )

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
    held: Effect.sync(() => held),
    positionNow: () => position,
    waitChange
  })
  return { events, wake, wakeAll } satisfies PaymentWaiters
})

export const makeLocalPaymentEvents = Effect.map(makePaymentWaiters, (waiters) => waiters.events)

/** Events within one process. */
export const LocalPaymentEvents = Layer.scoped(PaymentEvents, makeLocalPaymentEvents)
