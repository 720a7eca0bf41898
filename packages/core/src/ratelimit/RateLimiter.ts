/**
 * A rate limit by key (an API key's id, a wallet app's, a payment's): one
 * token bucket per key (TokenBucket.ts), held in this process's memory and
 * checked without any I/O. The buckets are an LRU of bounded size, so a
 * client that varies keys cannot grow memory; the one dropped is the one used
 * longest ago, most likely full again, which a new bucket equals. Each bucket
 * counts the tokens taken since the last sync, which RateLimitSync.ts takes
 * from the bucket every instance shares; the level read back moves the
 * bucket by what the other instances took (`drainTaken`, `reconcile`).
 */
import { makeLruCache } from "../shared/LruCache.js"
import {
  type BucketLevel,
  capacityOf,
  fullBucket,
  MILLITOKENS_PER_TOKEN,
  refill,
  secondsUntilToken,
  type TokenBucketSettings,
  take
} from "./TokenBucket.js"

/** What a limit applies to; also the prefix of its keys in the shared store. */
export type RateLimitScope = "api_key" | "partner" | "wallet_app" | "payment"

/** A key used since the last sync, and the tokens it took. */
export interface Taken {
  readonly key: string
  readonly taken: number
}

export interface RateLimiter {
  readonly scope: RateLimitScope
  readonly settings: TokenBucketSettings
  /** One request under `key`: undefined when admitted (a token taken), else the whole seconds to wait. */
  readonly take: (key: string) => number | undefined
  /**
   * What `take` would answer now, taking nothing and making no bucket: for a
   * request that must pass two limits (a key's and its partner's), so one
   * refusing takes no token from the other (`admitAll`, RateLimits.ts).
   */
  readonly wait: (key: string) => number | undefined
  /**
   * The keys taken from since the last call, and how many tokens each took,
   * as of `at`: what a sync sends. Each is then in flight until `reconcile`
   * (or `abandon`).
   */
  readonly drainTaken: (at: number) => ReadonlyArray<Taken>
  /**
   * The shared level of a drained key, read at the drain's time: the bucket
   * moves by the difference between it and what the shared bucket would hold
   * had no other instance taken (the last shared level it saw, refilled, less
   * its own takes). Alone, an instance's bucket is thus never moved; its own
   * takes since the drain still count. A key not drained (dropped and made
   * again since) is left out.
   */
  readonly reconcile: (key: string, shared: BucketLevel) => void
  /** A sync that failed: its keys' takes go with the next one. */
  readonly abandon: () => void
  /** Buckets held. */
  readonly size: () => number
}

/** Buckets one limiter holds at most: about 100 bytes each. */
export const DEFAULT_MAX_BUCKETS = 50_000

interface Bucket {
  level: BucketLevel
  /** The last shared level seen (full, when made): where "alone" is counted from. */
  base: BucketLevel
  /** Tokens taken since the last drain. */
  taken: number
  /** Drained, not yet reconciled: the takes sent, and the shared level expected if alone. */
  inFlight: { readonly taken: number; readonly expected: number } | undefined
}

export const makeRateLimiter = (
  scope: RateLimitScope,
  settings: TokenBucketSettings,
  options: { readonly now: () => number; readonly maxBuckets?: number }
): RateLimiter => {
  const { now } = options
  const capacity = capacityOf(settings)
  // Keys with takes not yet synced; a bucket dropped from the LRU leaves with its takes.
  const dirty = new Set<string>()
  const sent = new Set<string>()
  const buckets = makeLruCache<string, Bucket>(options.maxBuckets ?? DEFAULT_MAX_BUCKETS, (key) => {
    dirty.delete(key)
    sent.delete(key)
  })
  return {
    scope,
    settings,
    take: (key) => {
      const at = now()
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        const full = fullBucket(settings, at)
        bucket = { level: full, base: full, taken: 0, inFlight: undefined }
        buckets.set(key, bucket)
      }
      const outcome = take(bucket.level, settings, at)
      bucket.level = outcome.level
      if (!outcome.admitted) return outcome.retryAfterSeconds
      bucket.taken++
      dirty.add(key)
      return undefined
    },
    wait: (key) => {
      const bucket = buckets.get(key)
      // No bucket is a full one: a burst is at least one token.
      if (bucket === undefined) return undefined
      const { millitokens } = refill(bucket.level, settings, now())
      return millitokens >= MILLITOKENS_PER_TOKEN
        ? undefined
        : secondsUntilToken(millitokens, settings)
    },
    drainTaken: (at) => {
      const drained: Array<Taken> = []
      for (const key of dirty) {
        const bucket = buckets.get(key)
        if (bucket === undefined || bucket.taken === 0) continue
        drained.push({ key, taken: bucket.taken })
        // The shared bucket's own rule (RateLimitStore.sync), from the last level seen.
        const expected =
          refill(bucket.base, settings, at).millitokens - bucket.taken * MILLITOKENS_PER_TOKEN
        bucket.inFlight = { taken: bucket.taken, expected }
        bucket.taken = 0
        sent.add(key)
      }
      dirty.clear()
      return drained
    },
    reconcile: (key, shared) => {
      const bucket = buckets.get(key)
      if (bucket?.inFlight === undefined) return
      const shift = shared.millitokens - bucket.inFlight.expected
      bucket.inFlight = undefined
      sent.delete(key)
      bucket.base = shared
      bucket.level = {
        millitokens: Math.min(capacity, bucket.level.millitokens + shift),
        at: bucket.level.at
      }
    },
    abandon: () => {
      for (const key of sent) {
        const bucket = buckets.get(key)
        if (bucket?.inFlight === undefined) continue
        bucket.taken += bucket.inFlight.taken
        bucket.inFlight = undefined
        dirty.add(key)
      }
      sent.clear()
    },
    size: buckets.size
  }
}
