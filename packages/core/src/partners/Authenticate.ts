/**
 * The partner middlewares' check (PartnerAuth.ts declares them): the key the
 * request presents, verified by the \`Partners\` service, then whether the
 * key holds the scope the route needs (keys/Scopes.ts), then the rate limits
 * when set: the key's (RateLimits.perApiKey, by the key's id: each key has
 * its own bucket) and its partner's (RateLimits.perPartner, by the partner's
 * id: all its keys together, so minting keys buys no more), a request
 * admitted only when both admit it. A long-poll held counts once.
 */
import { Context, Effect } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import type { EngineRequest } from "../http/Exchange.js"
import { misplacedKey } from "../http/MisplacedKey.js"
import { RequestError } from "../http/RequestError.js"
import type { RequestCaller } from "../http/RequestOutcome.js"
import type { Authenticated, Authenticator } from "../http/Route.js"
import type { Partner } from "../identity/Partner.js"
import { CurrentApiKey, LegacyPartnerApiKey, PartnerApiKey } from "../identity/PartnerAuth.js"
import { ApiKeys } from "../keys/ApiKeys.js"
import { type ApiKeyScope, InsufficientScope, scopeOfRoute } from "../keys/Scopes.js"
import { admitAll, RateLimits } from "../ratelimit/RateLimits.js"
import { Partners } from "./Partners.js"

/** The presented partner key: `Api-Key`, or the `Authorization: Bearer` form (or `X-Api-Key`). */
export const presentedApiKey = (request: EngineRequest, legacy = false): string | undefined => {
  const apiKey = request.header("api-key") ?? (legacy ? request.header("x-api-key") : undefined)
  if (apiKey !== undefined) return apiKey.trim()
  const authorization = request.header("authorization")
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)
  return bearer?.[1] ?? (authorization === undefined ? undefined : "")
}

/** The one route that also reads `X-Api-Key` (SPEC.md section 5). */
const LEGACY_ROUTE = "GET /v1/merchants/:merchant_id/payments"

/**
 * The 401 of a request without a key, saying where to send one and, when a
 * key was sent where this route does not read it, where it was.
 */
export const missingApiKey = (request: EngineRequest, legacy = false): RequestError => {
  const empty = ["api-key", ...(legacy ? ["x-api-key"] : [])].find(
    (name) => request.header(name) !== undefined
  )
  const misplaced = misplacedKey(request, {
    read: legacy ? ["x-api-key"] : [],
    bearer: true,
    elsewhere: (header) =>
      header === "X-Api-Key" ? `which only ${LEGACY_ROUTE} reads` : "which the engine does not read"
  })
  const sent =
    misplaced !== undefined
      ? ` (a key was sent in ${misplaced.header}, ${misplaced.why})`
      : empty !== undefined
        ? ` (the ${empty === "api-key" ? "Api-Key" : "X-Api-Key"} header sent is empty)`
        : ""
  return RequestError.of(
    ApiErrors.MissingApiKey,
    `Missing API key: send it in the Api-Key header, or as Authorization: Bearer <key>${sent}`,
    { issues: [{ field: "Api-Key", message: "is required" }] }
  )
}

/** The checks of the two partner middlewares, on the `Partners` service. */
export const partnerAuthenticators = Effect.map(
  Effect.all([Partners, ApiKeys, RateLimits]),
  ([partners, keys, { perApiKey, perPartner }]): ReadonlyArray<Authenticator> => {
    /**
     * The key a verified request acts with, in the request's context as
     * `CurrentApiKey`, which audit entries record (audit/Actor.ts). Each
     * verified key hands out its own partner object, so one context per
     * object is one per key, made once: the engine keeps one request context
     * per object.
     */
    const acting = new WeakMap<Partner, Context.Context<CurrentApiKey>>()
    const actingKey = (partner: Partner): Context.Context<CurrentApiKey> | undefined => {
      let context = acting.get(partner)
      if (context === undefined) {
        const keyId = keys.keyOf(partner)
        if (keyId === undefined) return undefined
        context = Context.make(CurrentApiKey, { keyId })
        acting.set(partner, context)
      }
      return context
    }
    // The caller's id for the request's log line and metrics, one object per partner object.
    const ids = new WeakMap<Partner, RequestCaller>()
    const idOf = (partner: Partner): RequestCaller => {
      let id = ids.get(partner)
      if (id === undefined) {
        id = { partnerId: partner.id }
        ids.set(partner, id)
      }
      return id
    }
    const caller = (partner: Partner): Authenticated => ({
      service: partner,
      pinnedVersion: partner.apiVersion,
      extra: actingKey(partner),
      caller: idOf(partner)
    })
    const check = (legacy: boolean) => (request: EngineRequest) => {
      const presented = presentedApiKey(request, legacy)
      return presented === undefined || presented === ""
        ? Effect.fail(missingApiKey(request, legacy))
        : Effect.map(partners.authenticate(presented), caller)
    }
    const known = (legacy: boolean) => (request: EngineRequest) => {
      const partner = partners.known(presentedApiKey(request, legacy))
      return partner === undefined ? undefined : caller(partner)
    }
    // Each route object's scope, looked up once (the hot routes pay a WeakMap hit).
    const scopes = new WeakMap<object, ApiKeyScope | null>()
    const scopeOf = (route: { readonly method: string; readonly path: string }) => {
      let scope = scopes.get(route)
      if (scope === undefined) {
        scope = scopeOfRoute(route.method, route.path) ?? null
        scopes.set(route, scope)
      }
      return scope
    }
    /**
     * Refused before the rate limit: a key outside its scopes takes no token.
     * A route the table misses is refused to every key, and a partner that
     * came without its key (never, through the engine) holds no scope.
     */
    const limited = ({ service }: Authenticated, route: Parameters<typeof scopeOf>[0]) => {
      const key = keys.actingKey(service as Partner)
      const scope = scopeOf(route)
      if (key === undefined || scope === null || !key.scopes.includes(scope)) {
        return new InsufficientScope({
          refused: "route",
          scopes: scope === null ? [] : [scope],
          held: key?.scopes ?? [],
          route: `${route.method} ${route.path.replaceAll(/:(\w+)/g, "{$1}")}`
        })
      }
      return perApiKey === undefined && perPartner === undefined
        ? undefined
        : admitAll([
            [perApiKey, key.id],
            [perPartner, (service as Partner).id]
          ])
    }
    return [
      {
        middleware: PartnerApiKey,
        authenticate: check(false),
        known: known(false),
        admit: limited
      },
      {
        middleware: LegacyPartnerApiKey,
        authenticate: check(true),
        known: known(true),
        admit: limited
      }
    ]
  }
)
