/**
 * How partner routes authenticate, as the API definition declares it: the
 * partner key in `Api-Key` (or `Authorization: Bearer`), and on the legacy
 * merchant payments route also `X-Api-Key`. The router runs the check and
 * hands the partner to handlers as `CurrentPartner` (and the key it acted
 * with as `CurrentApiKey`).
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { failureOf } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import type { Partner } from "./Partner.js"

/** The partner whose key the request carries. */
export class CurrentPartner extends Context.Tag("@pay/core/CurrentPartner")<
  CurrentPartner,
  Partner
>() {}

/**
 * The key the request carries, by its public id (`key_…`), for the audit
 * trail (audit/Actor.ts). Put in the request's context by the partner
 * authenticator (Authenticate.ts, `Authenticated.extra`).
 */
export class CurrentApiKey extends Context.Tag("@pay/core/CurrentApiKey")<
  CurrentApiKey,
  { readonly keyId: string }
>() {}

/**
 * A wrong key is 401; a valid one without the route's scope (keys/Scopes.ts)
 * 403; past its rate limit (when set) 429 with Retry-After.
 */
const failure = failureOf(
  ApiErrors.MissingApiKey,
  ApiErrors.InvalidApiKey,
  ApiErrors.InsufficientScope,
  ApiErrors.RateLimited
)

/** The partner key: `Api-Key: <key>`, or `Authorization: Bearer <key>`. */
export class PartnerApiKey extends HttpApiMiddleware.Tag<PartnerApiKey>()("PartnerApiKey", {
  provides: CurrentPartner,
  failure,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}

/** The deprecated legacy route also takes the key from `X-Api-Key` (SPEC.md section 5). */
export class LegacyPartnerApiKey extends HttpApiMiddleware.Tag<LegacyPartnerApiKey>()(
  "LegacyPartnerApiKey",
  {
    provides: CurrentPartner,
    failure,
    security: {
      apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }),
      legacyApiKey: HttpApiSecurity.apiKey({ key: "X-Api-Key", in: "header" }),
      bearer: HttpApiSecurity.bearer
    }
  }
) {}
