/**
 * The storage port for idempotency keys. The database's uniqueness on
 * (partner, route, key) decides which of several concurrent requests runs.
 */
import { Context, type Effect } from "effect"
import type { IdempotencyScope, StoredResponse } from "./Idempotency.js"

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
     * Claims the key, atomically. An unfinished claim whose lock is older than
     * `staleBefore` (its owner died) may be taken over.
     */
    readonly claim: (
      scope: IdempotencyScope,
      fingerprint: string,
      now: Date,
      staleBefore: Date
    ) => Effect.Effect<ClaimOutcome>
    /** Records the response of a claim whose work wrote nothing else. */
    readonly complete: (scope: IdempotencyScope, response: StoredResponse) => Effect.Effect<void>
    /** Gives up an unfinished claim so the request can be retried; a finished one stays. */
    readonly release: (scope: IdempotencyScope) => Effect.Effect<void>
    /** Forgets finished keys created before `before`. */
    readonly purge: (before: Date) => Effect.Effect<number>
  }
>() {}
