/**
 * The API keys' errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { ApiKeyInactive, ApiKeyNotFound, LastActiveApiKey } from "./KeyRecord.js"
import type { InsufficientScope } from "./Scopes.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly ApiKeyNotFound: ApiKeyNotFound
    readonly LastActiveApiKey: LastActiveApiKey
    readonly ApiKeyInactive: ApiKeyInactive
    readonly InsufficientScope: InsufficientScope
  }
}

const listed = (scopes: ReadonlyArray<string>) => (scopes.length === 0 ? "none" : scopes.join(", "))

/** Names the scope needed and the ones the key holds, so the caller knows which key to use. */
const insufficientScope = (e: InsufficientScope): string => {
  const held = `this key's scopes: ${listed(e.held)}`
  switch (e.refused) {
    case "route":
      return e.scopes.length === 0
        ? `${e.route} is open to no scope yet (${held})`
        : `This API key lacks the ${e.scopes.join(", ")} scope, which ${e.route} needs (${held})`
    case "grant":
      return `This API key cannot grant the ${e.scopes.join(", ")} scope${e.scopes.length === 1 ? "" : "s"}, which it lacks: a key grants at most its own scopes (${held})`
    case "expiry":
      return `This API key ends at ${e.endsAt?.toISOString()}: a key it creates or rotates must expire no later (send expiresAt at or before then; none means never)`
  }
}

export const apiKeyFailures: FailureReplies<
  "ApiKeyNotFound" | "LastActiveApiKey" | "ApiKeyInactive" | "InsufficientScope"
> = {
  ApiKeyNotFound: (e) => replyOf(ApiErrors.NotFound, `No API key ${e.keyId}`),
  LastActiveApiKey: (e) =>
    replyOf(
      ApiErrors.LastActiveApiKey,
      `${e.keyId} is this partner's last active API key: create another before revoking it, or ask the operator (npm run pay -- keys revoke)`
    ),
  ApiKeyInactive: (e) =>
    replyOf(ApiErrors.ApiKeyInactive, `${e.keyId} is revoked or expired: rotate an active key`),
  InsufficientScope: (e) => replyOf(ApiErrors.InsufficientScope, insufficientScope(e))
}
