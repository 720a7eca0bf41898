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
