/**
 * The idempotency keys' error as an HTTP answer. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { IdempotencyConflict } from "../shared/Errors.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly IdempotencyConflict: IdempotencyConflict
  }
}

export const idempotencyFailures: FailureReplies<"IdempotencyConflict"> = {
  IdempotencyConflict: (e) =>
    replyOf(
      ApiErrors.IdempotencyConflict,
      e.reason === "different_request"
        ? "Idempotency-Key conflict: this key was used with a different request; send a new Idempotency-Key for a new request"
        : "Idempotency-Key conflict: the first request with this key is still being processed; retry later with the same Idempotency-Key"
    )
}
