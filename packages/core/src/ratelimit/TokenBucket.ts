/**
 * The token bucket, as pure arithmetic on a bucket's level: a bucket holds up
 * to `burst` tokens, gains `perSecond` of them a second, and a request takes
 * one. Levels are counted in thousandths of a token (millitokens) and times
 * in milliseconds, so a bucket gains exactly `perSecond` millitokens a
 * millisecond: whole numbers throughout, no rounding drift, and the same
 * numbers the shared store computes with (RateLimitStore.ts).
 */

/** One bucket's settings: both whole numbers of at least 1. */
export interface TokenBucketSettings {
  /** Tokens gained a second: the sustained rate. */
  readonly perSecond: number
  /** The most tokens a bucket holds: how many requests may come at once. */
  readonly burst: number
}

/** A bucket's level at a moment. Below zero, it owes tokens taken beyond it (another instance's). */
export interface BucketLevel {
  readonly millitokens: number
  /** Milliseconds since the epoch. */
  readonly at: number
}

/** What one request costs. */
export const MILLITOKENS_PER_TOKEN = 1000

/** A full bucket's level. */
export const capacityOf = (settings: TokenBucketSettings): number =>
  settings.burst * MILLITOKENS_PER_TOKEN

/** A bucket full at `now`. */
export const fullBucket = (settings: TokenBucketSettings, now: number): BucketLevel => ({
  millitokens: capacityOf(settings),
  at: now
})

/** The level at `now`, refilled for the time since; time going backwards refills nothing. */
export const refill = (
  level: BucketLevel,
  settings: TokenBucketSettings,
  now: number
): BucketLevel => {
  if (now <= level.at) return level
  // Past capacity the sum may lose precision, but then the answer is capacity anyway.
  const millitokens = level.millitokens + (now - level.at) * settings.perSecond
  return { millitokens: Math.min(capacityOf(settings), millitokens), at: now }
}

/**
 * The whole seconds to wait, from a level short of one token, until one is
 * there: rounded up, never 0 (a client told "0" would come straight back).
 */
export const secondsUntilToken = (millitokens: number, settings: TokenBucketSettings): number => {
  const missing = MILLITOKENS_PER_TOKEN - millitokens
  const ms = Math.ceil(missing / settings.perSecond)
  return Math.max(1, Math.ceil(ms / 1000))
}

export type Take =
  | { readonly admitted: true; readonly level: BucketLevel }
  | { readonly admitted: false; readonly level: BucketLevel; readonly retryAfterSeconds: number }

/** One request at `now`: admitted with a token taken, or refused with the wait for one. */
export const take = (level: BucketLevel, settings: TokenBucketSettings, now: number): Take => {
  const current = refill(level, settings, now)
  if (current.millitokens >= MILLITOKENS_PER_TOKEN) {
    return {
      admitted: true,
      level: { millitokens: current.millitokens - MILLITOKENS_PER_TOKEN, at: current.at }
    }
  }
  return {
    admitted: false,
    level: current,
    retryAfterSeconds: secondsUntilToken(current.millitokens, settings)
  }
}

/** Whether the bucket is full at `now`: it then says nothing a new bucket would not. */
export const isFull = (level: BucketLevel, settings: TokenBucketSettings, now: number): boolean =>
  refill(level, settings, now).millitokens >= capacityOf(settings)
