/**
 * The rate limits' settings (the engine's `rateLimits` option): one token
 * bucket per partner API key, per wallet app and per payment, each with its
 * own rate and burst. Every limit is off unless given a rate.
 */
import { Context, Schema } from "effect"
import { wholeNumber } from "../shared/WholeNumber.js"
import type { TokenBucketSettings } from "./TokenBucket.js"

const requests = (unit: string) => wholeNumber(0, 1_000_000, unit)

/** One limit: `perSecond` requests a second sustained, `burst` at once. */
export const RateLimitSettings = Schema.Struct({
  /** Requests a second, a whole number; 0 turns the limit off. */
  perSecond: requests("requests a second"),
  /** The most requests at once, a whole number; absent or 0: `perSecond` (one second's worth). */
  burst: Schema.optional(requests("requests"))
}).pipe(
  // A burst alone would read as a limit that is not there.
  Schema.filter((limit) =>
    (limit.burst ?? 0) > 0 && limit.perSecond === 0
      ? { path: ["burst"], message: "is set but perSecond is 0 (off): give perSecond too" }
      : undefined
  )
)
export type RateLimitSettings = typeof RateLimitSettings.Type

export const RateLimitsSettings = Schema.Struct({
  /** Partner API requests, by the API key they authenticate with (legacy routes too). */
  perApiKey: Schema.optional(RateLimitSettings),
  /** Wallet gateway requests, by the wallet app they authenticate as. */
  perWalletApp: Schema.optional(RateLimitSettings),
  /** Wallet gateway requests, by the payment their path names. */
  perPayment: Schema.optional(RateLimitSettings)
})
export type RateLimitsSettings = typeof RateLimitsSettings.Type

export class RateLimitsConfig extends Context.Tag("@pay/core/RateLimitsConfig")<
  RateLimitsConfig,
  RateLimitsSettings
>() {}

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
