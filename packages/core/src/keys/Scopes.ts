/**
 * What a partner's API key may do (issue 40): each key holds a set of scopes,
 * modelled on Stripe's restricted keys, and every partner route needs one.
 * The route → scope table is here, in one place, so a route cannot pick its
 * own rule; a test walks every partner route of the API definition and fails
 * on one the table misses (Scopes.test.ts), and the engine refuses such a
 * route to every key rather than let it through.
 *
 * A key grants no more than it holds: a key it makes (or a rotation it asks
 * for) has a subset of its scopes and ends no later than it does.
 */
import { Schema } from "effect"

/** In the order the API and the CLI show them. */
export const API_KEY_SCOPES = [
  "read",
  "payments",
  "merchants",
  "webhooks",
  "refunds",
  "keys"
] as const

export const ApiKeyScope = Schema.Literal(...API_KEY_SCOPES).annotations({
  identifier: "ApiKeyScope",
  description:
    "`read` every GET; `payments` create and cancel payments; `merchants` merchants and settlements; `webhooks` webhook endpoints; `refunds` refunds; `keys` API key management"
})
export type ApiKeyScope = typeof ApiKeyScope.Type

/** Every scope: the bootstrap key's, and every key made before scopes existed. */
export const ALL_SCOPES: ReadonlyArray<ApiKeyScope> = API_KEY_SCOPES

/**
 * The scope of every route that writes, by `METHOD /template` as the API
 * definition spells it; every GET needs `read`.
 */
const WRITE_SCOPES: Readonly<Record<string, ApiKeyScope>> = {
  "POST /v1/merchants": "merchants",
  "PATCH /v1/merchants/:merchantId": "merchants",
  "DELETE /v1/merchants/:merchantId": "merchants",
  "POST /v1/merchants/:merchantId/settlements/crypto": "merchants",
  "PUT /v1/merchants/:merchantId/settlements/crypto/:id": "merchants",
  "DELETE /v1/merchants/:merchantId/settlements/crypto/:id": "merchants",
  "POST /v1/payments": "payments",
  "POST /v1/payments/:id/cancel": "payments",
  "POST /v1/refunds": "refunds",
  "POST /v1/webhook-endpoints": "webhooks",
  "PATCH /v1/webhook-endpoints/:id": "webhooks",
  "DELETE /v1/webhook-endpoints/:id": "webhooks",
  "POST /v1/webhook-endpoints/:id/rotate-secret": "webhooks",
  "POST /v1/webhook-endpoints/:id/test": "webhooks",
  "POST /v1/webhook-endpoints/:id/events/:eventId/redeliver": "webhooks",
  "POST /v1/api-keys": "keys",
  "POST /v1/api-keys/:id/revoke": "keys",
  "POST /v1/api-keys/:id/rotate": "keys"
}

/** The scope a partner route needs, or undefined for a route the table misses (refused). */
export const scopeOfRoute = (method: string, template: string): ApiKeyScope | undefined =>
  method === "GET" ? "read" : WRITE_SCOPES[`${method} ${template}`]

/** `scopes` in the canonical order, each once. */
export const canonicalScopes = (scopes: Iterable<ApiKeyScope>): ReadonlyArray<ApiKeyScope> => {
  const held = new Set(scopes)
  return API_KEY_SCOPES.filter((scope) => held.has(scope))
}

/** The scopes of `wanted` that `held` lacks, in the canonical order. */
export const missingScopes = (
  held: ReadonlyArray<ApiKeyScope>,
  wanted: ReadonlyArray<ApiKeyScope>
): ReadonlyArray<ApiKeyScope> => canonicalScopes(wanted.filter((scope) => !held.includes(scope)))

/** Why a list of scopes is refused (unknown, empty, repeated), or undefined when it is fine. */
export const scopesProblem = (scopes: ReadonlyArray<string>): string | undefined => {
  if (scopes.length === 0) return `must name at least one of: ${API_KEY_SCOPES.join(", ")}`
  const unknown = scopes.filter((s) => !(API_KEY_SCOPES as ReadonlyArray<string>).includes(s))
  if (unknown.length > 0) {
    return `must be among: ${API_KEY_SCOPES.join(", ")} (not ${unknown.join(", ")})`
  }
  const repeated = scopes.filter((s, i) => scopes.indexOf(s) !== i)
  if (repeated.length > 0) return `must name each scope once (${repeated.join(", ")} repeated)`
  return undefined
}

/**
 * A refusal: the key lacks `scopes` (for a route, or for a key it would
 * grant them to), or, with `endsAt`, a key it would make would outlive it.
 */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()(
  "InsufficientScope",
  {
    /** What was refused: a route, or a key made or rotated by the acting key. */
    refused: Schema.Literal("route", "grant", "expiry"),
    /** The scopes needed that the acting key does not hold (none for an expiry). */
    scopes: Schema.Array(Schema.String),
    /** The acting key's scopes. */
    held: Schema.Array(Schema.String),
    /** `METHOD /template` of a refused route. */
    route: Schema.optional(Schema.String),
    /** When the acting key ends, for an expiry refused; null if never. */
    endsAt: Schema.optional(Schema.NullOr(Schema.DateFromSelf))
  }
) {}

/**
 * Whether a key holding `acting.scopes` and ending at `acting.endsAt` (null:
 * never) may make, or rotate into, a key with `wanted.scopes` ending at
 * `wanted.expiresAt` (null: never): never more scopes, never a later end.
 * Undefined allows it.
 */
export const grantRefusal = (
  acting: { readonly scopes: ReadonlyArray<ApiKeyScope>; readonly endsAt: Date | null },
  wanted: { readonly scopes: ReadonlyArray<ApiKeyScope>; readonly expiresAt: Date | null }
): InsufficientScope | undefined => {
  const lacking = missingScopes(acting.scopes, wanted.scopes)
  if (lacking.length > 0) {
    return new InsufficientScope({ refused: "grant", scopes: lacking, held: acting.scopes })
  }
  const outlives =
    acting.endsAt !== null && (wanted.expiresAt === null || wanted.expiresAt > acting.endsAt)
  return outlives
    ? new InsufficientScope({
        refused: "expiry",
        scopes: [],
        held: acting.scopes,
        endsAt: acting.endsAt
      })
    : undefined
}

/** The scopes as the stores keep them: comma-separated, in the canonical order. */
export const scopesToText = (scopes: ReadonlyArray<ApiKeyScope>): string =>
  canonicalScopes(scopes).join(",")

/** The stores' text read back; an unknown name (a scope since removed) grants nothing. */
export const scopesFromText = (text: string): ReadonlyArray<ApiKeyScope> =>
  canonicalScopes(text.split(",") as Array<ApiKeyScope>)
