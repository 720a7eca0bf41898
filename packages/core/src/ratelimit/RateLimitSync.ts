/**
 * How the instances of one deployment share their rate limits: each limits on
 * its own buckets in memory (no database round trip on a request), and at
 * most once a second, only when it took tokens since, sends the tokens it
 * took for every key in one batched statement (RateLimitStore.sync) and moves
 * its buckets by what the others took, as the shared levels read back show.
 * A minute or more after its last purge, a sync also removes the shared
 * buckets full again. One instance alone is held to exactly its own bucket.
 *
 * The bound (docs/operations.md): an instance learns the others' takes up to
 * a sync later, so over any window the instances together admit at most about
 * (N - 1) × (burst + one second of rate) more than one instance would (each
 * of the others, its bucket full, spends it and a second of refill before it
 * hears). The shared bucket then owes what was taken beyond it, and every
 * instance waits until it is paid back: over a longer window the rate holds.
 */
import { Clock, Duration, Effect } from "effect"
import { RATE_LIMIT_PURGE_INTERVAL_MS, RATE_LIMIT_SYNC_INTERVAL_MS } from "./RateLimitConfig.js"
import type { RateLimiter } from "./RateLimiter.js"
import type { RateLimitStoreShape, RateLimitUse } from "./RateLimitStore.js"

/** A sync that takes longer than this is given up: its takes go with the next one. */
const SYNC_TIMEOUT = Duration.seconds(5)

/** One sync: every limiter's takes since the last, sent at once; the levels read back. */
export const syncOnce = (
  store: RateLimitStoreShape,
  limiters: ReadonlyArray<RateLimiter>,
  state: { lastPurge: number }
) =>
  Effect.gen(function* () {
    const at = yield* Clock.currentTimeMillis
    const uses: Array<RateLimitUse> = []
    const owners = new Map<string, { readonly limiter: RateLimiter; readonly key: string }>()
    for (const limiter of limiters) {
      const { perSecond, burst } = limiter.settings
      for (const { key, taken } of limiter.drainTaken(at)) {
        const shared = `${limiter.scope}:${key}`
        uses.push({ key: shared, taken, perSecond, burst })
        owners.set(shared, { limiter, key })
      }
    }
    if (uses.length === 0) return
    // Every instance locks the shared rows in the same order: concurrent syncs cannot deadlock.
    uses.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const levels = yield* store.sync(uses, new Date(at)).pipe(
      Effect.onError(() =>
        Effect.sync(() => {
          for (const limiter of limiters) limiter.abandon()
        })
      )
    )
    for (const { key, millitokens } of levels) {
      const owner = owners.get(key)
      owner?.limiter.reconcile(owner.key, { millitokens, at })
    }
    if (at - state.lastPurge >= RATE_LIMIT_PURGE_INTERVAL_MS) {
      state.lastPurge = at
      yield* store.purge(new Date(at))
    }
  })

/**
 * Syncs forever, a second apart (the wait starts after each sync ends, so
 * never more often). A failed sync is logged and the next one goes on. Only
 * started when a limit is on; interrupted with the engine.
 */
export const syncForever = (store: RateLimitStoreShape, limiters: ReadonlyArray<RateLimiter>) =>
  Effect.gen(function* () {
    const state = { lastPurge: yield* Clock.currentTimeMillis }
    const once = syncOnce(store, limiters, state).pipe(
      Effect.timeoutFail({
        duration: SYNC_TIMEOUT,
        onTimeout: () => new Error("the rate limit sync took longer than 5 s")
      }),
      Effect.catchAllCause((cause) => Effect.logWarning("rate limit sync failed", cause))
    )
    while (true) {
      yield* Effect.sleep(RATE_LIMIT_SYNC_INTERVAL_MS)
      yield* once
    }
  })
