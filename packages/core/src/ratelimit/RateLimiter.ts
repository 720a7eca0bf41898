/**
 * A rate limit by key (an API key's id, a wallet app's, a payment's): one
 * token bucket per key (TokenBucket.ts), held in this process's memory and
 * checked without any I/O. The buckets are an LRU of bounded size, so a
 * client that varies keys cannot grow memory; the one dropped is the one used
 * longest ago, most likely full again, which a new bucket equals. Each bucket
 * counts the tokens taken since the last sync, which RateLimitSync.ts adds to
 * the shared bucket of every instance and reads back (`drainTaken`,
 * `reconcile`).
 */
import { makeLruCache } from "../shared/LruCache.js"
import {
  type BucketLevel,
  fullBucket,
  MILLITOKENS_PER_TOKEN,
  refill,
  type TokenBucketSettings,
  take
} from "./TokenBucket.js"

/** What a limit applies to; also the prefix of its keys in the shared store. */
export type RateLimitScope = "api_key" | "wallet_app" | "payment"

/** Keys used since the last sync, with the tokens each took here and its level now. */
export interface TakenSince {
  readonly key: string
  readonly taken: number
  /** The bucket's level at the drain, in millitokens. */
  readonly millitokens: number
}

export interface RateLimiter {
  readonly scope: RateLimitScope
  readonly settings: TokenBucketSettings
  /** One request under `key`: undefined when admitted (a token taken), else the whole seconds to wait. */
  readonly take: (key: string) => number | undefined
  /**
   * The keys taken from since the last call, how many tokens each, and their
   * levels at `at`; their counts restart at 0.
   */
  readonly drainTaken: (at: number) => ReadonlyArray<TakenSince>
  /**
   * Sets `key`'s bucket to the shared level read at `at`, less the tokens taken
   * here since `drainTaken` (while the shared store was being asked). A key no
   * longer held is left out.
   */
  readonly reconcile: (key: string, shared: BucketLevel) => void
  /** Buckets held. */
  readonly size: () => number
}

/** Buckets one limiter holds at most: about 100 bytes each. */
export const DEFAULT_MAX_BUCKETS = 50_000

interface Bucket {
  level: BucketLevel
  /** Tokens taken since the last drain. */
  taken: number
}

export const makeRateLimiter = (
  scope: RateLimitScope,
  settings: TokenBucketSettings,
  options: { readonly now: () => number; readonly maxBuckets?: number }
): RateLimiter => {
  const { now } = options
  // Keys with takes not yet synced; a bucket dropped from the LRU leaves with its takes.
  const dirty = new Set<string>()
  const buckets = makeLruCache<string, Bucket>(options.maxBuckets ?? DEFAULT_MAX_BUCKETS, (key) => {
    dirty.delete(key)
  })
  return {
    scope,
    settings,
    take: (key) => {
      const at = now()
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        bucket = { level: fullBucket(settings, at), taken: 0 }
        buckets.set(key, bucket)
      }
      const outcome = take(bucket.level, settings, at)
      bucket.level = outcome.level
      if (!outcome.admitted) return outcome.retryAfterSeconds
      bucket.taken++
      dirty.add(key)
      return undefined
    },
    drainTaken: (at) => {
      const drained: Array<TakenSince> = []
      for (const key of dirty) {
        const bucket = buckets.get(key)
        if (bucket === undefined || bucket.taken === 0) continue
        const { millitokens } = refill(bucket.level, settings, at)
        drained.push({ key, taken: bucket.taken, millitokens })
        bucket.taken = 0
      }
      dirty.clear()
      return drained
    },
    reconcile: (key, shared) => {
      const bucket = buckets.get(key)
      if (bucket === undefined) return
      bucket.level = {
        millitokens: shared.millitokens - bucket.taken * MILLITOKENS_PER_TOKEN,
        at: shared.at
      }
    },
    size: buckets.size
  }
}
