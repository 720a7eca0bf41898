/**
 * The rate limits' settings (PayConfig.rateLimits): one token bucket per
 * partner API key, per wallet app and per payment, each with its own rate and
 * burst. Every limit is off unless given a rate.
 */
import type { TokenBucketSettings } from "./TokenBucket.js"

/** One limit: `perSecond` requests a second sustained, `burst` at once. */
export interface RateLimitSettings {
  /** Requests a second, a whole number; 0 turns the limit off. */
  readonly perSecond: number
  /** The most requests at once, a whole number; absent or 0: `perSecond` (one second's worth). */
  readonly burst?: number
}

export interface RateLimitsSettings {
  /** Partner API requests, by the API key they authenticate with (legacy routes too). */
  readonly perApiKey?: RateLimitSettings
  /** Wallet gateway requests, by the wallet app they authenticate as. */
  readonly perWalletApp?: RateLimitSettings
  /** Wallet gateway requests, by the payment their path names. */
  readonly perPayment?: RateLimitSettings
}

/** The bucket of a limit, or undefined when it is off. */
export const bucketSettings = (
  limit: RateLimitSettings | undefined
): TokenBucketSettings | undefined => {
  if (limit === undefined || limit.perSecond <= 0) return undefined
  const burst = limit.burst === undefined || limit.burst <= 0 ? limit.perSecond : limit.burst
  return { perSecond: limit.perSecond, burst }
}

/** How often an instance adds its takes to the shared buckets and reads them back. */
export const RATE_LIMIT_SYNC_INTERVAL_MS = 1000

/** How often an instance that syncs removes the shared buckets that are full again. */
export const RATE_LIMIT_PURGE_INTERVAL_MS = 60_000
