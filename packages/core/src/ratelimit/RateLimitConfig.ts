/**
 * The rate limits' settings (the engine's `rateLimits` option): one token
 * bucket per partner API key, per partner (all its keys together), per wallet
 * app and per payment, each with its own rate and burst. Every limit is off
 * unless given a rate; the partner's follows the key's unless given its own
 * (`partnerBucketSettings`).
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
  /**
   * Partner API requests, by the partner whose key they authenticate with:
   * every key of the partner together. Absent: the same as `perApiKey`;
   * `perSecond: 0` turns it off (only each key's own limit then).
   */
  perPartner: Schema.optional(RateLimitSettings),
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

/**
 * The partner's bucket: its own settings when given, else the same as one
 * key's. The same, not a multiple: the operator's per-key number is what one
 * client may cost the server, and a partner mints keys at will (and holds two
 * during every rotation), so any fixed multiple would still let it buy that
 * much more capacity by minting. A partner with one key sees no change; one
 * that runs several services at full rate each is given a partner budget
 * above the key's (then each key's own limit keeps one runaway service from
 * taking the whole of it).
 */
export const partnerBucketSettings = (
  rateLimits: RateLimitsSettings
): TokenBucketSettings | undefined => bucketSettings(rateLimits.perPartner ?? rateLimits.perApiKey)

/** How often an instance adds its takes to the shared buckets and reads them back. */
export const RATE_LIMIT_SYNC_INTERVAL_MS = 1000

/** How often an instance that syncs removes the shared buckets that are full again. */
export const RATE_LIMIT_PURGE_INTERVAL_MS = 60_000
