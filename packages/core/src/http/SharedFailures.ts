/**
 * The shared errors' answers (shared/Errors.ts): bad input, no caller, a caller refused. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */

import type { Forbidden, InvalidInput, Unauthenticated } from "../shared/Errors.js"
import { ApiErrors, type FailureReplies, replyOf } from "./ErrorResponses.js"

declare module "./ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly InvalidInput: InvalidInput
    readonly Unauthenticated: Unauthenticated
    readonly Forbidden: Forbidden
  }
}

export const sharedFailures: FailureReplies<"InvalidInput" | "Unauthenticated" | "Forbidden"> = {
  InvalidInput: (e) => replyOf(ApiErrors.ParamsValidation, e.message, e.issues),
  Unauthenticated: (e) =>
    e.reason === "missing"
      ? replyOf(ApiErrors.MissingApiKey, "Missing API key")
      : replyOf(
          ApiErrors.InvalidApiKey,
          "Invalid API key: the key sent in Api-Key (or Authorization: Bearer) is not an active key of any partner: mistyped, revoked or expired"
        ),
  Forbidden: (e) => replyOf(ApiErrors.Forbidden, e.message)
}
