/**
 * The shared rate limit buckets' contract (RateLimitStore): a sync refills
 * each bucket (full when new) for the time since it was written, up to its
 * burst, then takes what the instance took, in one call for many
 * keys; takes beyond the level leaves it owing; concurrent syncs lose
 * nothing; a clock behind refills nothing; purge removes only buckets full
 * again. Run by each storage package.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { RateLimitStore } from "../src/ratelimit/RateLimitStore.js"

const T0 = 1_800_000_000_000
const at = (ms: number) => new Date(T0 + ms)
/** 2 tokens a second, bursts of 5. */
const use = (key: string, taken: number) => ({
  key,
  taken,
  perSecond: 2,
  burst: 5
})

export const rateLimitStorageContract = (
  name: string,
  layer: () => Layer.Layer<RateLimitStore, unknown>
) =>
  describe(`rate limit storage contract: ${name}`, () => {
    it.effect(
      "starts a bucket full, refills it by the time since, up to its burst, and takes what was taken",
      () =>
        Effect.gen(function* () {
          const store = yield* RateLimitStore
          expect(yield* store.sync([use("api_key:a", 3)], at(0))).toEqual([
            { key: "api_key:a", millitokens: 2000 }
          ])
          // Half a second at 2 a second is one token back.
          expect(yield* store.sync([use("api_key:a", 1)], at(500))).toEqual([
            { key: "api_key:a", millitokens: 2000 }
          ])
          // Ten seconds would be 20 tokens: the bucket holds 5.
          expect(yield* store.sync([use("api_key:a", 0)], at(10_500))).toEqual([
            { key: "api_key:a", millitokens: 5000 }
          ])
        }).pipe(Effect.provide(layer())),
      20_000
    )

    it.effect(
      "syncs many keys in one call, each on its own, and leaves a bucket taken beyond owing",
      () =>
        Effect.gen(function* () {
          const store = yield* RateLimitStore
          const keys = Array.from(
            { length: 300 },
            (_, i) => `payment:pay_${String(i).padStart(4, "0")}`
          )
          const first = yield* store.sync(
            keys.map((key, i) => use(key, i % 4)),
            at(0)
          )
          expect(first.length).toBe(300)
          const byKey = new Map(first.map((level) => [level.key, level.millitokens]))
          keys.forEach((key, i) => {
            expect(byKey.get(key)).toBe(5000 - (i % 4) * 1000)
          })
          // Two instances admitted 4 each from a full bucket of 5: it owes 3.
          yield* store.sync([use("wallet_app:app_x", 4)], at(0))
          expect(yield* store.sync([use("wallet_app:app_x", 4)], at(0))).toEqual([
            { key: "wallet_app:app_x", millitokens: -3000 }
          ])
          // It pays back at the rate: 2 seconds later 4 tokens are back, and 1 is taken.
          expect(yield* store.sync([use("wallet_app:app_x", 1)], at(2000))).toEqual([
            { key: "wallet_app:app_x", millitokens: 0 }
          ])
        }).pipe(Effect.provide(layer())),
      20_000
    )

    it.effect(
      "loses nothing when instances sync the same keys at once",
      () =>
        Effect.gen(function* () {
          const store = yield* RateLimitStore
          const big = (key: string, taken: number) => ({
            key,
            taken,
            perSecond: 1,
            burst: 1000
          })
          yield* Effect.all(
            Array.from({ length: 8 }, () =>
              store.sync([big("api_key:k1", 10), big("api_key:k2", 5)], at(0))
            ),
            { concurrency: "unbounded" }
          )
          const levels = yield* store.sync([big("api_key:k1", 0), big("api_key:k2", 0)], at(0))
          expect([...levels].sort((a, b) => a.key.localeCompare(b.key))).toEqual([
            { key: "api_key:k1", millitokens: 1_000_000 - 80_000 },
            { key: "api_key:k2", millitokens: 1_000_000 - 40_000 }
          ])
        }).pipe(Effect.provide(layer())),
      20_000
    )

    it.effect(
      "refills nothing for an instance whose clock is behind, and keeps the later time",
      () =>
        Effect.gen(function* () {
          const store = yield* RateLimitStore
          yield* store.sync([use("api_key:c", 4)], at(1000))
          // An instance 500 ms behind: no refill, its take counts.
          expect(yield* store.sync([use("api_key:c", 1)], at(500))).toEqual([
            { key: "api_key:c", millitokens: 0 }
          ])
          // Refilled from 1000, not from 500: 1 s at 2 a second.
          expect(yield* store.sync([use("api_key:c", 0)], at(2000))).toEqual([
            { key: "api_key:c", millitokens: 2000 }
          ])
        }).pipe(Effect.provide(layer())),
      20_000
    )

    it.effect(
      "purges the buckets full again, and only those",
      () =>
        Effect.gen(function* () {
          const store = yield* RateLimitStore
          // Full again at 0 (nothing taken), at 500 (one token), at 2000 (four tokens).
          yield* store.sync(
            [use("api_key:p0", 0), use("api_key:p1", 1), use("api_key:p4", 4)],
            at(0)
          )
          expect(yield* store.purge(at(499))).toBe(1)
          expect(yield* store.purge(at(500))).toBe(1)
          expect(yield* store.purge(at(1999))).toBe(0)
          // p4, still owing at 1999, is where it was: 1999 ms gave back 3998 millitokens.
          expect(yield* store.sync([use("api_key:p4", 0)], at(1999))).toEqual([
            { key: "api_key:p4", millitokens: 4998 }
          ])
          expect(yield* store.purge(at(2000))).toBe(1)
          // A purged bucket starts full again.
          expect(yield* store.sync([use("api_key:p4", 1)], at(2000))).toEqual([
            { key: "api_key:p4", millitokens: 4000 }
          ])
        }).pipe(Effect.provide(layer())),
      20_000
    )
  })
