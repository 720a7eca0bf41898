/**
 * The checkout page and its browser-wallet flow with the server on Bun: the
 * bundle `npm run start:bun` runs, as its own process on a SQLite file and its
 * sandbox chain, under a base path (`PAY_BASE_PATH=/shop-pay`, so every URL the
 * page uses must be relative to its link). Chromium pays a payment from an
 * injected wallet, as the Node suite does (checkout.browser.test.ts), through
 * processing to succeeded.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, type TestBrowser } from "./browser-support.js"
import { injectWallet, seriousViolations } from "./checkout-support.js"
import { type Client, client, PARTNER_KEY } from "./e2e-support.js"
import { newBuyer, paymentFor, settledMerchant } from "./gateway-support.js"
import { bundle, requireBundles, stopAll } from "./instances-support.js"

const root = join(import.meta.dirname, "..", "..", "..")
const BASE_PATH = "/shop-pay"

/** The `bun` binary of the npm package, as `npm run start:bun` runs it. */
const bunBinary = join(root, "node_modules", ".bin", "bun")

describe("the checkout page with the server on Bun", () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-checkout-bun-"))
  const children: Array<ChildProcess> = []
  let browser: TestBrowser
  let url: string
  let partner: Client

  beforeAll(async () => {
    browser = await launchBrowser()
    requireBundles("main-bun")
    const child = spawn(bunBinary, [bundle("main.bun")], {
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: "0",
        PAY_DATABASE: join(dir, "pay.sqlite"),
        PAY_BOOTSTRAP_API_KEY: PARTNER_KEY,
        PAY_BASE_PATH: BASE_PATH
      },
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    url = await new Promise<string>((resolve, reject) => {
      let output = ""
      const timer = setTimeout(() => reject(new Error(`no start on Bun:\n${output}`)), 30_000)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const listening = output.match(/listening on (http:\/\/\S+)/)?.[1]
        if (listening && /(Try: curl|npm run pay)/.test(output)) {
          clearTimeout(timer)
          resolve(listening.replace(/\/$/, ""))
        }
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      child.once("exit", (code) => reject(new Error(`exited (${code}) on Bun:\n${output}`)))
    })
    const origin = new URL(url).origin
    partner = client(() => `${origin}${BASE_PATH}`)
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await stopAll(children)
    rmSync(dir, { recursive: true, force: true })
  })

  it("shows the page and takes a payment from a browser wallet", async () => {
    const origin = new URL(url).origin
    const merchantId = await settledMerchant(partner)
    const buyer = newBuyer()
    const funded = await fetch(`${origin}${BASE_PATH}/sandbox/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: buyer.account, amount: "10500000" })
    })
    expect(funded.status, await funded.text()).toBe(200)
    // Without PAY_PUBLIC_URL the buyer link names the listening port (0 here), not the base
    // path: the page is opened where the server really answers.
    const { paymentId } = await paymentFor(partner, merchantId, "1050")

    const page = await browser.newPage()
    page.setDefaultTimeout(10_000)
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.message))
    const calls = await injectWallet(page, buyer.key, { chainId: "0x1" })
    const response = await page.goto(`${origin}${BASE_PATH}/${paymentId}`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'")
    expect(await page.locator("#amount").innerText()).toBe("$10.50")
    await page.getByRole("button", { name: "Copy link" }).waitFor()
    expect(await seriousViolations(page)).toEqual([])

    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.getByRole("radio", { name: /^10\.50 USDC · / }).waitFor()
    await page.getByRole("button", { name: "Sign and pay" }).click()
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
    expect(await page.evaluate(() => window.checkoutStates)).toEqual([
      "requires_action",
      "processing",
      "succeeded"
    ])
    expect(calls.map((c) => c.method)).toEqual([
      "eth_requestAccounts",
      "eth_chainId",
      "wallet_switchEthereumChain",
      "eth_signTypedData_v4"
    ])
    const status = await partner.request("GET", `/v1/payments/${paymentId}/status`, {
      headers: { "merchant-id": merchantId }
    })
    expect(status.body.status).toBe("succeeded")
    expect(errors).toEqual([])
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    await page.close()
  })
})
