/**
 * The API keys' errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { ApiKeyInactive, ApiKeyNotFound, LastActiveApiKey } from "./KeyRecord.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly ApiKeyNotFound: ApiKeyNotFound
    readonly LastActiveApiKey: LastActiveApiKey
    readonly ApiKeyInactive: ApiKeyInactive
  }
}

export const apiKeyFailures: FailureReplies<
  "ApiKeyNotFound" | "LastActiveApiKey" | "ApiKeyInactive"
> = {
  ApiKeyNotFound: (e) => replyOf(ApiErrors.NotFound, `No API key ${e.keyId}`),
  LastActiveApiKey: (e) =>
    replyOf(
      ApiErrors.LastActiveApiKey,
      `${e.keyId} is this partner's last active API key: create another before revoking it, or ask the operator (npm run pay -- keys revoke)`
    ),
  ApiKeyInactive: (e) =>
    replyOf(ApiErrors.ApiKeyInactive, `${e.keyId} is revoked or expired: rotate an active key`)
}
