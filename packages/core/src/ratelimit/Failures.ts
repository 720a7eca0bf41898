/**
 * The rate limits' refusal as an HTTP answer, with its `Retry-After`. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { RateLimited } from "./RateLimited.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly RateLimited: RateLimited
  }
}

const RATE_LIMITED_BY: Record<RateLimited["scope"], string> = {
  api_key: "Too many requests with this API key",
  partner: "Too many requests with this partner's API keys together",
  wallet_app: "Too many requests from this wallet app",
  payment: "Too many requests about this payment"
}

export const rateLimitFailures: FailureReplies<"RateLimited"> = {
  RateLimited: (e) => ({
    ...replyOf(
      ApiErrors.RateLimited,
      `${RATE_LIMITED_BY[e.scope]}; retry in ${e.retryAfterSeconds} second${e.retryAfterSeconds === 1 ? "" : "s"}`
    ),
    headers: { "retry-after": String(e.retryAfterSeconds) }
  })
}
