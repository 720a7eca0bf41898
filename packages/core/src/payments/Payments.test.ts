import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import {
  Cause,
  Deferred,
  Duration,
  Effect,
  Exit,
  FastCheck,
  Fiber,
  Layer,
  Option,
  TestClock
} from "effect"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { unitGround } from "../../test/UnitLayers.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { MERCHANT_READ_REUSE_MS, Merchants } from "../merchants/Merchants.js"
import { Partners } from "../partners/Partners.js"
import type { PayStorage } from "../Storage.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { LongPollsExhausted, type Payment, type PaymentStatus } from "./Payment.js"
import { PaymentEvents } from "./PaymentEvents.js"
import type { PaymentTransition } from "./PaymentStateMachine.js"
import { Payments, type StatusRead } from "./Payments.js"
import { defaultPaymentsSettings } from "./PaymentsConfig.js"

/** Payments, and the merchants and partners the fixtures make, over their ground. */
const engine = (storage: Layer.Layer<PayStorage> = MemoryStorage, settings = {}) =>
  Layer.mergeAll(Payments.Default, Merchants.Default, Partners.Default).pipe(
    Layer.provideMerge(unitGround({ maxLongPollMs: 30_000, ...settings }, storage))
  )

const USD = { kind: "fiat", currency: findCurrency("USD")! } as const
const ASSET = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const start: PaymentTransition = {
  _tag: "StartProcessing",
  tokenAmount: { asset: ASSET, value: 10_500_000n },
  buyer: {
    account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
    providerName: "W",
    providerIcon: null
  },
  transaction: null
}

/** A partner, a merchant and an open payment with the default lifetime. */
const fixture = Effect.gen(function* () {
  const { partner, merchant } = yield* partnerWithMerchant
  const payments = yield* Payments
  const payment = yield* payments.create(partner, merchant.id, {
    referenceId: "r1",
    amount: { unit: USD, value: 1050n }
  })
  return { partner, merchant, payment, payments }
})

describe("Payments", () => {
  it.effect("expires after the default 5 minutes: read at once, recorded by the sweep", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      expect(payment.expiresAt.getTime() - payment.createdAt.getTime()).toBe(300_000)
      yield* TestClock.adjust(Duration.minutes(5))
      const read = yield* payments.status(partner, merchant.id, payment.id, 0)
      expect(payments.effectiveStatus(read.payment, read.at)).toBe("expired")
      expect(read.payment.status).toBe("requires_action")
      expect(yield* payments.sweepExpired).toBe(1)
      const swept = yield* payments.get(partner, payment.id)
      expect(swept.status).toBe("expired")
      expect(yield* payments.sweepExpired).toBe(0)
    }).pipe(Effect.provide(engine()))
  )

  it.effect("refuses a payment that expires in the past or too far ahead", () =>
    Effect.gen(function* () {
      const { partner, merchant, payments } = yield* fixture
      const at = yield* TestClock.currentTimeMillis
      const create = (expiresAt: number) =>
        Effect.flip(
          payments.create(partner, merchant.id, {
            referenceId: "r",
            amount: { unit: USD, value: 1n },
            expiresAt: new Date(expiresAt)
          })
        )
      expect(yield* create(at)).toMatchObject({
        _tag: "InvalidInput",
        issues: [{ field: "expiresAt", message: "must be in the future" }]
      })
      expect((yield* create(at + 31 * 86_400_000))._tag).toBe("InvalidInput")
    }).pipe(Effect.provide(engine()))
  )

  it.effect("answers a long-poll the moment the status changes", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      const poll = yield* Effect.fork(payments.status(partner, merchant.id, payment.id, 10_000))
      yield* TestClock.adjust(Duration.seconds(1))
      yield* payments.transition(payment.id, start)
      // No more clock time: the change alone wakes it.
      const answered = yield* Fiber.join(poll)
      expect(answered.payment.status).toBe("processing")
      expect(answered.at.getTime() - payment.createdAt.getTime()).toBe(1000)
    }).pipe(Effect.provide(engine()))
  )

  it.effect(
    "drain answers every held long-poll at once with the current status, and later ones at once",
    () =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const events = yield* PaymentEvents
        const partnerPoll = yield* Effect.fork(
          payments.status(partner, merchant.id, payment.id, 20_000)
        )
        const walletPoll = yield* Effect.fork(payments.walletStatus(payment.id, 20_000))
        let withoutFiber: StatusRead | undefined
        const held = payments.statusNow(partner, merchant.id, payment.id, 20_000, () => {})
        if (!(held instanceof Promise)) throw new Error("not held")
        void held.then((answer) => {
          withoutFiber = answer
        })
        yield* TestClock.adjust(Duration.seconds(1))
        expect(yield* events.held).toBe(3)

        yield* payments.drain
        // No more clock time: the drain alone answers them, with the status as it is.
        for (const poll of [partnerPoll, walletPoll]) {
          const answered = yield* Fiber.join(poll)
          expect(answered.payment.status).toBe("requires_action")
          expect(answered.at.getTime() - payment.createdAt.getTime()).toBe(1000)
        }
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        expect(withoutFiber?.payment.status).toBe("requires_action")
        expect(yield* events.held).toBe(0)

        // A long-poll after the drain is answered at once, held neither way.
        const later = yield* payments.status(partner, merchant.id, payment.id, 20_000)
        expect(later.at.getTime() - payment.createdAt.getTime()).toBe(1000)
        const now = payments.statusNow(partner, merchant.id, payment.id, 20_000, () => {})
        expect(now instanceof Promise ? "held" : now?.payment.status).toBe("requires_action")
        expect(yield* events.held).toBe(0)
      }).pipe(Effect.provide(engine()))
  )

  it.effect("answers the unchanged status when the time runs out, capped at the maximum", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      yield* payments.transition(payment.id, start)
      const short = yield* Effect.fork(payments.status(partner, merchant.id, payment.id, 2_000))
      yield* TestClock.adjust(Duration.millis(1_999))
      expect(Option.isNone(yield* Fiber.poll(short))).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Fiber.join(short)).payment.status).toBe("processing")

      const long = yield* Effect.fork(payments.status(partner, merchant.id, payment.id, 600_000))
      yield* TestClock.adjust(Duration.seconds(30))
      expect((yield* Fiber.join(long)).payment.status).toBe("processing")
    }).pipe(Effect.provide(engine()))
  )

  it.effect("wakes an unpaid payment's long-poll at its expiry", () =>
    Effect.gen(function* () {
      const { partner, merchant, payments } = yield* fixture
      const at = yield* TestClock.currentTimeMillis
      const soon = yield* payments.create(partner, merchant.id, {
        referenceId: "soon",
        amount: { unit: USD, value: 1n },
        expiresAt: new Date(at + 3_000)
      })
      const poll = yield* Effect.fork(payments.status(partner, merchant.id, soon.id, 20_000))
      yield* TestClock.adjust(Duration.seconds(3))
      const answered = yield* Fiber.join(poll)
      expect(payments.effectiveStatus(answered.payment, answered.at)).toBe("expired")
    }).pipe(Effect.provide(engine()))
  )

  it.effect("answers a final payment's long-poll at once, and cleans up its waiters", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      yield* payments.cancel(partner, merchant.id, payment.id)
      const answered = yield* payments.status(partner, merchant.id, payment.id, 30_000)
      expect(answered.payment.status).toBe("cancelled")
      expect((yield* payments.get(partner, payment.id)).cancelledReason).toBe(
        "cancelled_by_merchant"
      )
    }).pipe(Effect.provide(engine()))
  )

  it.effect("answers a status on the spot only when nothing has to wait, as status would", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      // MemoryStorage reads on the spot, as SQLite does: never a promise here.
      const statusNow = (
        p: typeof partner,
        m: typeof merchant.id,
        id: typeof payment.id,
        ms: number
      ) => {
        const read = payments.statusNow(p, m, id, ms)
        if (read instanceof Promise) throw new Error("MemoryStorage answered a promise")
        return read
      }
      const now = (maxPollMs: number, p = partner, m = merchant.id) =>
        statusNow(p, m, payment.id, maxPollMs)?.payment.status
      expect(now(0)).toBe("requires_action")
      // A long-poll to hold, another merchant's or partner's payment, none at all: `status`.
      expect(now(5_000)).toBeUndefined()
      expect(now(0, partner, "mrch_00000000000000000000" as typeof merchant.id)).toBeUndefined()
      const other = yield* (yield* Partners).create({ name: "Q" })
      expect(now(0, other.partner)).toBeUndefined()
      expect(
        statusNow(partner, merchant.id, "pay_00000000000000000000" as typeof payment.id, 0)
      ).toBeUndefined()
      // Past its expiry (not yet swept): read as expired, final, so a long-poll answers at once.
      yield* TestClock.adjust(Duration.minutes(5))
      const read = statusNow(partner, merchant.id, payment.id, 5_000)
      expect(read && payments.effectiveStatus(read.payment, read.at)).toBe("expired")
      const slow = yield* payments.status(partner, merchant.id, payment.id, 5_000)
      expect(read).toEqual(slow)
    }).pipe(Effect.provide(engine()))
  )

  describe("a long-poll held without a fiber (statusNow with a way to let go)", () => {
    /** statusNow holding: its promise, what settles it, and how it lets go. */
    const holdNow = (
      payments: Payments,
      ...[partner, merchantId, id, maxPollMs]: Parameters<Payments["statusNow"]>
    ) => {
      let release: (() => void) | undefined
      let answer: StatusRead | undefined
      const held = payments.statusNow(partner, merchantId, id, maxPollMs, (r) => {
        release = r
      })
      if (!(held instanceof Promise)) throw new Error("not held")
      void held.then((r) => {
        answer = r
      })
      return {
        answer: () => answer,
        letGo: () => release?.(),
        // The promise's callbacks run on the microtask queue: let them.
        settled: Effect.promise(
          () => new Promise<StatusRead | undefined>((r) => setImmediate(() => r(answer)))
        )
      }
    }

    it.effect("answers the moment the status changes, and holds one waiter until then", () =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const events = yield* PaymentEvents
        const poll = holdNow(payments, partner, merchant.id, payment.id, 10_000)
        expect(yield* events.held).toBe(1)
        yield* TestClock.adjust(Duration.seconds(1))
        expect(yield* poll.settled).toBeUndefined()
        yield* payments.transition(payment.id, start)
        const answered = yield* poll.settled
        expect(answered?.payment.status).toBe("processing")
        expect(answered!.at.getTime() - payment.createdAt.getTime()).toBe(1000)
        expect(yield* events.held).toBe(0)
      }).pipe(Effect.provide(engine()))
    )

    it.effect(
      "answers the unchanged status at maxPollMs, capped, and waits on through a change that keeps it",
      () =>
        Effect.gen(function* () {
          const { partner, merchant, payment, payments } = yield* fixture
          yield* payments.transition(payment.id, start)
          const short = holdNow(payments, partner, merchant.id, payment.id, 2_000)
          yield* TestClock.adjust(Duration.millis(1_999))
          expect(yield* short.settled).toBeUndefined()
          yield* TestClock.adjust(Duration.millis(1))
          expect((yield* short.settled)?.payment.status).toBe("processing")

          const long = holdNow(payments, partner, merchant.id, payment.id, 600_000)
          // A change published that leaves the status as it was: held on.
          yield* (yield* PaymentEvents).publish({ paymentId: payment.id, status: "processing" })
          expect(yield* long.settled).toBeUndefined()
          yield* TestClock.adjust(Duration.seconds(30))
          const answered = yield* long.settled
          expect(answered?.payment.status).toBe("processing")
          expect(answered!.at.getTime() - payment.createdAt.getTime()).toBe(32_000)
        }).pipe(Effect.provide(engine()))
    )

    it.effect("answers expired at an unpaid payment's expiry, with nothing written", () =>
      Effect.gen(function* () {
        const { partner, merchant, payments } = yield* fixture
        const at = yield* TestClock.currentTimeMillis
        const soon = yield* payments.create(partner, merchant.id, {
          referenceId: "soon",
          amount: { unit: USD, value: 1n },
          expiresAt: new Date(at + 3_000)
        })
        const poll = holdNow(payments, partner, merchant.id, soon.id, 20_000)
        yield* TestClock.adjust(Duration.millis(2_999))
        expect(yield* poll.settled).toBeUndefined()
        yield* TestClock.adjust(Duration.millis(1))
        const answered = yield* poll.settled
        expect(answered && payments.effectiveStatus(answered.payment, answered.at)).toBe("expired")
        expect(answered?.at.getTime()).toBe(at + 3_000)
      }).pipe(Effect.provide(engine()))
    )

    it.effect("lets go of its waiter when the client goes away, and never answers after", () =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const events = yield* PaymentEvents
        const polls = Array.from({ length: 3 }, () =>
          holdNow(payments, partner, merchant.id, payment.id, 10_000)
        )
        expect(yield* events.held).toBe(3)
        for (const poll of polls) poll.letGo()
        expect(yield* events.held).toBe(0)
        yield* payments.cancel(partner, merchant.id, payment.id)
        yield* TestClock.adjust(Duration.seconds(10))
        for (const poll of polls) expect(yield* poll.settled).toBeUndefined()
      }).pipe(Effect.provide(engine()))
    )

    it.effect("refuses nothing itself: another's payment, or none, is left to status", () =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const other = yield* (yield* Partners).create({ name: "Q" })
        const hold = () => {}
        expect(
          payments.statusNow(other.partner, merchant.id, payment.id, 5_000, hold)
        ).toBeUndefined()
        expect(
          payments.statusNow(
            partner,
            merchant.id,
            "pay_00000000000000000000" as typeof payment.id,
            5_000,
            hold
          )
        ).toBeUndefined()
        expect(yield* (yield* PaymentEvents).held).toBe(0)
      }).pipe(Effect.provide(engine()))
    )
  })

  it.effect(
    "honours a merchant change made elsewhere within MERCHANT_READ_REUSE_MS, one made here at once",
    () =>
      Effect.gen(function* () {
        const { partner, merchant, payments } = yield* fixture
        const merchants = yield* Merchants
        const create = payments.create(partner, merchant.id, {
          referenceId: "r",
          amount: { unit: USD, value: 1n }
        })
        const refused = Effect.map(Effect.flip(create), (e) => e._tag)
        // Another process (an instance, the CLI) writes the store: this one's Merchants is not told.
        const elsewhere = (status: "active" | "suspended") =>
          Effect.flatMap(MerchantStore, (store) =>
            Effect.flatMap(TestClock.currentTimeMillis, (at) =>
              store.setStatus(merchant.id, status, new Date(at))
            )
          )
        yield* create
        yield* elsewhere("suspended")
        // Read again only once the last read is MERCHANT_READ_REUSE_MS old.
        yield* TestClock.adjust(Duration.millis(MERCHANT_READ_REUSE_MS - 1))
        yield* create
        yield* TestClock.adjust(Duration.millis(1))
        expect(yield* refused).toBe("MerchantInactive")
        // Here: at once, both ways.
        yield* merchants.setStatus(merchant.id, "active")
        yield* create
        yield* merchants.setStatus(merchant.id, "inactive")
        expect(yield* refused).toBe("MerchantInactive")
        yield* merchants.setStatus(merchant.id, "active")
        yield* merchants.remove(partner, merchant.id)
        expect(yield* refused).toBe("MerchantNotFound")
        // A refusal is not kept: a merchant that is not found is looked for again each time.
        const other = yield* (yield* Partners).create({ name: "Q" })
        const theirs = yield* merchants.create(other.partner, {
          name: "N",
          email: "n@n.co",
          iconUrl: null
        })
        const forOther = payments.create(partner, theirs.id, {
          referenceId: "r",
          amount: { unit: USD, value: 1n }
        })
        expect((yield* Effect.flip(forOther))._tag).toBe("Forbidden")
        // Another partner's merchant, deleted: refused as every other route refuses it.
        const deletedForOther = payments.create(other.partner, merchant.id, {
          referenceId: "r",
          amount: { unit: USD, value: 1n }
        })
        expect((yield* Effect.flip(deletedForOther))._tag).toBe(
          (yield* Effect.flip(merchants.get(other.partner, merchant.id)))._tag
        )
        expect((yield* Effect.flip(deletedForOther))._tag).toBe("Forbidden")
      }).pipe(Effect.provide(engine()))
  )

  it.effect("never keeps a merchant read that was under way while this process changed it", () => {
    // The merchant store's reads wait for a gate, once opened: a read that saw the merchant
    // active is still in flight when the suspension commits.
    const gate = Effect.runSync(Deferred.make<void>())
    let gated = false
    const storage = Layer.effect(
      MerchantStore,
      Effect.map(MerchantStore, (store) =>
        MerchantStore.of({
          ...store,
          find: (id) =>
            Effect.flatMap(store.find(id), (found) =>
              gated ? Effect.as(Deferred.await(gate), found) : Effect.succeed(found)
            )
        })
      )
    ).pipe(Layer.provideMerge(MemoryStorage))
    return Effect.gen(function* () {
      const { partner, merchant, payments } = yield* fixture
      const merchants = yield* Merchants
      const create = payments.create(partner, merchant.id, {
        referenceId: "r",
        amount: { unit: USD, value: 1n }
      })
      yield* TestClock.adjust(Duration.seconds(1))
      gated = true
      const inFlight = yield* Effect.fork(create)
      yield* Effect.yieldNow()
      gated = false
      yield* merchants.setStatus(merchant.id, "suspended")
      yield* Deferred.succeed(gate, undefined)
      // It read the merchant active before the change: it may create, but not be kept.
      yield* Fiber.join(inFlight)
      expect((yield* Effect.flip(create))._tag).toBe("MerchantInactive")
    }).pipe(Effect.provide(engine(storage)))
  })

  it.effect("refunds a succeeded payment once, and nothing else", () =>
    Effect.gen(function* () {
      const { partner, payment, payments } = yield* fixture
      expect((yield* Effect.flip(payments.refund(partner, payment.id)))._tag).toBe("InvalidState")
      yield* payments.transition(payment.id, start)
      yield* payments.transition(payment.id, { _tag: "Succeed", txId: "0x1", transaction: null })
      const { refund } = yield* payments.refund(partner, payment.id)
      expect(refund.id).toMatch(/^rfnd_/)
      expect(yield* Effect.flip(payments.refund(partner, payment.id))).toMatchObject({
        _tag: "RefundExists",
        refundId: refund.id
      })
    }).pipe(Effect.provide(engine()))
  )

  it.effect.prop(
    "lets exactly one of racing transitions win, and never breaks the rules",
    [FastCheck.array(FastCheck.integer({ min: 0, max: 6 }), { minLength: 2, maxLength: 8 })],
    ([ops]) =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const operations: ReadonlyArray<Effect.Effect<Payment | number, unknown>> = [
          payments.cancel(partner, merchant.id, payment.id),
          payments.transition(payment.id, start),
          payments.transition(payment.id, { _tag: "Decline" }),
          payments.transition(payment.id, { _tag: "Succeed", txId: "0x1", transaction: null }),
          payments.transition(payment.id, { _tag: "Fail", failureCode: "transaction_reverted" }),
          Effect.zipRight(TestClock.adjust(Duration.minutes(6)), payments.sweepExpired),
          payments.transition(payment.id, { _tag: "Expire" })
        ]
        // Statuses in the order the successful transitions committed.
        const committed: Array<PaymentStatus> = []
        const exits = yield* Effect.all(
          ops.map((i) =>
            Effect.exit(
              Effect.tap(operations[i]!, (result) =>
                Effect.sync(() => {
                  if (typeof result === "object") committed.push(result.status)
                })
              )
            )
          ),
          { concurrency: "unbounded" }
        )
        const path = ["requires_action", ...committed]
        for (let i = 1; i < path.length; i++) {
          expect(ALLOWED.has(`${path[i - 1]}>${path[i]}`)).toBe(true)
        }
        const stored = yield* payments.get(partner, payment.id)
        // The sweep may expire it without a transition of ours: otherwise the last commit is where it is.
        if (committed.length > 0 && !ops.includes(5)) expect(stored.status).toBe(path.at(-1))
        for (const exit of exits) {
          const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
          if (Exit.isFailure(exit)) {
            expect(Option.getOrThrow(failure)).toMatchObject({
              _tag: expect.stringMatching(/^(InvalidState|PaymentExpired)$/)
            })
          }
        }
      }).pipe(Effect.provide(engine())),
    { fastCheck: { numRuns: 60 } }
  )
})

const ALLOWED = new Set([
  "requires_action>processing",
  "requires_action>expired",
  "requires_action>cancelled",
  "requires_action>failed",
  "processing>succeeded",
  "processing>failed"
])

describe("the cap on held long-polls (maxHeldLongPolls)", () => {
  const capped = () => engine(MemoryStorage, { maxHeldLongPolls: 2 })

  it.effect(
    "refuses one more hold, answers reads that hold nothing, and counts a hold until it ends",
    () =>
      Effect.gen(function* () {
        const { partner, merchant, payment, payments } = yield* fixture
        const poll = (maxPollMs: number) =>
          payments.status(partner, merchant.id, payment.id, maxPollMs)
        const first = yield* Effect.fork(poll(10_000))
        const second = yield* Effect.fork(poll(10_000))
        yield* TestClock.adjust(Duration.millis(1))
        const refused = yield* Effect.flip(poll(10_000))
        expect(refused).toBeInstanceOf(LongPollsExhausted)
        expect(refused).toMatchObject({ _tag: "LongPollsExhausted", held: 2 })
        // Without a hold (no maxPollMs): answered as ever.
        expect((yield* poll(0)).payment.status).toBe("requires_action")
        // Held without a fiber too: refused to `status`, which answers the refusal.
        expect(
          payments.statusNow(partner, merchant.id, payment.id, 10_000, () => {})
        ).toBeUndefined()
        // A client that goes away (an interrupt) frees its place.
        yield* Fiber.interrupt(first)
        const third = yield* Effect.fork(poll(10_000))
        yield* TestClock.adjust(Duration.millis(1))
        expect(yield* Effect.flip(poll(10_000))).toBeInstanceOf(LongPollsExhausted)
        // Answered ones free theirs.
        yield* payments.transition(payment.id, start)
        expect((yield* Fiber.join(second)).payment.status).toBe("processing")
        expect((yield* Fiber.join(third)).payment.status).toBe("processing")
      }).pipe(Effect.provide(capped()))
  )

  it.effect("counts holds without a fiber until answered or let go", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      const releases: Array<() => void> = []
      const holdNow = () =>
        payments.statusNow(partner, merchant.id, payment.id, 10_000, (release) => {
          releases.push(release)
        })
      expect(holdNow()).toBeInstanceOf(Promise)
      const second = holdNow()
      expect(second).toBeInstanceOf(Promise)
      expect(holdNow()).toBeUndefined()
      expect(
        yield* Effect.flip(payments.status(partner, merchant.id, payment.id, 10_000))
      ).toBeInstanceOf(LongPollsExhausted)
      // The first client goes away: its place is free at once.
      releases[0]!()
      const third = holdNow()
      expect(third).toBeInstanceOf(Promise)
      expect(holdNow()).toBeUndefined()
      // Both held are answered by the change, and free theirs.
      yield* payments.transition(payment.id, start)
      yield* Effect.promise(() => Promise.all([second, third]))
      // Processing is not final: held again, two, and no third.
      expect(holdNow()).toBeInstanceOf(Promise)
      expect(holdNow()).toBeInstanceOf(Promise)
      expect(holdNow()).toBeUndefined()
    }).pipe(Effect.provide(capped()))
  )
})

describe("public long-polls count apart (maxHeldPublicLongPolls, maxHeldLongPollsPerPayment)", () => {
  it.effect("a full public cap leaves partners' polls held; past it, the cap is named", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* fixture
      const other = yield* payments.create(partner, merchant.id, {
        referenceId: "r2",
        amount: { unit: USD, value: 1050n }
      })
      // One payment's link takes at most 2; the third on it is refused by that cap.
      const publicPolls = [
        yield* Effect.fork(payments.walletStatus(payment.id, 10_000)),
        yield* Effect.fork(payments.walletStatus(payment.id, 10_000))
      ]
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Effect.flip(payments.walletStatus(payment.id, 10_000))).toMatchObject({
        _tag: "LongPollsExhausted",
        cap: "payment",
        held: 2
      })
      // Another payment's link still gets a place, up to the public cap (3).
      publicPolls.push(yield* Effect.fork(payments.walletStatus(other.id, 10_000)))
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Effect.flip(payments.walletStatus(other.id, 10_000))).toMatchObject({
        _tag: "LongPollsExhausted",
        cap: "public",
        held: 3
      })
      // Partners' polls are held still, up to their own cap (2), fiber or not.
      const partnerPoll = yield* Effect.fork(
        payments.status(partner, merchant.id, payment.id, 10_000)
      )
      expect(payments.statusNow(partner, merchant.id, other.id, 10_000, () => {})).toBeInstanceOf(
        Promise
      )
      yield* TestClock.adjust(Duration.millis(1))
      expect(
        yield* Effect.flip(payments.status(partner, merchant.id, payment.id, 10_000))
      ).toMatchObject({ _tag: "LongPollsExhausted", cap: "partner", held: 2 })
      // All held are answered by the change, and free their places.
      yield* payments.transition(payment.id, start)
      expect((yield* Fiber.join(partnerPoll)).payment.status).toBe("processing")
      expect((yield* Fiber.join(publicPolls[0]!)).payment.status).toBe("processing")
      expect((yield* Fiber.join(publicPolls[1]!)).payment.status).toBe("processing")
      const again = yield* Effect.fork(payments.walletStatus(payment.id, 10_000))
      yield* TestClock.adjust(Duration.millis(1))
      expect(again.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(again)
    }).pipe(
      Effect.provide(
        engine(MemoryStorage, {
          maxHeldLongPolls: 2,
          maxHeldPublicLongPolls: 3,
          maxHeldLongPollsPerPayment: 2
        })
      )
    )
  )

  it("a per-payment cap is on by default", () => {
    expect(defaultPaymentsSettings.maxHeldLongPollsPerPayment).toBe(32)
    expect(defaultPaymentsSettings.maxHeldPublicLongPolls).toBe(10_000)
  })
})
