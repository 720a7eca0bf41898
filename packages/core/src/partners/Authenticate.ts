/**
 * The partner middlewares' check (PartnerAuth.ts declares them): the key the
 * request presents, verified by the \`Partners\` service.
 */
import { Effect } from "effect"
import type { EngineRequest } from "../http/Exchange.js"
import type { Authenticator } from "../http/Route.js"
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

/** The checks of the two partner middlewares, on the `Partners` service. */
export const partnerAuthenticators = Effect.map(
  Partners,
  (partners): ReadonlyArray<Authenticator> => {
    const check = (legacy: boolean) => (request: EngineRequest) =>
      Effect.map(partners.authenticate(presentedApiKey(request, legacy)), (partner) => ({
        service: partner,
        pinnedVersion: partner.apiVersion
      }))
    const known = (legacy: boolean) => (request: EngineRequest) => {
      const partner = partners.known(presentedApiKey(request, legacy))
      return partner === undefined
        ? undefined
        : { service: partner, pinnedVersion: partner.apiVersion }
    }
    return [
      { middleware: PartnerApiKey, authenticate: check(false), known: known(false) },
      { middleware: LegacyPartnerApiKey, authenticate: check(true), known: known(true) }
    ]
  }
)
