/**
 * Every failure a route may answer with, as its reply: each feature's own
 * replies (its Failures.ts, which registers its errors), joined here in the
 * API's assembly, like Api.ts. Exhaustive over the registry: an error
 * registered without a reply does not compile.
 */
import { Match } from "effect"
import { walletAppFailures } from "./apps/Failures.js"
import { gatewayFailures } from "./gateway/Failures.js"
import { type ApiFailure, type ErrorReply, requestErrorReply } from "./http/ErrorResponses.js"
import { sharedFailures } from "./http/SharedFailures.js"
import { idempotencyFailures } from "./idempotency/Failures.js"
import { apiKeyFailures } from "./keys/Failures.js"
import { merchantFailures } from "./merchants/Failures.js"
import { paymentFailures } from "./payments/Failures.js"
import { rateLimitFailures } from "./ratelimit/Failures.js"
import { webhookFailures } from "./webhooks/Failures.js"

/**
 * Every feature's replies, as a type: it makes the built declarations
 * (ApiFailures.d.ts) import each feature's Failures.d.ts, whose `declare
 * module` registers its errors, so a package built against core's types (the
 * pages) sees every error in `ApiFailure`.
 */
export type FeatureReplies = typeof sharedFailures &
  typeof idempotencyFailures &
  typeof walletAppFailures &
  typeof apiKeyFailures &
  typeof rateLimitFailures &
  typeof merchantFailures &
  typeof paymentFailures &
  typeof gatewayFailures &
  typeof webhookFailures

export const errorReply: (failure: ApiFailure) => ErrorReply = Match.type<ApiFailure>().pipe(
  Match.tagsExhaustive({
    RequestError: requestErrorReply,
    ...sharedFailures,
    ...idempotencyFailures,
    ...walletAppFailures,
    ...apiKeyFailures,
    ...rateLimitFailures,
    ...merchantFailures,
    ...paymentFailures,
    ...gatewayFailures,
    ...webhookFailures
  })
)
