/**
 * The partner middlewares' check (PartnerAuth.ts declares them): the key the
 * request presents, verified by the \`Partners\` service.
 */
import type { Context } from "effect"
import { Effect } from "effect"
import type { EngineRequest } from "../http/Exchange.js"
import type { Authenticated, Authenticator } from "../http/Route.js"
import type { Partner } from "./Partner.js"
import { LegacyPartnerApiKey, PartnerApiKey } from "./PartnerAuth.js"
import { Partners } from "./Partners.js"

/** The presented partner key: `Api-Key`, or the `Authorization: Bearer` form (or `X-Api-Key`). */
export const presentedApiKey = (request: EngineRequest, legacy = false): string | undefined => {
  const apiKey = request.header("api-key") ?? (legacy ? request.header("x-api-key") : undefined)
  if (apiKey !== undefined) return apiKey.trim()
  const authorization = request.header("authorization")
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)
  return bearer?.[1] ?? (authorization === undefined ? undefined : "")
}

/**
 * The key a verified request acts with, for the request's context
 * (`Authenticated.extra`): `CurrentApiKey` with the key's public id, which
 * audit entries record (audit/Actor.ts). Keys have no public id yet, so this
 * gives nothing and entries record `{kind: "api_key"}` without `keyId`. Once
 * the verifier hands out the key beside its partner, return
 * `Context.make(CurrentApiKey, { keyId })` here, made once per verified key,
 * not per request (the engine keeps one request context per object).
 */
const actingKey = (_partner: Partner): Context.Context<never> | undefined => undefined

/** The checks of the two partner middlewares, on the `Partners` service. */
export const partnerAuthenticators = Effect.map(
  Partners,
  (partners): ReadonlyArray<Authenticator> => {
    const caller = (partner: Partner): Authenticated => ({
      service: partner,
      pinnedVersion: partner.apiVersion,
      extra: actingKey(partner)
    })
    const check = (legacy: boolean) => (request: EngineRequest) =>
      Effect.map(partners.authenticate(presentedApiKey(request, legacy)), caller)
    const known = (legacy: boolean) => (request: EngineRequest) => {
      const partner = partners.known(presentedApiKey(request, legacy))
      return partner === undefined ? undefined : caller(partner)
    }
    return [
      { middleware: PartnerApiKey, authenticate: check(false), known: known(false) },
      { middleware: LegacyPartnerApiKey, authenticate: check(true), known: known(true) }
    ]
  }
)
