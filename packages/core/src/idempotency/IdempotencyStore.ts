/**
 * The storage port for idempotency keys. The database's uniqueness on
 * (partner, route, key) decides which of several concurrent requests runs.
 * A claim is a lease held by a token: the owner renews it while it works, a
 * request whose instance died stops renewing and its key is taken over, and
 * the completion is written only while the token still holds the claim, so a
 * presumed-dead owner that wakes up cannot commit a second effect.
 */
import { Context, Data, type Effect } from "effect"

export interface IdempotencyScope {
  readonly partnerId: string
  /** Method and route template, e.g. `POST /v1/merchants/:merchantId/settlements/crypto`. */
  readonly route: string
  readonly key: string
}

export interface StoredResponse {
  readonly status: number
  readonly body: string
}

/** The response to record together with the work, in the same transaction. */
export interface IdempotencyCompletion {
  readonly scope: IdempotencyScope
  /** The claim it completes: written only while this token still holds the key. */
  readonly token: string
  readonly response: StoredResponse
}

/**
 * Thrown (as a defect) by a store writing a completion for a claim that is no
 * longer its own: the request was presumed dead and another took the key
 * over. The write's transaction rolls back, so the work has no effect.
 */
export class IdempotencyClaimLost extends Data.TaggedError("IdempotencyClaimLost")<{
  readonly scope: IdempotencyScope
}> {}

export type ClaimOutcome =
  /** This request owns the key and does the work. */
  | { readonly _tag: "Claimed" }
  /** The key already finished: answer with its first response. */
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  /** The key was used with another request. */
  | { readonly _tag: "Mismatch" }
  /** Another request holds the key and has not finished. */
  | { readonly _tag: "InProgress" }

export class IdempotencyStore extends Context.Tag("@pay/core/IdempotencyStore")<
  IdempotencyStore,
  {
    /**
     * Claims the key for `token`, atomically. An unfinished claim whose lease
     * was last renewed before `staleBefore` (its owner died) may be taken over.
     * A finished key whose request came before `replayableSince` is past its
     * replay window: it is claimed afresh, as a key never used (its old record
     * replaced), whatever request it was used with. Without it, a finished key
     * replays for as long as its record is kept.
     */
    readonly claim: (
      scope: IdempotencyScope,
      fingerprint: string,
      token: string,
      now: Date,
      staleBefore: Date,
      replayableSince?: Date
    ) => Effect.Effect<ClaimOutcome>
    /** Extends the lease of `token`'s unfinished claim; false when it is no longer its own. */
    readonly renew: (scope: IdempotencyScope, token: string, now: Date) => Effect.Effect<boolean>
    /**
     * Records the response of a claim whose work wrote nothing else. Dies with
     * `IdempotencyClaimLost` when the claim is no longer the completion's.
     */
    readonly complete: (completion: IdempotencyCompletion) => Effect.Effect<void>
    /** Gives up `token`'s unfinished claim so the request can be retried; a finished one stays. */
    readonly release: (scope: IdempotencyScope, token: string) => Effect.Effect<void>
    /**
     * Forgets up to `limit` finished keys created before `before` (a range of
     * the index of finished keys by age); the count. Safe with many instances.
     */
    readonly purge: (before: Date, limit: number) => Effect.Effect<number>
  }
>() {}
