/**
 * A request refused by a rate limit: answered 429 `rate_limited` with
 * `Retry-After` (ApiFailures.ts).
 */
import { Schema } from "effect"

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  /** Which limit: the API key's, its partner's (all its keys together), the wallet app's, or the payment's. */
  scope: Schema.Literal("api_key", "partner", "wallet_app", "payment"),
  /** Whole seconds until the bucket holds a token again, at least 1. */
  retryAfterSeconds: Schema.Number
}) {}
