import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { Reply, Route } from "@pay/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { API_REFERENCE_CSP, apiReferenceRoutes } from "./ApiReferenceRoutes.js"
import { scalarBundle } from "./ScalarBundle.js"

// The routes read nothing from the exchange.
const reply = (route: Route<never> | undefined): Promise<Reply> =>
  Effect.runPromise(route!.handle(undefined as never))

const routeOf = (routes: ReadonlyArray<Route<never>>, path: string) =>
  routes.find((r) => r.method === "GET" && r.path === path)

const unescapeHtml = (text: string) =>
  text
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&")

const configurationOf = (html: string) =>
  JSON.parse(unescapeHtml(html.match(/data-configuration="([^"]*)"/)?.[1] ?? "null"))

const fakeBundle = { version: "1.2.3", source: () => "console.log('scalar')" }

describe("apiReferenceRoutes", () => {
  it("serves the page and the script, public, without a body", () => {
    const routes = apiReferenceRoutes({ bundle: fakeBundle })
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /docs", "GET /docs/scalar.js"])
    for (const route of routes) {
      expect(route.middleware).toBeUndefined()
      expect(route.takesBody).toBe(false)
    }
  })

  it("answers the page with its CSP, and a configuration that reaches nothing else", async () => {
    const page = await reply(routeOf(apiReferenceRoutes({ bundle: fakeBundle }), "/docs"))
    expect(page.status).toBe(200)
    expect(page.contentType).toBe("text/html")
    expect(page.headers).toMatchObject({
      "content-security-policy": API_REFERENCE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer"
    })
    expect(configurationOf(String(page.body))).toEqual({
      url: "/openapi.json",
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: "never",
      hideClientButton: true,
      defaultOpenAllTags: true
    })
    expect(page.body).toContain('<script src="/docs/scalar.js?v=1.2.3"></script>')
    expect(page.body).toContain("<title>Pay engine API reference</title>")
    expect(page.body).not.toContain("proxy")
  })

  it("allows scripts and connections to this server only, and no framing", () => {
    expect(API_REFERENCE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; " +
        "form-action 'none'; frame-ancestors 'none'"
    )
  })

  it("puts the document and the script under a base path, and escapes the title", async () => {
    const page = await reply(
      routeOf(
        apiReferenceRoutes({ basePath: "/pay/", title: "Shop <API> & co", bundle: fakeBundle }),
        "/docs"
      )
    )
    expect(configurationOf(String(page.body)).url).toBe("/pay/openapi.json")
    expect(page.body).toContain('<script src="/pay/docs/scalar.js?v=1.2.3"></script>')
    expect(page.body).toContain("<title>Shop &lt;API&gt; &amp; co</title>")
    expect(() => apiReferenceRoutes({ basePath: "pay", bundle: fakeBundle })).toThrow(/basePath/)
  })

  it("answers the script for a year: its URL changes with Scalar's version", async () => {
    const script = await reply(
      routeOf(apiReferenceRoutes({ bundle: fakeBundle }), "/docs/scalar.js")
    )
    expect(script).toEqual({
      status: 200,
      contentType: "text/javascript",
      body: "console.log('scalar')",
      headers: {
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff"
      }
    })
  })
})

describe("scalarBundle", () => {
  it("is the installed @scalar/api-reference's standalone browser bundle", () => {
    const dist = dirname(createRequire(import.meta.url).resolve("@scalar/api-reference"))
    const manifest = JSON.parse(readFileSync(join(dist, "..", "package.json"), "utf8"))
    const bundle = scalarBundle()
    expect(bundle.version).toBe(manifest.version)
    const source = bundle.source()
    expect(source).toBe(readFileSync(join(dist, "browser", "standalone.js"), "utf8"))
    expect(source.length).toBeGreaterThan(1_000_000)
    // Read once, then kept.
    expect(bundle.source()).toBe(source)
  })
})
