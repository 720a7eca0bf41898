/**
 * The API reference page in a real browser: the standalone server on SQLite,
 * `/docs` loaded in Chromium, Scalar left to render, and every operation of
 * `/openapi.json` found on the page; its "Test Request" client sends a call
 * to the engine itself. Offline: every request the page makes is
 * checked to stay on loopback (any other is aborted and fails the test), the
 * Content-Security-Policy allows no other host, and the page must render
 * without a single violation of it.
 */
import { API_REFERENCE_CSP } from "@pay/api-reference"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, type TestBrowser } from "./browser-support.js"
import { type E2eServer, type Json, startServer } from "./e2e-support.js"

interface Operation {
  readonly method: string
  readonly path: string
  readonly summary: string
}

const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"])

const operationsOf = (document: Json): ReadonlyArray<Operation> =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ method, path, summary: operation.summary as string }))
  )

/**
 * Whether the page's text (white space collapsed) shows an operation: its summary, and its method
 * and path side by side (each tag's list of operations reads "POST /v1/merchants").
 */
const shows = (text: string, o: Operation): boolean =>
  text.includes(o.summary.replace(/\s+/g, " ")) &&
  text.includes(`${o.method.toUpperCase()} ${o.path}`)

/** The text the page shows, as a person reads it (hidden and collapsed parts left out). */
const shownText = (page: Page): Promise<string> =>
  page.evaluate(() => document.body.innerText.replace(/\s+/g, " "))

const directives = (policy: string): Map<string, ReadonlyArray<string>> =>
  new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((words) => words[0] !== undefined && words[0] !== "")
      .map(([name, ...sources]) => [name!, sources])
  )

describe("the API reference page (/docs) in Chromium", () => {
  let server: E2eServer
  let browser: TestBrowser

  beforeAll(async () => {
    // The browser first: without one the suite fails at once, before a server is started.
    browser = await launchBrowser()
    server = await startServer("sqlite")
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it("renders every operation of /openapi.json, reaching nothing but the server", async () => {
    const openApi = await (await fetch(`${server.baseUrl}/openapi.json`)).json()
    const operations = operationsOf(openApi)
    expect(operations.length).toBeGreaterThan(20)
    for (const operation of operations) expect(operation.summary, operation.path).toBeTruthy()

    const page = await browser.newPage()
    const requested: Array<string> = []
    const errors: Array<string> = []
    page.on("request", (request) => requested.push(request.url()))
    page.on("pageerror", (error) => errors.push(error.message))

    const response = await page.goto(`${server.baseUrl}/docs`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-type"]).toMatch(/^text\/html\b/)

    // Scalar renders from the document it fetches; every operation, once it is done.
    const deadline = Date.now() + 20_000
    const notShown = async () => {
      const text = await shownText(page)
      return operations.filter((o) => !shows(text, o))
    }
    let missing = await notShown()
    while (missing.length > 0 && Date.now() < deadline) {
      await page.waitForTimeout(200)
      missing = await notShown()
    }
    expect(missing).toEqual([])

    // Only the page, Scalar's bundle and the document, all from the server itself.
    const origin = new URL(server.baseUrl).origin
    expect(
      requested.every((url) => new URL(url).origin === origin),
      requested.join("\n")
    ).toBe(true)
    expect(requested.map((url) => new URL(url).pathname).sort()).toEqual([
      "/docs",
      "/docs/scalar.js",
      "/openapi.json"
    ])
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it("tries a request from the page: Scalar's client calls this server directly, no proxy", async () => {
    const page = await browser.newPage()
    // Scalar renders its operations from a 3 MB bundle: on a loaded two-core machine the first
    // button has been seen to take over 10 s to appear, so each step may take most of the test's time.
    page.setDefaultTimeout(45_000)
    await page.goto(`${server.baseUrl}/docs`)
    await page.getByRole("button", { name: /Test Request \(post \/v1\/merchants\)/ }).click()
    const answered = page.waitForResponse(
      (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/v1/merchants"
    )
    await page.getByRole("button", { name: /^Send/ }).first().click()
    const response = await answered
    // Sent without a key: the engine's own refusal, shown in the client.
    expect(new URL(response.url()).origin).toBe(new URL(server.baseUrl).origin)
    expect(response.status()).toBe(401)
    await page.getByText('"missing_api_key"').first().waitFor()
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    await page.close()
  }, 120_000)

  it("sends a Content-Security-Policy that allows this server only, and no framing", async () => {
    const response = await fetch(`${server.baseUrl}/docs`)
    const policy = response.headers.get("content-security-policy") ?? ""
    expect(policy).toBe(API_REFERENCE_CSP)
    const parsed = directives(policy)
    expect(parsed.get("default-src")).toEqual(["'none'"])
    expect(parsed.get("script-src")).toEqual(["'self'"])
    expect(parsed.get("connect-src")).toEqual(["'self'"])
    expect(parsed.get("frame-ancestors")).toEqual(["'none'"])
    // No host, no scheme-wide source (https:, *) anywhere: the page can load from here only.
    for (const [name, sources] of parsed) {
      for (const source of sources) {
        expect(`${name} ${source}`).toMatch(/ ('self'|'none'|'unsafe-inline'|data:)$/)
      }
    }
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("referrer-policy")).toBe("no-referrer")
    const html = await response.text()
    // No inline script: the configuration is a JSON data block, the script comes from this server.
    expect(html).not.toMatch(/<script(?![^>]*\s(src=|type="application\/json"))[^>]*>/)
    expect(html).not.toMatch(/https?:\/\//)
  })

  it("serves Scalar's bundle from its npm package, cached for long under a versioned URL", async () => {
    const html = await (await fetch(`${server.baseUrl}/docs`)).text()
    const src = html.match(/<script src="([^"]+)"/)?.[1]
    expect(src).toMatch(/^\/docs\/scalar\.js\?v=\d+\.\d+\.\d+$/)
    const response = await fetch(`${server.baseUrl}${src}`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/javascript\b/)
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect((await response.text()).length).toBeGreaterThan(1_000_000)
  })
})
