/**
 * The key scopes' rules (issue 40): every partner route of the API definition
 * has a scope in the one table, and a key grants no more than it holds.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { PayApi } from "../Api.js"
import { LegacyPartnerApiKey, PartnerApiKey } from "../identity/PartnerAuth.js"
import {
  ALL_SCOPES,
  canonicalScopes,
  grantRefusal,
  scopeOfRoute,
  scopesFromText,
  scopesProblem,
  scopesToText
} from "./Scopes.js"

/** Every route a partner key opens, as `METHOD /template`. */
const partnerRoutes = (): Array<{ method: string; path: string }> => {
  const routes: Array<{ method: string; path: string }> = []
  HttpApi.reflect(PayApi as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const auth: unknown = [...middleware].filter((m) => m.provides !== undefined).at(-1)
      if (auth === PartnerApiKey || auth === LegacyPartnerApiKey) {
        routes.push({ method: endpoint.method, path: endpoint.path })
      }
    }
  })
  return routes
}

describe("scopes of the partner routes", () => {
  it("names one for every partner route of the API definition (a new route cannot forget it)", () => {
    const routes = partnerRoutes()
    expect(routes.length).toBeGreaterThan(30)
    const missing = routes.filter((r) => scopeOfRoute(r.method, r.path) === undefined)
    expect(missing).toEqual([])
  })

  it("asks read of every GET, and the write scopes of the writes", () => {
    expect(scopeOfRoute("GET", "/v1/api-keys")).toBe("read")
    expect(scopeOfRoute("POST", "/v1/payments")).toBe("payments")
    expect(scopeOfRoute("POST", "/v1/payments/:id/cancel")).toBe("payments")
    expect(scopeOfRoute("POST", "/v1/refunds")).toBe("refunds")
    expect(scopeOfRoute("PUT", "/v1/merchants/:merchantId/settlements/crypto/:id")).toBe(
      "merchants"
    )
    expect(scopeOfRoute("PATCH", "/v1/webhook-endpoints/:id")).toBe("webhooks")
    expect(scopeOfRoute("POST", "/v1/api-keys/:id/rotate")).toBe("keys")
    expect(scopeOfRoute("POST", "/v1/something-new")).toBeUndefined()
  })
})

describe("scope lists", () => {
  it("refuses an unknown scope, an empty list and a repeated scope", () => {
    expect(scopesProblem(["read", "payments"])).toBeUndefined()
    expect(scopesProblem([])).toMatch(/at least one/)
    expect(scopesProblem(["read", "admin"])).toMatch(/not admin/)
    expect(scopesProblem(["read", "read"])).toMatch(/read repeated/)
  })

  it("keeps them in one order, and reads back what it wrote; an unknown name grants nothing", () => {
    expect(canonicalScopes(["keys", "read"])).toEqual(["read", "keys"])
    expect(scopesFromText(scopesToText(["keys", "payments"]))).toEqual(["payments", "keys"])
    expect(scopesFromText("read,admin")).toEqual(["read"])
  })
})

describe("what a key may grant", () => {
  const now = new Date("2026-12-01T00:00:00Z")
  const inTwoMinutes = new Date(now.getTime() + 120_000)

  it("never a scope it lacks", () => {
    const refused = grantRefusal(
      { scopes: ["read", "keys"], endsAt: null },
      { scopes: ["payments"], expiresAt: null }
    )
    expect(refused?.refused).toBe("grant")
    expect(refused?.scopes).toEqual(["payments"])
    expect(
      grantRefusal({ scopes: ALL_SCOPES, endsAt: null }, { scopes: ["read"], expiresAt: null })
    ).toBeUndefined()
  })

  it("never a later end: a short-lived key makes no never-expiring or later-expiring key", () => {
    const acting = { scopes: ALL_SCOPES, endsAt: inTwoMinutes }
    expect(grantRefusal(acting, { scopes: ["read"], expiresAt: null })?.refused).toBe("expiry")
    expect(
      grantRefusal(acting, { scopes: ["read"], expiresAt: new Date(inTwoMinutes.getTime() + 1) })
        ?.refused
    ).toBe("expiry")
    expect(grantRefusal(acting, { scopes: ["read"], expiresAt: inTwoMinutes })).toBeUndefined()
  })
})
