/**
 * The payment rules: who may create, see and change a payment, expiry, the
 * long-poll on status, cancellation, refunds and reporting. Every status
 * change goes through the state machine and a compare-and-set write, then is
 * published so held long-polls answer at once.
 */
import { Duration, Effect, Either, Option, Schedule } from "effect"
import type { EventType } from "../events/Event.js"
import { eventOf, stamp } from "../events/NewEvent.js"
import { HttpConfig } from "../http/HttpConfig.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { Partner } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import { Merchants } from "../merchants/Merchants.js"
import type { Amount } from "../shared/Amount.js"
import { EngineMode } from "../shared/EngineMode.js"
import { Forbidden, InvalidInput } from "../shared/Errors.js"
import { makeIdBody, newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import {
  InvalidState,
  isFinal,
  LongPollsExhausted,
  MerchantInactive,
  type Payment,
  PaymentExpired,
  type PaymentId,
  PaymentNotFound,
  type PaymentStatus,
  type PaymentStatusRecord,
  type Refund,
  RefundExists,
  type RefundId
} from "./Payment.js"
import { PaymentEvents } from "./PaymentEvents.js"
import { paymentEvent } from "./PaymentOutbox.js"
import {
  applyChange,
  decide,
  effectiveStatus,
  type PaymentTransition
} from "./PaymentStateMachine.js"
import { type PaymentFilter, type PaymentPageQuery, PaymentStore } from "./PaymentStore.js"
import { MAX_PAYMENT_LIFETIME_MS, PaymentsConfig } from "./PaymentsConfig.js"
import { refundView } from "./Views.js"

export interface NewPayment {
  readonly referenceId: string
  readonly amount: Amount
  readonly expiresAt?: Date | undefined
  readonly checkout?: Payment["checkout"] | undefined
}

/** A status as read, and when: what the status route answers. */
export interface StatusRead {
  readonly payment: PaymentStatusRecord
  readonly at: Date
}

/** A CAS write lost to a concurrent one is decided again from the new state, a few times. */
const TRANSITION_ATTEMPTS = 5
const SWEEP_BATCH = 500

/** The event each status a payment moves to is announced with. */
const STATUS_EVENTS: Partial<Record<PaymentStatus, EventType>> = {
  processing: "payment.processing",
  succeeded: "payment.succeeded",
  failed: "payment.failed",
  expired: "payment.expired",
  cancelled: "payment.cancelled"
}

export class Payments extends Effect.Service<Payments>()("@pay/core/Payments", {
  effect: Effect.gen(function* () {
    const store = yield* PaymentStore
    const events = yield* PaymentEvents
    const merchants = yield* Merchants
    const registry = yield* TokenRegistry
    const { publicUrl } = yield* HttpConfig
    const config = yield* PaymentsConfig
    const lifetimeMs = config.paymentLifetimeMs
    const maxLongPollMs = config.maxLongPollMs
    const maxHeldLongPolls = config.maxHeldLongPolls
    const maxHeldPublicLongPolls = config.maxHeldPublicLongPolls
    const maxHeldPerPayment = config.maxHeldLongPollsPerPayment
    /** How often the sweeper records expired payments (`expirySweepMs`). */
    const sweepEvery = Duration.millis(config.expirySweepMs)
    /** Partners' long-polls held now, by this engine (both kinds: a fiber's hold and holdNow). */
    let heldLongPolls = 0
    /**
     * Public long-polls (a payment link is all they need) held now, and by
     * payment: counted apart from partners', so that one link opened many
     * times cannot refuse every partner's poll (nor every other payment's).
     */
    let heldPublic = 0
    const heldPublicBy = new Map<PaymentId, number>()
    /** Takes a public place for `id`, or names the cap that refuses it. */
    const holdPublic = (id: PaymentId): LongPollsExhausted | undefined => {
      const onPayment = heldPublicBy.get(id) ?? 0
      if (onPayment >= maxHeldPerPayment) {
        return new LongPollsExhausted({ held: onPayment, cap: "payment" })
      }
      if (heldPublic >= maxHeldPublicLongPolls) {
        return new LongPollsExhausted({ held: heldPublic, cap: "public" })
      }
      heldPublic++
      heldPublicBy.set(id, onPayment + 1)
      return undefined
    }
    const releasePublic = (id: PaymentId) => {
      heldPublic--
      const left = (heldPublicBy.get(id) ?? 1) - 1
      if (left <= 0) heldPublicBy.delete(id)
      else heldPublicBy.set(id, left)
    }
    /**
     * Set by `drain` (the server is stopping): held long-polls are answered now
     * with the status as it is, and later ones at once, so that no request
     * keeps a stopping server waiting for its long-poll's time.
     */
    let draining = false
    /** What answers each held long-poll now (both kinds); each takes itself out once answered. */
    const drainers = new Set<() => void>()
    // Decided once, at start (payEngineLayer); every payment created here records it.
    const { livemode } = yield* EngineMode
    // Resolved once: a per-request service lookup costs more than reading the time.
    const clock = yield* Effect.clock

    /**
     * The outbox of a status change: `payment.<status>` (none for
     * `requires_action`, none when the status stays) carrying what
     * `GET /v1/payments/{id}` answers after it.
     */
    const statusEvents = (payment: Payment, at: Date) =>
      Effect.gen(function* () {
        const merchant = Option.getOrUndefined(yield* merchants.lookup(payment.merchantId))
        const stamped = yield* stamp
        return (written: Payment) => {
          // A change within a status (a transaction recorded while processing) is no event.
          const type = written.status === payment.status ? undefined : STATUS_EVENTS[written.status]
          return type === undefined
            ? []
            : [
                paymentEvent(stamped, type, written, merchant, {
                  registry,
                  publicUrl,
                  now: at,
                  livemode
                })
              ]
        }
      })
    const now = Effect.sync(() => new Date(clock.unsafeCurrentTimeMillis()))

    const create = (
      partner: Partner,
      merchantId: MerchantId,
      input: NewPayment,
      complete?: (payment: Payment) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.getForPayment(partner, merchantId)
        if (merchant.status !== "active") {
          return yield* new MerchantInactive({ merchantId, status: merchant.status })
        }
        const unit = input.amount.unit
        if (unit.kind === "token" && registry.token(unit.asset) === undefined) {
          return yield* InvalidInput.of(
            "amount.unit",
            `${unit.asset} is not a token this engine accepts`
          )
        }
        const at = yield* now
        const expiresAt = input.expiresAt ?? new Date(at.getTime() + lifetimeMs)
        if (expiresAt.getTime() <= at.getTime()) {
          return yield* InvalidInput.of("expiresAt", "must be in the future")
        }
        if (expiresAt.getTime() > at.getTime() + MAX_PAYMENT_LIFETIME_MS) {
          return yield* InvalidInput.of("expiresAt", "must be at most 30 days from now")
        }
        const payment: Payment = {
          id: `pay_${makeIdBody(at.getTime())}` as PaymentId,
          partnerId: partner.id,
          merchantId,
          referenceId: input.referenceId,
          amount: input.amount,
          status: "requires_action",
          failureCode: null,
          cancelledReason: null,
          expiresAt,
          createdAt: at,
          updatedAt: at,
          finalAt: null,
          checkout: input.checkout ?? null,
          tokenAmount:
            unit.kind === "token" ? { asset: unit.asset, value: input.amount.value } : null,
          buyer: null,
          transaction: null,
          txId: null,
          refund: null,
          fees: null,
          settlement: null,
          livemode
        }
        yield* store.insert(payment, complete?.(payment))
        yield* Effect.logInfo("payment created", {
          paymentId: payment.id,
          merchantId,
          status: payment.status
        })
        return payment
      })

    /**
     * The payment if it is the partner's (403 otherwise) and, when a
     * `Merchant-Id` is given, that merchant's (404 otherwise, as if absent).
     */
    const owned = <P extends Pick<Payment, "partnerId" | "merchantId">>(
      found: Option.Option<P>,
      id: PaymentId,
      partner: Partner,
      merchantId?: MerchantId
    ): Effect.Effect<P, PaymentNotFound | Forbidden> => {
      if (Option.isNone(found)) return Effect.fail(new PaymentNotFound({ paymentId: id }))
      if (found.value.partnerId !== partner.id) {
        return Effect.fail(
          new Forbidden({ message: `Payment ${id} belongs to another partner account` })
        )
      }
      if (merchantId !== undefined && found.value.merchantId !== merchantId) {
        return Effect.fail(new PaymentNotFound({ paymentId: id }))
      }
      return Effect.succeed(found.value)
    }

    /** Any payment, for the wallet holding its link: the gateway needs no partner key. */
    const find = (id: PaymentId) =>
      Effect.flatMap(store.find(id), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.fail(new PaymentNotFound({ paymentId: id }))
      )

    /** The partner's payment. */
    const get = (partner: Partner, id: PaymentId) =>
      Effect.flatMap(store.find(id), (found) => owned(found, id, partner))

    /** The partner's payment, which must also be the `Merchant-Id` header's merchant's. */
    const getForMerchant = (partner: Partner, merchantId: MerchantId, id: PaymentId) =>
      Effect.flatMap(store.find(id), (found) => owned(found, id, partner, merchantId))

    /**
     * Applies a transition through the state machine, with the chain work it
     * carries; fails, writing nothing, when that work's lease or nonce no
     * longer holds (the chain work's own transitions).
     */
    const transitionFenced = (
      id: PaymentId,
      change: PaymentTransition,
      completion?: (payment: Payment) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        for (let attempt = 1; ; attempt++) {
          const found = yield* store.find(id)
          if (Option.isNone(found)) return yield* new PaymentNotFound({ paymentId: id })
          const payment = found.value
          const at = yield* now
          const decision = decide(payment, change, at)
          if (Either.isLeft(decision)) {
            const refusal = decision.left
            if (refusal._tag === "Expired") return yield* new PaymentExpired({ paymentId: id })
            const status = refusal._tag === "WrongState" ? refusal.status : payment.status
            return yield* new InvalidState({
              status,
              kind: change._tag === "Cancel" ? "cancel" : "other",
              message:
                change._tag === "Cancel"
                  ? `Only a payment that requires action can be cancelled; this one is ${status}`
                  : `The payment is ${status}; it cannot ${change._tag.toLowerCase()} now`
            })
          }
          const next = applyChange(payment, decision.right)
          const written = yield* store.transition(
            id,
            payment.status,
            decision.right,
            completion?.(next),
            yield* statusEvents(payment, decision.right.at)
          )
          if (Option.isSome(written)) {
            yield* Effect.logInfo("payment transition", {
              paymentId: id,
              merchantId: payment.merchantId,
              from: payment.status,
              to: written.value.status,
              change: change._tag
            })
            yield* events.publish({ paymentId: id, status: written.value.status })
            return written.value
          }
          if (attempt >= TRANSITION_ATTEMPTS) {
            return yield* Effect.dieMessage(
              `payment ${id}: transition kept losing to concurrent writes`
            )
          }
        }
      })

    /**
     * Applies a transition through the state machine: for the wallet gateway,
     * the sweep, and every transition that ends no chain job and records no
     * transaction (so neither refusal can happen).
     */
    const transition = (
      id: PaymentId,
      change: PaymentTransition,
      completion?: (payment: Payment) => IdempotencyCompletion
    ) =>
      transitionFenced(id, change, completion).pipe(
        Effect.catchTags({
          ChainJobLeaseLost: Effect.die,
          NonceTaken: Effect.die,
          TransactionClaimed: Effect.die
        })
      )

    /** The status fields of the partner's payment, which must be the header's merchant's. */
    const statusOf = (partner: Partner, merchantId: MerchantId, id: PaymentId) =>
      Effect.flatMap(store.findStatus(id), (found) => owned(found, id, partner, merchantId))

    const reread = (id: PaymentId, fallback: PaymentStatusRecord) =>
      Effect.map(
        store.findStatus(id),
        Option.getOrElse(() => fallback)
      )

    /** Whether a status read at `at` is answered without holding: no poll asked, or final. */
    const answersAtOnce = (payment: PaymentStatusRecord, at: Date, maxPollMs: number) =>
      draining || Math.min(maxPollMs, maxLongPollMs) <= 0 || isFinal(effectiveStatus(payment, at))

    /**
     * `events.awaitChange`, and woken by `drain` too: a waiter without a fiber
     * of its own (waitChange), so that drain reaches it without an interrupt.
     */
    const awaitChangeOrDrain = (id: PaymentId, since: number, timeoutMs: number) =>
      draining
        ? Effect.void
        : Effect.async<void>((resume) => {
            let done = false
            let release: (() => void) | undefined
            const finish = (stopped = false) => {
              if (done) return
              done = true
              // The events stopped (the engine is closing): waiting again would end at once.
              if (stopped) draining = true
              drainers.delete(finish)
              release?.()
              resume(Effect.void)
            }
            release = events.waitChange(id, since, timeoutMs, finish)
            if (!done) drainers.add(finish)
            return Effect.sync(() => {
              done = true
              drainers.delete(finish)
              release?.()
            })
          })

    /** When a long-poll of `payment` read at `at` answers at the latest: its time, or its expiry. */
    const deadlineOf = (payment: PaymentStatusRecord, at: Date, maxPollMs: number) => {
      const holdMs = Math.min(maxPollMs, maxLongPollMs)
      const untilExpiry =
        payment.status === "requires_action" ? payment.expiresAt.getTime() - at.getTime() : holdMs
      return at.getTime() + Math.max(0, Math.min(holdMs, untilExpiry))
    }

    /**
     * The status `read` finds; with `maxPollMs`, held until it changes or the
     * time (capped) runs out. An unpaid payment wakes at its expiry too. With
     * `maxHeldLongPolls` held already, a hold is refused (LongPollsExhausted).
     */
    const pollStatus = <E>(
      id: PaymentId,
      read: Effect.Effect<PaymentStatusRecord, E>,
      maxPollMs: number,
      publicPoll = false
    ): Effect.Effect<
      { readonly payment: PaymentStatusRecord; readonly at: Date },
      E | LongPollsExhausted
    > => {
      const answer = (payment: PaymentStatusRecord) => ({
        payment,
        at: new Date(clock.unsafeCurrentTimeMillis())
      })
      /** Waits for a change of status; changes that keep it (a recorded transaction) wait on. */
      const hold = (
        since: number,
        current: PaymentStatusRecord,
        deadline: number
      ): Effect.Effect<{ readonly payment: PaymentStatusRecord; readonly at: Date }> => {
        const left = deadline - clock.unsafeCurrentTimeMillis()
        if (left <= 0) return Effect.succeed(answer(current))
        return awaitChangeOrDrain(id, since, left).pipe(
          // Taken before the read again: a change between the read and the next wait still wakes it.
          Effect.zipRight(events.position),
          Effect.flatMap((next) =>
            Effect.flatMap(reread(id, current), (latest) => {
              const now = new Date(clock.unsafeCurrentTimeMillis())
              return draining ||
                effectiveStatus(latest, now) !== effectiveStatus(current, now) ||
                now.getTime() >= deadline
                ? Effect.succeed({ payment: latest, at: now })
                : hold(next, latest, deadline)
            })
          )
        )
      }
      // Taken before the read: a change between the read and the wait still wakes it.
      return Effect.flatMap(events.position, (since) =>
        Effect.flatMap(read, (payment) => {
          const at = new Date(clock.unsafeCurrentTimeMillis())
          if (answersAtOnce(payment, at, maxPollMs)) {
            return Effect.succeed({ payment, at })
          }
          if (publicPoll) {
            const refused = holdPublic(id)
            if (refused !== undefined) return Effect.fail(refused)
          } else if (heldLongPolls >= maxHeldLongPolls) {
            return Effect.fail(new LongPollsExhausted({ held: heldLongPolls, cap: "partner" }))
          } else heldLongPolls++
          // Counted until the hold ends, however it ends (an answer, an interrupt: the client left).
          return Effect.ensuring(
            hold(since, payment, deadlineOf(payment, at, maxPollMs)),
            Effect.sync(() => {
              if (publicPoll) releasePublic(id)
              else heldLongPolls--
            })
          )
        })
      )
    }

    /** The partner's payment's status (it must be the header's merchant's), long-polled. */
    const status = (partner: Partner, merchantId: MerchantId, id: PaymentId, maxPollMs: number) =>
      pollStatus(id, statusOf(partner, merchantId, id), maxPollMs)

    /**
     * `pollStatus`'s hold without a fiber: a waiter on the payment's changes
     * (PaymentEvents.waitChange) and a promise, nothing else per request. Each
     * wake reads the status again (on the spot, or one promise away); a change
     * that keeps the status waits on. `abandoned` is handed what lets go of the
     * wait, for when the client goes away.
     */
    const holdNow = (
      id: PaymentId,
      since: number,
      first: PaymentStatusRecord,
      deadline: number,
      read: (
        id: PaymentId
      ) => Option.Option<PaymentStatusRecord> | Promise<Option.Option<PaymentStatusRecord>>,
      abandoned: (release: () => void) => void
    ): Promise<StatusRead> =>
      new Promise<StatusRead>((resolve) => {
        let current = first
        let letGo = false
        let answered = false
        let release: (() => void) | undefined
        // Counted until answered or let go (the client left), whichever comes first.
        heldLongPolls++
        let counted = true
        const uncount = () => {
          if (counted) heldLongPolls--
          counted = false
        }
        const settleWith = (
          found: Option.Option<PaymentStatusRecord>,
          next: number,
          stopped: boolean
        ) => {
          if (answered) return
          const latest = Option.getOrElse(found, () => current)
          const now = new Date(clock.unsafeCurrentTimeMillis())
          if (
            stopped ||
            draining ||
            effectiveStatus(latest, now) !== effectiveStatus(current, now) ||
            now.getTime() >= deadline
          ) {
            release = undefined
            answered = true
            drainers.delete(drainNow)
            uncount()
            resolve({ payment: latest, at: now })
          } else {
            current = latest
            wait(next)
          }
        }
        const woken = (stopped: boolean) => {
          if (letGo) return
          // Taken before the read again: a change between the read and the next wait still wakes it.
          const next = events.positionNow()
          // A read that fails (the store closing) answers what was read last.
          const failed = () => settleWith(Option.none(), next, stopped)
          let found: ReturnType<typeof read>
          try {
            found = read(id)
          } catch {
            return failed()
          }
          if (found instanceof Promise) {
            found.then((f) => {
              if (!letGo) settleWith(f, next, stopped)
            }, failed)
          } else settleWith(found, next, stopped)
        }
        const wait = (from: number) => {
          const left = deadline - clock.unsafeCurrentTimeMillis()
          release = events.waitChange(id, from, Math.max(0, left), woken)
        }
        /** `drain`: a wait in progress is let go of and read again; a read in progress sees `draining`. */
        const drainNow = () => {
          if (letGo || answered || release === undefined) return
          release()
          release = undefined
          woken(false)
        }
        drainers.add(drainNow)
        abandoned(() => {
          letGo = true
          drainers.delete(drainNow)
          release?.()
          release = undefined
          uncount()
        })
        wait(since)
      })

    /**
     * `status` answered without a fiber: on the spot when nothing has to wait
     * (the store reads synchronously or in one promise, the payment is the
     * partner's and the merchant's, and there is no long-poll to hold: none
     * asked, or the status is final); with `abandoned`, a long-poll to hold is
     * held too (holdNow), `abandoned` being told how to let go of it when the
     * client goes away. Undefined otherwise: `status` answers that request,
     * refusals included.
     */
    const statusNow = (
      partner: Partner,
      merchantId: MerchantId,
      id: PaymentId,
      maxPollMs: number,
      abandoned?: (release: () => void) => void
    ): StatusRead | Promise<StatusRead | undefined> | undefined => {
      const read = store.findStatusNow
      if (read === undefined) return undefined
      // Taken before the read: a change between the read and the wait still wakes it.
      const since = events.positionNow()
      const found = read(id)
      const answer = (
        found: Option.Option<PaymentStatusRecord>
      ): StatusRead | Promise<StatusRead> | undefined => {
        if (Option.isNone(found)) return undefined
        const payment = found.value
        if (payment.partnerId !== partner.id || payment.merchantId !== merchantId) return undefined
        const at = new Date(clock.unsafeCurrentTimeMillis())
        if (answersAtOnce(payment, at, maxPollMs)) return { payment, at }
        // Past the cap, `status` refuses it (503 too_many_long_polls).
        return abandoned === undefined || heldLongPolls >= maxHeldLongPolls
          ? undefined
          : holdNow(id, since, payment, deadlineOf(payment, at, maxPollMs), read, abandoned)
      }
      return found instanceof Promise ? found.then(answer) : answer(found)
    }

    /**
     * Any payment's status, for the wallet or the checkout page holding its
     * link, long-polled: a public poll (`maxHeldPublicLongPolls`, and
     * `maxHeldLongPollsPerPayment` for this payment).
     */
    const walletStatus = (id: PaymentId, maxPollMs: number) =>
      pollStatus(
        id,
        Effect.flatMap(store.findStatus(id), (found) =>
          Option.isSome(found)
            ? Effect.succeed(found.value)
            : Effect.fail(new PaymentNotFound({ paymentId: id }))
        ),
        maxPollMs,
        true
      )

    const cancel = (
      partner: Partner,
      merchantId: MerchantId,
      id: PaymentId,
      completion?: (payment: Payment) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        yield* getForMerchant(partner, merchantId, id)
        return yield* transition(
          id,
          { _tag: "Cancel", reason: "cancelled_by_merchant" },
          completion
        )
      })

    const refund = (
      partner: Partner,
      id: PaymentId,
      complete?: (refund: Refund, payment: Payment) => IdempotencyCompletion
    ) =>
      Effect.gen(function* () {
        const payment = yield* get(partner, id)
        if (payment.refund !== null) {
          return yield* new RefundExists({ paymentId: id, refundId: payment.refund.id })
        }
        if (payment.status !== "succeeded") {
          return yield* new InvalidState({
            status: effectiveStatus(payment, yield* now),
            kind: "other",
            message: `Only a succeeded payment can be refunded; this one is ${effectiveStatus(payment, yield* now)}`
          })
        }
        const refund: Refund = { id: yield* newId<RefundId>("rfnd"), createdAt: yield* now }
        const requested = yield* stamp
        yield* store.addRefund(id, refund, complete?.(refund, payment), (r) => [
          eventOf(
            requested,
            payment.partnerId,
            "refund.requested",
            refundView(r, payment, { registry, livemode }),
            {
              paymentId: payment.id,
              merchantId: payment.merchantId
            }
          )
        ])
        return { refund, payment: { ...payment, refund } }
      })

    const list = (query: PaymentPageQuery) =>
      Effect.gen(function* () {
        return yield* store.list(query)
      })

    const stats = (filter: PaymentFilter) => store.stats(filter)

    /**
     * Expires the due payments, each by its own transition (written with its
     * `payment.expired` event, waking its waiters); returns how many this
     * sweep expired. A payment another instance or a wallet got to first is
     * skipped: the transition applies only from `requires_action`.
     */
    const sweepExpired = Effect.gen(function* () {
      const due = yield* store.dueForExpiry(yield* now, SWEEP_BATCH)
      const expired = yield* Effect.forEach(due, (id) =>
        transition(id, { _tag: "Expire" }).pipe(
          Effect.as(1),
          Effect.catchTags({
            InvalidState: () => Effect.succeed(0),
            PaymentExpired: () => Effect.succeed(0),
            PaymentNotFound: () => Effect.succeed(0)
          })
        )
      )
      return expired.reduce((a, b) => a + b, 0)
    })

    /**
     * The sweeper, for as long as the scope lives: a sweep at once, then one
     * `sweepEvery` after the end of the last.
     */
    const sweepForever = Effect.repeat(
      sweepExpired.pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("expiry sweep failed", cause), 0)
        )
      ),
      Schedule.spaced(sweepEvery)
    )

    /**
     * The server is stopping: every held long-poll is answered now with the
     * payment's status as it is, and later ones are answered at once.
     */
    const drain = Effect.sync(() => {
      draining = true
      for (const answerNow of [...drainers]) answerNow()
    })

    return {
      create,
      find,
      get,
      getForMerchant,
      transition: spanned("Payments.transition", transition),
      transitionFenced: spanned("Payments.transition", transitionFenced),
      status,
      statusNow,
      walletStatus,
      cancel: spanned("Payments.cancel", cancel),
      refund: spanned("Payments.refund", refund),
      list: spanned("Payments.list", list),
      stats: spanned("Payments.stats", stats),
      sweepExpired,
      sweepForever,
      effectiveStatus,
      drain
    } as const
  }),
  dependencies: [Merchants.Default]
}) {}
