/**
 * The port of the buckets every instance shares (the `rate_limit_buckets`
 * table): each instance limits on its own buckets in memory and, at most once
 * a second, adds the tokens it took to the shared ones and reads their levels
 * back, in one batched statement for every key it used (RateLimitSync.ts).
 */
import { Context, type Effect } from "effect"

/** One key's takes on this instance since its last sync, with its limit's settings. */
export interface RateLimitUse {
  /** `scope:key`, e.g. `api_key:key_…`. */
  readonly key: string
  /** Tokens taken here since the last sync (admitted requests). */
  readonly taken: number
  readonly perSecond: number
  readonly burst: number
}

/** A shared bucket's level after a sync, in millitokens (TokenBucket.ts); below 0 it owes. */
export interface SharedLevel {
  readonly key: string
  readonly millitokens: number
}

export interface RateLimitStoreShape {
  /**
   * For each use, in one statement: the shared bucket (full when new) is
   * refilled for the time since it was last written, up to its burst, then
   * loses the tokens taken. The levels are returned, as of `at`. Every
   * instance's takes count, once each.
   */
  readonly sync: (
    uses: ReadonlyArray<RateLimitUse>,
    at: Date
  ) => Effect.Effect<ReadonlyArray<SharedLevel>>
  /** Removes the buckets full again by `at` (a new bucket is full), and counts them. */
  readonly purge: (at: Date) => Effect.Effect<number>
}

export class RateLimitStore extends Context.Tag("@pay/core/RateLimitStore")<
  RateLimitStore,
  RateLimitStoreShape
>() {}
