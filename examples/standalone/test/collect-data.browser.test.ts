/**
 * The data-collection page in a real browser, as a buyer meets it in a
 * wallet's web view: the standalone server on SQLite and its sandbox chain, a
 * 1,000 USD payment (the sandbox asks for data from that amount), the page of
 * its `collectData.url` loaded in Chromium, the form filled in and submitted.
 * A name of only spaces (which the browser's own checks let through) comes
 * back with its error beside the field and the rest kept; corrected, the page
 * says thank you and tells the wallet IC_COMPLETE through its bridge. The page
 * reaches nothing but the server, and runs its script within its own CSP
 * (sent as a header too). A page of another origin may frame it (as a web
 * wallet does); without its URL's token it shows a 403 and no form. A web view
 * that prefers Spanish gets the page, and its errors, in Spanish. axe-core
 * finds no serious violation in any state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, type TestBrowser } from "./browser-support.js"
import { seriousViolations } from "./checkout-support.js"
import { type Client, client, type E2eServer, startServer } from "./e2e-support.js"
import { newBuyer, options, paymentFor, settledMerchant, walletClient } from "./gateway-support.js"

declare global {
  interface Window {
    /** What the page sent the wallet through the React Native bridge the test stands in for. */
    walletMessages?: Array<string>
  }
}

describe("the data-collection page (/collect/{id}) in Chromium", () => {
  let server: E2eServer
  let browser: TestBrowser
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    // The browser first: without one the suite fails at once, before a server is started.
    browser = await launchBrowser()
    server = await startServer("sqlite")
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  /** The page's URL for a new 1,000.00 USD payment and one buyer, on this server. */
  const collectPage = async (): Promise<string> => {
    const buyer = newBuyer()
    const { paymentId } = await paymentFor(partner, merchantId, "100000")
    const offered = await options(wallet, paymentId, [buyer.account])
    expect(offered.status, offered.text).toBe(200)
    const url = new URL(offered.body.options[0].collectData.url as string)
    // The engine writes its public URL, which has no port.
    return `${server.baseUrl}${url.pathname}${url.search}`
  }

  it("takes the buyer's details: an error beside its field, then the success state", async () => {
    const url = await collectPage()
    const page = await browser.newPage()
    // A step that cannot happen fails in seconds, naming itself, not at the test's timeout.
    page.setDefaultTimeout(10_000)
    const posts: Array<string> = []
    const errors: Array<string> = []
    page.on("request", (request) => {
      if (request.method() === "POST") posts.push(request.url())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    // The wallet's side of the bridge (react-native-webview's), before any script of the page.
    await page.addInitScript(() => {
      window.walletMessages = []
      Object.assign(window, {
        ReactNativeWebView: { postMessage: (m: string) => window.walletMessages?.push(m) }
      })
    })

    const response = await page.goto(url)
    expect(response?.status()).toBe(200)
    // The page's policy comes as a header too (with who may frame it), beside nosniff and no referrer.
    const headers = response?.headers() ?? {}
    expect(headers["content-security-policy"]).toMatch(/script-src 'sha256-.*frame-ancestors \*$/)
    expect(headers["x-content-type-options"]).toBe("nosniff")
    expect(headers["referrer-policy"]).toBe("no-referrer")
    expect(await page.locator("body").getAttribute("data-state")).toBe("form")
    // Accessible in each state: the form, the form with its errors, the thank-you.
    expect(await seriousViolations(page)).toEqual([])

    // Nothing filled in: the browser's own checks stop the form, nothing is posted.
    const submit = page.getByRole("button", { name: "Continue" })
    await submit.click()
    expect(
      await page.locator("#f-fullName").evaluate((i: HTMLInputElement) => i.validity.valid)
    ).toBe(false)
    expect(posts).toEqual([])

    // A name of only spaces passes the browser, not the engine.
    await page.getByLabel("Full Name").fill("   ")
    await page.getByLabel("Date of Birth").fill("1990-12-10")
    // Typed in lower case, upper-cased by the page's script as it is typed.
    await page.getByLabel("Place of Residence Country").pressSequentially("gb")
    expect(await page.getByLabel("Place of Residence Country").inputValue()).toBe("GB")
    await page.getByLabel("Place of Residence Address").fill("12 St James's Square, London")
    await page.getByLabel("Terms of Service").check()
    await submit.click()
    await page.locator("#error-summary").waitFor()

    expect(posts).toEqual([url])
    expect(await page.locator("body").getAttribute("data-state")).toBe("form")
    const name = page.locator("#f-fullName")
    expect(await name.getAttribute("aria-invalid")).toBe("true")
    expect(await name.getAttribute("aria-describedby")).toContain("f-fullName-error")
    // The message sits in the field's own block, beside its input.
    const field = page.locator(".field", { has: name })
    expect(await field.locator(".error").innerText()).toBe("Is required")
    expect(await page.locator("#error-summary").innerText()).toContain("There is a problem to fix")
    // The page's script ran (allowed by its CSP hash) and moved the focus to the summary.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("error-summary")
    // Only that field is wrong; the rest is kept as typed.
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(1)
    expect(await page.getByLabel("Date of Birth").inputValue()).toBe("1990-12-10")
    expect(await page.getByLabel("Place of Residence Country").inputValue()).toBe("GB")
    expect(await page.getByLabel("Terms of Service").isChecked()).toBe(true)
    expect(await seriousViolations(page)).toEqual([])

    // Corrected: received.
    await page.getByLabel("Full Name").fill("Ada Lovelace")
    await page.getByRole("button", { name: "Continue" }).click()
    await page.locator('body[data-state="done"]').waitFor()
    expect(posts).toEqual([url, url])
    expect(await page.getByRole("status").innerText()).toContain("Thank you")
    expect(await page.locator("form").count()).toBe(0)
    expect(await seriousViolations(page)).toEqual([])
    // The wallet is told, once.
    await page.waitForFunction(() => (window.walletMessages?.length ?? 0) > 0)
    expect(await page.evaluate(() => window.walletMessages)).toEqual([
      JSON.stringify({ type: "IC_COMPLETE", success: true })
    ])

    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it("speaks Spanish to a web view that prefers it, errors included", async () => {
    const url = await collectPage()
    const page = await browser.newPage()
    page.setDefaultTimeout(10_000)
    await page.setExtraHTTPHeaders({ "accept-language": "es-MX,es;q=0.9" })
    await page.goto(url)
    expect(await page.locator("html").getAttribute("lang")).toBe("es")
    expect(await page.locator("h1").innerText()).toBe("Tus datos")
    await page.getByLabel("Nombre completo").fill("   ")
    await page.getByLabel("Fecha de nacimiento").fill("1990-12-10")
    await page.getByLabel("Lugar de residencia: país").pressSequentially("mx")
    await page.getByLabel("Lugar de residencia: dirección").fill("Av. Reforma 1, CDMX")
    await page.getByLabel("Aceptación de las condiciones del servicio").check()
    await page.getByRole("button", { name: "Continuar" }).click()
    await page.locator("#error-summary").waitFor()
    expect(await page.locator("#error-summary h2").innerText()).toBe("Hay un problema que corregir")
    expect(
      await page
        .locator(".field", { has: page.locator("#f-fullName") })
        .locator(".error")
        .innerText()
    ).toBe("Es obligatorio")
    expect(await seriousViolations(page)).toEqual([])
    await page.close()
  })

  it("may be framed by another origin (a web wallet); without its token it shows only why not", async () => {
    const url = await collectPage()
    const page = await browser.newPage()
    page.setDefaultTimeout(10_000)
    const violations = browser.cspViolations.length
    // A page of another origin (localhost, not 127.0.0.1) frames the collect page.
    const other = new URL(server.baseUrl)
    other.hostname = "localhost"
    await page.goto(`${other.origin}/health`)
    await page.evaluate((src) => {
      const frame = document.createElement("iframe")
      frame.src = src
      document.body.appendChild(frame)
    }, url)
    const framed = page.frameLocator("iframe")
    await framed.locator('body[data-state="form"]').waitFor()
    expect(await framed.getByRole("button", { name: "Continue" }).count()).toBe(1)

    // Without the token: the small 403 page, no form, its script within its policy.
    const forged = new URL(url)
    forged.searchParams.delete("token")
    const response = await page.goto(forged.href)
    expect(response?.status()).toBe(403)
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors *")
    expect(await page.locator("body").getAttribute("data-state")).toBe("problem")
    expect(await page.locator("form").count()).toBe(0)

    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations.slice(violations)).toEqual([])
    await page.close()
  })
})
