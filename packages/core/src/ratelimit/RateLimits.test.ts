import { describe, expect, it } from "@effect/vitest"
import { makeMemoryStorage } from "@pay/testing"
import { Effect, Exit, Layer, Scope, TestClock } from "effect"
import { RateLimitsConfig, type RateLimitsSettings } from "./RateLimitConfig.js"
import { RateLimitStore, type RateLimitStoreShape, type RateLimitUse } from "./RateLimitStore.js"
import { admitAll, RateLimits, type RateLimitsShape } from "./RateLimits.js"

/** The in-memory shared buckets, with every call to them recorded. */
const countingStore = Effect.gen(function* () {
  const inner = yield* Effect.provide(RateLimitStore, makeMemoryStorage())
  const syncs: Array<{ readonly uses: ReadonlyArray<RateLimitUse>; readonly at: number }> = []
  const purges: Array<number> = []
  const store: RateLimitStoreShape = {
    sync: (uses, at) => {
      syncs.push({ uses, at: at.getTime() })
      return inner.sync(uses, at)
    },
    purge: (at) => {
      purges.push(at.getTime())
      return inner.purge(at)
    }
  }
  return { store, syncs, purges }
})

/** An instance's limits on `store`, in `scope`. */
const instance = (store: RateLimitStoreShape, rateLimits: RateLimitsSettings, scope: Scope.Scope) =>
  Effect.map(
    Layer.buildWithScope(
      RateLimits.layer.pipe(
        Layer.provide(
          Layer.merge(
            Layer.succeed(RateLimitStore, store),
            Layer.succeed(RateLimitsConfig, rateLimits)
          )
        )
      ),
      scope
    ),
    (context) => context.unsafeMap.get(RateLimits.key) as RateLimits["Type"]
  )

/** Lets the forked sync run after the clock moved. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("the rate limits' sync", () => {
  it.scoped("with every limit off, checks nothing and never touches the store", () =>
    Effect.gen(function* () {
      const { store, syncs, purges } = yield* countingStore
      const limits = yield* instance(store, { perApiKey: { perSecond: 0 } }, yield* Effect.scope)
      expect(limits).toEqual({
        perApiKey: undefined,
        perPartner: undefined,
        perWalletApp: undefined,
        perPayment: undefined
      })
      yield* TestClock.adjust("10 minutes")
      yield* settle
      expect([syncs.length, purges.length]).toEqual([0, 0])
    })
  )

  it.scoped(
    "syncs at most once a second, only after takes, all keys of every limit in one call",
    () =>
      Effect.gen(function* () {
        const { store, syncs } = yield* countingStore
        const limits = yield* instance(
          store,
          { perApiKey: { perSecond: 100 }, perPayment: { perSecond: 5, burst: 10 } },
          yield* Effect.scope
        )
        // Burst defaults to the rate.
        expect(limits.perApiKey?.settings).toEqual({ perSecond: 100, burst: 100 })
        expect(limits.perWalletApp).toBeUndefined()
        // Requests every 100 ms for 5 s.
        for (let i = 0; i < 50; i++) {
          limits.perApiKey!.take("key_a")
          limits.perApiKey!.take(`key_${i % 3}`)
          limits.perPayment!.take("pay_1")
          yield* TestClock.adjust("100 millis")
          yield* settle
        }
        expect(syncs.length).toBeGreaterThanOrEqual(4)
        expect(syncs.length).toBeLessThanOrEqual(5)
        for (let i = 1; i < syncs.length; i++) {
          expect(syncs[i]!.at - syncs[i - 1]!.at).toBeGreaterThanOrEqual(1000)
        }
        expect(syncs[0]!.uses).toEqual([
          { key: "api_key:key_0", taken: 4, perSecond: 100, burst: 100 },
          { key: "api_key:key_1", taken: 3, perSecond: 100, burst: 100 },
          { key: "api_key:key_2", taken: 3, perSecond: 100, burst: 100 },
          { key: "api_key:key_a", taken: 10, perSecond: 100, burst: 100 },
          { key: "payment:pay_1", taken: 10, perSecond: 5, burst: 10 }
        ])
        // Idle: no more syncs.
        const before = syncs.length
        yield* TestClock.adjust("1 minute")
        yield* settle
        expect(syncs.length).toBe(before)
      })
  )

  it.scoped("two instances share a bucket: together they admit about what one would", () =>
    Effect.gen(function* () {
      const { store } = yield* countingStore
      const scope = yield* Effect.scope
      const settings = { perApiKey: { perSecond: 1, burst: 4 } }
      const a = (yield* instance(store, settings, scope)).perApiKey!
      const b = (yield* instance(store, settings, scope)).perApiKey!
      // A client asks both, each every 50 ms, for 30 s.
      let admitted = 0
      for (let i = 0; i < 600; i++) {
        if (a.take("k") === undefined) admitted++
        if (b.take("k") === undefined) admitted++
        yield* TestClock.adjust("50 millis")
        yield* settle
      }
      // One instance alone: 4 at once, then one a second, 33 in all. Unshared, two would admit
      // 66; the documented bound is (N - 1) × (burst + a second of rate) = 5 more than one.
      expect(admitted).toBeLessThanOrEqual(33 + 5)
      expect(admitted).toBeGreaterThanOrEqual(33 - 1)
    })
  )

  it.scoped("purges the shared buckets full again, at most once a minute, only while syncing", () =>
    Effect.gen(function* () {
      const { store, purges } = yield* countingStore
      const limits = yield* instance(
        store,
        { perWalletApp: { perSecond: 10 } },
        yield* Effect.scope
      )
      for (let i = 0; i < 130; i++) {
        limits.perWalletApp!.take("app_1")
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      expect(purges.length).toBe(2)
      expect(purges[1]! - purges[0]!).toBeGreaterThanOrEqual(60_000)
    })
  )

  it.effect("stops with its scope, a sync in flight too: closing waits for neither", () =>
    Effect.gen(function* () {
      let started = 0
      const hanging: RateLimitStoreShape = {
        sync: () =>
          Effect.zipRight(
            Effect.sync(() => started++),
            Effect.never
          ),
        purge: () => Effect.never
      }
      const scope = yield* Scope.make()
      const limits = yield* instance(hanging, { perApiKey: { perSecond: 1 } }, scope)
      limits.perApiKey!.take("k")
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(started).toBe(1)
      // The database never answers: the scope closes all the same, at once.
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.effect("stops with its scope: closing does not wait for the next sync", () =>
    Effect.gen(function* () {
      const { store, syncs } = yield* countingStore
      const scope = yield* Scope.make()
      const limits = yield* instance(store, { perApiKey: { perSecond: 1 } }, scope)
      limits.perApiKey!.take("k")
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(syncs.length).toBe(0)
    })
  )
})

/** One partner API request with `keyId` of `partnerId`, as partners/Authenticate.ts checks it. */
const partnerRequest = (limits: RateLimitsShape, partnerId: string, keyId: string) =>
  admitAll([
    [limits.perApiKey, keyId],
    [limits.perPartner, partnerId]
  ])

describe("the partner's limit: all its keys together", () => {
  it.scoped(
    "by default the same as one key's: a second key buys nothing; another partner goes on",
    () =>
      Effect.gen(function* () {
        const { store } = yield* countingStore
        const limits = yield* instance(
          store,
          { perApiKey: { perSecond: 1, burst: 3 } },
          yield* Effect.scope
        )
        expect(limits.perPartner?.settings).toEqual({ perSecond: 1, burst: 3 })
        // Keys 1 and 2 of partner A, alternately: together A's burst, 3, not 6.
        const a = [1, 2, 1, 2, 1, 2].map((i) => partnerRequest(limits, "ptr_a", `key_a${i}`))
        expect(a.map((r) => r?.scope)).toEqual([
          undefined,
          undefined,
          undefined,
          "partner",
          "partner",
          "partner"
        ])
        expect(a[3]?.retryAfterSeconds).toBe(1)
        // Partner B's key is not held by A's spending.
        for (let i = 0; i < 3; i++)
          expect(partnerRequest(limits, "ptr_b", "key_b1")).toBeUndefined()
        expect(partnerRequest(limits, "ptr_b", "key_b1")?.scope).toBe("api_key")
        // A refused request took from neither bucket: a second later A has exactly one token,
        // which key 2 (refused three times) may use.
        yield* TestClock.adjust("1 second")
        expect(partnerRequest(limits, "ptr_a", "key_a2")).toBeUndefined()
        expect(partnerRequest(limits, "ptr_a", "key_a1")?.scope).toBe("partner")
      })
  )

  it.scoped("over 30 s, many keys of one partner get the partner's budget, no more", () =>
    Effect.gen(function* () {
      const { store } = yield* countingStore
      const limits = yield* instance(
        store,
        { perApiKey: { perSecond: 2, burst: 4 }, perPartner: { perSecond: 3, burst: 6 } },
        yield* Effect.scope
      )
      let admittedA = 0
      let admittedB = 0
      // Ten keys of A, each every 100 ms; B's one key every 100 ms.
      for (let t = 0; t < 300; t++) {
        for (let k = 0; k < 10; k++) {
          if (partnerRequest(limits, "ptr_a", `key_a${k}`) === undefined) admittedA++
        }
        if (partnerRequest(limits, "ptr_b", "key_b") === undefined) admittedB++
        yield* TestClock.adjust("100 millis")
        yield* settle
      }
      // A: 6 at once, then 3 a second (about 30 s): 6 + 90; ten keys unshared would get 40 + 600.
      expect(admittedA).toBeLessThanOrEqual(6 + 90)
      expect(admittedA).toBeGreaterThanOrEqual(6 + 89)
      // B, alone: its key's own limit is the smaller, 4 + 2 a second.
      expect(admittedB).toBeGreaterThanOrEqual(4 + 59)
      expect(admittedB).toBeLessThanOrEqual(4 + 60)
    })
  )

  it.scoped("perSecond 0 turns it off: each key has only its own", () =>
    Effect.gen(function* () {
      const { store } = yield* countingStore
      const limits = yield* instance(
        store,
        { perApiKey: { perSecond: 1, burst: 2 }, perPartner: { perSecond: 0 } },
        yield* Effect.scope
      )
      expect(limits.perPartner).toBeUndefined()
      for (const key of ["k1", "k1", "k2", "k2"]) {
        expect(partnerRequest(limits, "ptr_a", key)).toBeUndefined()
      }
    })
  )

  it.scoped("two instances share a partner's bucket through the store, as `partner:<id>`", () =>
    Effect.gen(function* () {
      const { store, syncs } = yield* countingStore
      const scope = yield* Effect.scope
      const settings = { perApiKey: { perSecond: 1, burst: 4 } }
      const one = yield* instance(store, settings, scope)
      const two = yield* instance(store, settings, scope)
      // Partner A's key 1 on one instance, its key 2 on the other, each every 50 ms, for 30 s.
      let admitted = 0
      for (let i = 0; i < 600; i++) {
        if (partnerRequest(one, "ptr_a", "key_1") === undefined) admitted++
        if (partnerRequest(two, "ptr_a", "key_2") === undefined) admitted++
        yield* TestClock.adjust("50 millis")
        yield* settle
      }
      // One partner alone: 4 at once, then one a second, 33. Unshared, the two keys on two
      // instances would get 66; the documented bound allows (N - 1) × (burst + rate) = 5 more.
      expect(admitted).toBeLessThanOrEqual(33 + 5)
      expect(admitted).toBeGreaterThanOrEqual(33 - 1)
      expect(syncs.some(({ uses }) => uses.some((u) => u.key === "partner:ptr_a"))).toBe(true)
    })
  )
})
