/**
 * The wallet apps' authentication error as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import {
  type ApiErrorSpec,
  ApiErrors,
  type FailureReplies,
  replyOf
} from "../http/ErrorResponses.js"
import type { GatewayAuthError } from "./WalletApp.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly GatewayAuthError: GatewayAuthError
  }
}

const GATEWAY_AUTH: Record<GatewayAuthError["reason"], readonly [ApiErrorSpec, string]> = {
  missing_auth_headers: [
    ApiErrors.MissingAuthHeaders,
    "Missing wallet credentials: send the wallet app's Api-Key header or its App-Id header"
  ],
  missing_app_id: [
    ApiErrors.MissingAppId,
    "Client-Id was sent without App-Id: send the wallet app's App-Id with it, or its Api-Key"
  ],
  invalid_api_key: [
    ApiErrors.InvalidApiKey,
    "Invalid API key: the Api-Key sent is no wallet app's key (a partner's key does not work on gateway routes)"
  ],
  invalid_app_id: [
    ApiErrors.InvalidAppId,
    "Invalid App-Id: it names no wallet app; send the app_… id the app was created with"
  ],
  conflicting_auth_headers: [
    ApiErrors.ConflictingAuthHeaders,
    "Api-Key and App-Id name different wallet apps: send one of them, or both of the same app"
  ],
  app_disabled: [
    ApiErrors.AppDisabled,
    "This wallet app is disabled by the operator: the gateway refuses its Api-Key and its App-Id until the operator enables it again"
  ]
}

export const walletAppFailures: FailureReplies<"GatewayAuthError"> = {
  // Every refusal of a wallet's credentials is 401, a conflict of two valid headers too: the
  // reference documents only 401 for gateway authentication, and a wallet reacts to all alike.
  // A disabled app is 403: its credentials are right, so retrying or re-sending them cannot help.
  GatewayAuthError: (e) => replyOf(...GATEWAY_AUTH[e.reason])
}
