/**
 * The expiry sweeper's interval, on the TestClock: a sweep at once, then one
 * every `expirySweepMs` (default 5 s); each payment past its time is recorded
 * expired by the first sweep after it, and not a moment before.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Duration, Effect, Layer, TestClock } from "effect"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { unitGround } from "../../test/UnitLayers.js"
import { Merchants } from "../merchants/Merchants.js"
import { Partners } from "../partners/Partners.js"
import { findCurrency } from "../shared/Currency.js"
import { Payments } from "./Payments.js"
import { defaultPaymentsSettings } from "./PaymentsConfig.js"

/** Only what the sweep and the fixture stand on: payments, merchants, partners and their ground. */
const engine = (expirySweepMs?: number) =>
  Layer.mergeAll(Payments.Default, Merchants.Default, Partners.Default).pipe(
    Layer.provideMerge(
      unitGround(expirySweepMs === undefined ? {} : { expirySweepMs }, MemoryStorage)
    )
  )

const USD = { kind: "fiat", currency: findCurrency("USD")! } as const

/**
 * A merchant's payments expiring `dueInMs` after now (the TestClock's 0), and
 * the sweeper running from now on in the test's scope. `storedStatuses` reads
 * what is recorded (not the status a read derives from the time).
 */
const sweeping = (dueInMs: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const { partner, merchant } = yield* partnerWithMerchant
    const payments = yield* Payments
    const start = yield* TestClock.currentTimeMillis
    const created = yield* Effect.forEach(dueInMs, (ms, i) =>
      payments.create(partner, merchant.id, {
        referenceId: `r${i}`,
        amount: { unit: USD, value: 1n },
        expiresAt: new Date(start + ms)
      })
    )
    yield* Effect.forkScoped(payments.sweepForever)
    // The first sweep runs at once (nothing is due yet).
    yield* settle
    const storedStatuses = Effect.forEach(created, (p) =>
      Effect.map(payments.get(partner, p.id), (stored) => stored.status)
    )
    const storedAt = Effect.forEach(created, (p) =>
      Effect.map(payments.get(partner, p.id), (stored) => stored.updatedAt.getTime() - start)
    )
    /** The TestClock moved on to `ms` after the start, and the sweeps due by then run. */
    const at = (ms: number) =>
      Effect.gen(function* () {
        const now = (yield* TestClock.currentTimeMillis) - start
        yield* TestClock.adjust(Duration.millis(ms - now))
        yield* settle
      })
    return { storedStatuses, storedAt, at }
  })

/** Lets the forked sweeper run what the clock made due (its store calls, its transitions). */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("the expiry sweeper", () => {
  it.scoped(
    "sweeps every expirySweepMs: each payment recorded expired by the first sweep after its time",
    () =>
      Effect.gen(function* () {
        // Sweeps at 0, 1000, 2000, 3000, 4000 ms: due at 2500 → recorded at 3000; due at 3001 → at 4000.
        const { storedStatuses, storedAt, at } = yield* sweeping([2_500, 3_001])
        yield* at(2_999)
        expect(yield* storedStatuses).toEqual(["requires_action", "requires_action"])
        yield* at(3_000)
        expect(yield* storedStatuses).toEqual(["expired", "requires_action"])
        yield* at(3_999)
        expect(yield* storedStatuses).toEqual(["expired", "requires_action"])
        yield* at(4_000)
        expect(yield* storedStatuses).toEqual(["expired", "expired"])
        expect(yield* storedAt).toEqual([3_000, 4_000])
      }).pipe(Effect.provide(engine(1_000)))
  )

  it.scoped("sweeps every 100 ms at the shortest interval allowed", () =>
    Effect.gen(function* () {
      const { storedStatuses, storedAt, at } = yield* sweeping([1_050])
      yield* at(1_099)
      expect(yield* storedStatuses).toEqual(["requires_action"])
      yield* at(1_100)
      expect(yield* storedStatuses).toEqual(["expired"])
      expect(yield* storedAt).toEqual([1_100])
    }).pipe(Effect.provide(engine(100)))
  )

  it.scoped("sweeps every 5 s without the option", () =>
    Effect.gen(function* () {
      expect(defaultPaymentsSettings.expirySweepMs).toBe(5_000)
      // Sweeps at 0, 5000, 10000 ms.
      const { storedStatuses, storedAt, at } = yield* sweeping([2_500, 5_001])
      yield* at(4_999)
      expect(yield* storedStatuses).toEqual(["requires_action", "requires_action"])
      yield* at(5_000)
      expect(yield* storedStatuses).toEqual(["expired", "requires_action"])
      yield* at(9_999)
      expect(yield* storedStatuses).toEqual(["expired", "requires_action"])
      yield* at(10_000)
      expect(yield* storedStatuses).toEqual(["expired", "expired"])
      expect(yield* storedAt).toEqual([5_000, 10_000])
    }).pipe(Effect.provide(engine()))
  )
})
