/**
 * The buyer's checkout page in Chromium, against the standalone server on
 * SQLite and its sandbox chain: the page of each state, its QR code read back
 * from a screenshot to the exact link, the status changing live when the
 * partner cancels (then the redirect to the error URL), the countdown reaching
 * expiry, and axe-core finding no serious violation in any state, in light and
 * dark. The page reaches nothing but the server and breaks no rule of its CSP.
 * Each state's screenshot is saved (checkout-support.ts says where).
 */
import { PaymentEvents } from "@pay/core"
import { logoCaptureLayer } from "@pay/logos"
import { type LogoServer, plainImage, startLogoServer } from "@pay/logos/testing"
import { Effect, Option } from "effect"
import type { Page } from "playwright-core"
import { createWalletClient, hexToBigInt } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, type TestBrowser } from "./browser-support.js"
import {
  injectWallet,
  readQr,
  saveScreenshot,
  screenshotDir,
  seriousViolations
} from "./checkout-support.js"
import { type Client, client, type E2eServer, eventually, startServer } from "./e2e-support.js"
import {
  baseOnlyMerchant,
  fund,
  MERCHANT_DESTINATION,
  merchantSettledIn,
  newBuyer,
  paymentFor,
  settledMerchant,
  transfersFrom,
  usdcBalance
} from "./gateway-support.js"
import { fail, randomTxHash, startProcessing, succeed } from "./payments-support.js"

const SHOP = "https://shop.example"
const checkout = { successUrl: `${SHOP}/thanks?order=7`, errorUrl: `${SHOP}/sorry` }

describe("the checkout page in Chromium", () => {
  let server: E2eServer
  let browser: TestBrowser
  let partner: Client
  let merchantId: string
  let logos: LogoServer
  const shots = screenshotDir()

  beforeAll(async () => {
    browser = await launchBrowser()
    // The merchant has a logo, which the engine fetches once and serves itself.
    logos = await startLogoServer()
    logos.set("/logo.png", await plainImage(600, "png", "#6f42c1"), "image/png")
    server = await startServer(
      "sqlite",
      {},
      { logos: logoCaptureLayer({ allowPrivate: true, ca: logos.ca }) }
    )
    partner = client(() => server.baseUrl)
    merchantId = await settledMerchant(partner)
    const logo = await partner.request("PATCH", `/v1/merchants/${merchantId}`, {
      body: { iconUrl: `${logos.origin}/logo.png` }
    })
    expect(logo.status, logo.text).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await logos?.close()
    console.info(`checkout screenshots: ${shots}`)
  })

  /** A phone-sized page that stands in for the shop at SHOP (off loopback, never reached). */
  const openPage = async (colorScheme: "light" | "dark" = "light") => {
    const page = await browser.newPage()
    page.setDefaultTimeout(10_000)
    await page.setViewportSize({ width: 390, height: 844 })
    await page.emulateMedia({ colorScheme })
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.message))
    const shop: Array<string> = []
    await page.route(`${SHOP}/**`, (route) => {
      shop.push(route.request().url())
      return route.fulfill({ status: 200, contentType: "text/html", body: "<title>Shop</title>" })
    })
    return { page, errors, shop }
  }

  const goto = async (page: Page, paymentId: string) => {
    const response = await page.goto(`${server.baseUrl}/${paymentId}`)
    expect(response?.status()).toBe(200)
    return response!
  }

  const stateOf = (page: Page) => page.locator("body").getAttribute("data-state")

  /** Waits until the server holds `n` long-polls (its held long-polls counter). */
  const untilHeld = (n: number, what: string) =>
    eventually(
      async () =>
        expect(
          await server.runEngine(Effect.flatMap(PaymentEvents, (events) => events.held)),
          what
        ).toBe(n),
      { timeoutMs: 10_000, intervalMs: 20 }
    )

  it("shows a payable payment: its QR code reads back to the exact link, and axe finds nothing serious", async () => {
    const { paymentId, gatewayUrl } = await paymentFor(partner, merchantId, "123450", {
      referenceId: "order-7"
    })
    for (const scheme of ["light", "dark"] as const) {
      const { page, errors } = await openPage(scheme)
      const response = await goto(page, paymentId)
      expect(response.headers()["content-security-policy"]).toContain("script-src 'self'")
      expect(await stateOf(page)).toBe("requires_action")
      expect(await page.locator("h1").innerText()).toBe("Gateway Shop")
      // The logo is the engine's frozen copy, from the page's own origin.
      const logo = page.locator("img.logo")
      expect(await logo.getAttribute("src")).toMatch(/^logos\/[0-9a-f]{64}\.webp\?size=128$/)
      await page.waitForFunction(
        () => (document.querySelector("img.logo") as HTMLImageElement | null)?.naturalWidth === 128
      )
      expect(await page.locator("#amount").innerText()).toBe("$1,234.50")
      // Which token, network and amount, before any wallet is opened.
      expect(await page.locator("#token-amount").innerText()).toBe(
        "You pay 1234.50 USDC on Pay sandbox"
      )
      expect(await page.locator("#reference").innerText()).toBe("order-7")
      expect(await readQr(page.locator(".qr"))).toBe(gatewayUrl)
      expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toBe(
        gatewayUrl
      )
      // The script ran: the copy button is shown, the countdown ticks.
      await page.getByRole("button", { name: "Copy link" }).waitFor()
      const first = await page.locator("#countdown-time").innerText()
      await page.waitForFunction(
        (was) => document.getElementById("countdown-time")?.textContent !== was,
        first
      )
      expect(await seriousViolations(page)).toEqual([])
      await saveScreenshot(page, shots, `requires_action-${scheme}`)
      expect(errors).toEqual([])
      await page.close()
    }
  })

  it("works without JavaScript, but for the live parts", async () => {
    const { paymentId, gatewayUrl } = await paymentFor(partner, merchantId)
    const page = await browser.newPage()
    // The script never arrives: what is left is the page without JavaScript.
    await page.route("**/checkout.js*", (route) => route.abort())
    await goto(page, paymentId)
    expect(await readQr(page.locator(".qr"))).toBe(gatewayUrl)
    expect(await page.locator("#payment-link").inputValue()).toBe(gatewayUrl)
    expect(await page.locator("#countdown-time").innerText()).toMatch(/^[45]:\d\d$/)
    expect(await page.locator("#copy-link").isVisible()).toBe(false)
    expect(await page.locator("#wallet").isVisible()).toBe(false)
    await page.close()
  })

  it("shows each final state and processing, each accessible, and sends the buyer on", async () => {
    const processing = (await paymentFor(partner, merchantId)).paymentId
    await startProcessing(server, processing)
    const succeeded = (await paymentFor(partner, merchantId, "1050", { checkout })).paymentId
    await startProcessing(server, succeeded)
    await succeed(server, succeeded, randomTxHash())
    const failed = (await paymentFor(partner, merchantId, "1050", { checkout })).paymentId
    await startProcessing(server, failed)
    await fail(server, failed, "transaction_dropped")
    const cancelled = (await paymentFor(partner, merchantId)).paymentId
    expect(
      (
        await partner.request("POST", `/v1/payments/${cancelled}/cancel`, {
          headers: { "merchant-id": merchantId }
        })
      ).status
    ).toBe(200)

    for (const [paymentId, state, heading] of [
      [processing, "processing", "Payment on its way"],
      [succeeded, "succeeded", "Payment received"],
      [failed, "failed", "Payment failed"],
      [cancelled, "cancelled", "Payment cancelled"]
    ] as const) {
      const { page, errors, shop } = await openPage()
      await goto(page, paymentId)
      expect(await stateOf(page)).toBe(state)
      expect(await page.getByRole("status").locator("h2").innerText()).toBe(heading)
      if (state === "failed") {
        expect(await page.locator("#status-reason").innerText()).toBe(
          "The transaction never reached the network."
        )
      }
      if (state === "processing") {
        expect(await page.locator("#status-tx code").innerText()).toMatch(/^0x[0-9a-f]{64}$/)
      }
      expect(await seriousViolations(page)).toEqual([])
      await saveScreenshot(page, shots, state)
      if (state === "succeeded" || state === "failed") {
        await page.waitForURL(`${SHOP}/**`)
        expect(shop).toEqual([
          state === "succeeded"
            ? `${SHOP}/thanks?order=7&paymentId=${paymentId}`
            : `${SHOP}/sorry?paymentId=${paymentId}`
        ])
      }
      expect(errors).toEqual([])
      await page.close()
    }
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
  })

  it("changes live when the partner cancels the payment while the page is open", async () => {
    const { paymentId } = await paymentFor(partner, merchantId, "1050", { checkout })
    // The earlier tests' pages are closed: none of their long-polls is held any more.
    await untilHeld(0, "long-polls held before the page opens")
    const { page, errors, shop } = await openPage()
    await goto(page, paymentId)
    expect(await stateOf(page)).toBe("requires_action")
    // The page's long-poll is held by the server (its counter, not a fixed wait): the cancel
    // then reaches the page by waking it, not by a status read the page makes later.
    await untilHeld(1, "the page's long-poll is held")
    const cancel = await partner.request("POST", `/v1/payments/${paymentId}/cancel`, {
      headers: { "merchant-id": merchantId }
    })
    expect(cancel.status, cancel.text).toBe(200)
    await page.locator('body[data-state="cancelled"]').waitFor({ timeout: 5000 })
    // Announced: the new state is in the page's live region.
    const live = page.locator('[role="status"][aria-live="polite"]')
    expect(await live.locator("h2").innerText()).toBe("Payment cancelled")
    expect(await page.locator("#pay").isVisible()).toBe(false)
    expect(await seriousViolations(page)).toEqual([])
    await saveScreenshot(page, shots, "cancelled-live")
    // Then the buyer is sent to the error URL, with the payment's id.
    await page.waitForURL(`${SHOP}/**`)
    expect(shop).toEqual([`${SHOP}/sorry?paymentId=${paymentId}`])
    expect(errors).toEqual([])
    await page.close()
  })

  it("counts down, prominently at the end, to expiry", async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 4
    const { paymentId } = await paymentFor(partner, merchantId, "1050", { expiresAt })
    const { page, errors } = await openPage()
    await goto(page, paymentId)
    // Under a minute left: the countdown stands out and is announced once.
    await page.locator("#countdown.urgent[role=alert]").waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await saveScreenshot(page, shots, "expiring")
    await page.locator('body[data-state="expired"]').waitFor({ timeout: 8000 })
    // Said at expiry, not when the page's held long-poll would have ended.
    expect(Date.now() - expiresAt * 1000).toBeLessThan(3000)
    expect(await page.getByRole("status").locator("h2").innerText()).toBe("Payment expired")
    expect(await page.locator("#pay").isVisible()).toBe(false)
    expect(await seriousViolations(page)).toEqual([])
    await saveScreenshot(page, shots, "expired")
    expect(errors).toEqual([])
    await page.close()
  })

  it("takes a whole payment from a browser wallet: connect, option, switch chain, sign, confirm, processing, succeeded, redirect", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, 10_500_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050", { checkout })
    const { page, errors, shop } = await openPage()
    // The wallet starts on another chain: the page asks it to switch.
    const calls = await injectWallet(page, buyer.key, { chainId: "0x1" })
    await goto(page, paymentId)
    const connect = page.getByRole("button", { name: "Connect wallet (Test Wallet)" })
    await connect.click()
    const option = page.getByRole("radio", { name: /^10\.50 USDC · / })
    await option.waitFor()
    expect(await option.isChecked()).toBe(true)
    // The chosen option's token, network and amount.
    expect(await page.locator("#token-amount").innerText()).toBe(
      "You pay 10.50 USDC on Pay sandbox"
    )
    expect(await seriousViolations(page)).toEqual([])
    await saveScreenshot(page, shots, "wallet-options")
    await page.getByRole("button", { name: "Sign and pay" }).click()
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
    expect(await page.evaluate(() => window.checkoutStates)).toEqual([
      "requires_action",
      "processing",
      "succeeded"
    ])
    expect(await page.locator("#status-tx code").innerText()).toMatch(/^0x[0-9a-f]{64}$/)
    await saveScreenshot(page, shots, "wallet-succeeded")
    expect(calls.map((c) => c.method)).toEqual([
      "eth_requestAccounts",
      "eth_chainId",
      "wallet_switchEthereumChain",
      "eth_signTypedData_v4"
    ])
    expect(calls[2]!.params).toEqual([{ chainId: "0x7a69" }])
    // Paid on the sandbox chain: the buyer's USDC moved, in one transfer.
    expect(await usdcBalance(server, buyer.address)).toBe(0n)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
    await page.waitForURL(`${SHOP}/**`)
    expect(shop).toEqual([`${SHOP}/thanks?order=7&paymentId=${paymentId}`])
    expect(errors).toEqual([])
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    await page.close()
  })

  it("waits for IC_COMPLETE from the data-collection window it opened, at the engine's origin, and no other", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, 10_500_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050", { checkout })
    const { page, errors } = await openPage()
    const calls = await injectWallet(page, buyer.key, { chainId: "0x7a69" })
    // The option asks for the buyer's data: its collect URL is a page of the engine's origin.
    await page.route(`**/${paymentId}/options`, async (route) => {
      const response = await route.fetch()
      const body = await response.json()
      for (const option of body.options) option.collectDataUrl = "collect-probe"
      await route.fulfill({ response, json: body })
    })
    await goto(page, paymentId)
    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.getByRole("radio", { name: /^10\.50 USDC · / }).waitFor()
    const [popup] = await Promise.all([
      page.waitForEvent("popup"),
      page.getByRole("button", { name: "Sign and pay" }).click()
    ])
    await popup.waitForLoadState()
    expect(popup.url()).toBe(`${server.baseUrl}/collect-probe`)
    const COMPLETE = { type: "IC_COMPLETE", success: true }
    const signing = () => calls.filter((c) => c.method === "eth_signTypedData_v4").length
    // The engine's origin, but not the window it opened: the page itself (any script on it).
    await page.evaluate((m) => window.postMessage(m, "*"), COMPLETE)
    // The window it opened, but at another origin (localhost is not 127.0.0.1). Navigated from
    // within, as a page would: a navigation by the browser itself would cut the opener.
    const elsewhere = `${server.baseUrl.replace("127.0.0.1", "localhost")}/elsewhere`
    await popup.evaluate((url) => window.location.assign(url), elsewhere)
    await popup.waitForURL(elsewhere)
    await popup.evaluate((m) => window.opener.postMessage(m, "*"), COMPLETE)
    // What is tested is that nothing follows these two messages: no event marks an absence,
    // so the page is given half a second in which a heard message would have led to signing.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(signing()).toBe(0)
    // The window it opened, back at the engine's origin: heard, and the payment goes on.
    await popup.evaluate((url) => window.location.assign(url), `${server.baseUrl}/collect-probe`)
    await popup.waitForURL(`${server.baseUrl}/collect-probe`)
    await popup.evaluate((m) => window.opener.postMessage(m, "*"), COMPLETE)
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
    expect(signing()).toBe(1)
    expect(errors).toEqual([])
    expect(browser.offLoopback).toEqual([])
    await popup.close()
    await page.close()
  })

  it("takes USDT through Permit2: the page shows the approval step, the wallet sends it, then signs the permit", async () => {
    const usdt = server.sandbox.tokens.find((t) => t.symbol === "USDT")!
    const { merchantId: usdtMerchant } = await merchantSettledIn(partner, [
      { asset: usdt.asset, destination: `eip155:31337:${MERCHANT_DESTINATION}` }
    ])
    const buyer = newBuyer()
    await Effect.runPromise(server.sandbox.faucet(buyer.address, 10_500_000n, "USDT"))
    await Effect.runPromise(server.sandbox.faucet(buyer.address, 10n ** 17n, "ETH"))
    const { paymentId } = await paymentFor(partner, usdtMerchant, "1050", { checkout })
    const { page, errors } = await openPage()
    // What the page said while the wallet was asked for each thing.
    const shown: Array<string> = []
    const wallet = createWalletClient({
      account: privateKeyToAccount(buyer.key),
      chain: server.sandbox.chain,
      transport: server.sandbox.transport
    })
    const calls = await injectWallet(page, buyer.key, {
      chainId: "0x7a69",
      sendTransaction: async (tx) => {
        shown.push(await page.locator("#wallet-message").innerText())
        expect(tx.from).toBe(buyer.address)
        return wallet.sendTransaction({
          to: tx.to as `0x${string}`,
          data: tx.data as `0x${string}`,
          value: hexToBigInt(tx.value as `0x${string}`)
        })
      }
    })
    await goto(page, paymentId)
    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.getByRole("radio", { name: /^10\.50 USDT · / }).waitFor()
    await page.getByRole("button", { name: "Sign and pay" }).click()
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
    expect(calls.map((c) => c.method)).toEqual([
      "eth_requestAccounts",
      "eth_chainId",
      "eth_sendTransaction",
      "eth_signTypedData_v4"
    ])
    expect(shown).toEqual([
      "Step 1 of 2: approve the token in your wallet. This is needed once per token, and pays a small network fee."
    ])
    const permit = JSON.parse((calls[3]!.params as Array<string>)[1]!)
    expect(permit.primaryType).toBe("PermitWitnessTransferFrom")
    expect(permit.message.witness.paymentId).toBe(paymentId)
    // Paid once, in USDT: the buyer's balance is gone, in one transfer.
    const balance = await server.sandbox.publicClient.readContract({
      address: usdt.address,
      abi: server.sandbox.token.abi,
      functionName: "balanceOf",
      args: [buyer.address]
    })
    expect(balance).toBe(0n)
    expect(errors).toEqual([])
    expect(browser.cspViolations).toEqual([])
    await page.close()
  })

  it("takes a payment from a browser wallet whose account is a Safe not deployed yet: signs as the account, deployed and paid", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const safe = await Effect.runPromise(
      server.sandbox.smartAccount({ kind: "safe", owner, counterfactual: true })
    )
    await Effect.runPromise(server.sandbox.faucet(safe.address, 10_500_000n))
    const { paymentId } = await paymentFor(partner, merchantId, "1050", { checkout })
    const { page, errors } = await openPage()
    const calls = await injectWallet(page, generatePrivateKey(), {
      chainId: "0x7a69",
      account: safe
    })
    await goto(page, paymentId)
    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.getByRole("radio", { name: /^10\.50 USDC · / }).waitFor()
    await page.getByRole("button", { name: "Sign and pay" }).click()
    await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
    expect(calls.map((c) => c.method)).toContain("eth_signTypedData_v4")
    // Signed for the account, not the owner's key: the page asked for the account's signature.
    const signing = calls.find((c) => c.method === "eth_signTypedData_v4")!
    expect(String((signing.params as Array<unknown>)[0]).toLowerCase()).toBe(
      safe.address.toLowerCase()
    )
    expect(
      (await server.sandbox.publicClient.getCode({ address: safe.address }))?.length
    ).toBeGreaterThan(2)
    expect(await usdcBalance(server, safe.address)).toBe(0n)
    expect(await transfersFrom(server, safe.address)).toHaveLength(1)
    expect(errors).toEqual([])
    await page.close()
  })

  it("says how much is needed when the wallet holds too little, and that nothing was paid when the buyer declines", async () => {
    const poor = newBuyer()
    await fund(server, poor, 1_000_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const { page, errors } = await openPage()
    await injectWallet(page, poor.key, { chainId: "0x7a69" })
    await goto(page, paymentId)
    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.getByRole("button", { name: "Sign and pay" }).click()
    const alert = page.locator("#wallet-message")
    await page.waitForFunction(() => document.getElementById("wallet-message")?.textContent)
    expect(await alert.innerText()).toBe("This account does not hold enough: 10.50 USDC is needed.")
    expect(await alert.getAttribute("role")).toBe("alert")
    expect(await seriousViolations(page)).toEqual([])
    await saveScreenshot(page, shots, "wallet-insufficient-balance")
    expect(await page.locator("body").getAttribute("data-state")).toBe("requires_action")
    await page.close()

    const declining = await openPage()
    await injectWallet(declining.page, poor.key, { chainId: "0x7a69", rejectSigning: true })
    await goto(declining.page, paymentId)
    await declining.page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await declining.page.getByRole("button", { name: "Sign and pay" }).click()
    await declining.page.waitForFunction(
      () => document.getElementById("wallet-message")?.textContent
    )
    expect(await declining.page.locator("#wallet-message").innerText()).toBe(
      "The wallet did not sign. Nothing was paid."
    )
    expect(errors).toEqual([])
    expect(declining.errors).toEqual([])
    await declining.page.close()
  })

  it("fetches a stale quote again before signing, says so, then pays at the new one", async () => {
    // A server whose quotes stay locked for 5 s only (the page wants 2 s of a quote left to sign).
    const quick = await startServer("sqlite", { quoteLockMs: Option.some(5000) })
    try {
      const quickPartner = client(() => quick.baseUrl)
      const quickMerchant = await settledMerchant(quickPartner)
      const buyer = newBuyer()
      await fund(quick, buyer, 10_500_000n)
      const { paymentId } = await paymentFor(quickPartner, quickMerchant, "1050")
      const { page, errors } = await openPage()
      const calls = await injectWallet(page, buyer.key, { chainId: "0x7a69" })
      const options: Array<string> = []
      page.on("request", (request) => {
        if (request.url().endsWith(`/${paymentId}/options`)) options.push(request.url())
      })
      const response = await page.goto(`${quick.baseUrl}/${paymentId}`)
      expect(response?.status()).toBe(200)
      await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
      const radio = page.getByRole("radio", { name: /^10\.50 USDC · / })
      await radio.waitFor()
      const first = await radio.getAttribute("value")
      await page.waitForTimeout(4000)
      await page.getByRole("button", { name: "Sign and pay" }).click()
      await page.waitForFunction(() => document.getElementById("wallet-message")?.textContent)
      expect(await page.locator("#wallet-message").innerText()).toBe(
        "The price was updated. Check the amount and sign again."
      )
      expect(options).toHaveLength(2)
      expect(await radio.getAttribute("value")).not.toBe(first)
      // Nothing was signed for the stale quote.
      expect(calls.filter((c) => c.method === "eth_signTypedData_v4")).toHaveLength(0)
      await page.getByRole("button", { name: "Sign and pay" }).click()
      await page.locator('body[data-state="succeeded"]').waitFor({ timeout: 20_000 })
      expect(calls.filter((c) => c.method === "eth_signTypedData_v4")).toHaveLength(1)
      expect(errors).toEqual([])
    } finally {
      await Promise.all(browser.context.pages().map((p) => p.close()))
      await quick.stop()
    }
  }, 60_000)

  it("says why there is no way to pay: on the page for a merchant settled only on Base, and to a wallet connected once its settlement is gone", async () => {
    // Base is not a network the server runs (the sandbox chain only).
    const { merchantId: baseMerchant } = await baseOnlyMerchant(partner)
    const unpayable = (await paymentFor(partner, baseMerchant, "450")).paymentId
    for (const scheme of ["light", "dark"] as const) {
      const { page, errors } = await openPage(scheme)
      await goto(page, unpayable)
      const notice = page.getByRole("region", { name: "No way to pay" })
      expect(await notice.locator("p").innerText()).toBe(
        "This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here."
      )
      // Nothing to scan or connect: no wallet could pay it.
      expect(await page.locator(".qr").count()).toBe(0)
      expect(await page.locator("#token-amount").isVisible()).toBe(false)
      expect(await page.getByRole("status").locator("h2").innerText()).toBe("Waiting for payment")
      expect(await seriousViolations(page)).toEqual([])
      await saveScreenshot(page, shots, `no-options-${scheme}`)
      expect(errors).toEqual([])
      await page.close()
    }

    // A page opened while the merchant could be paid; its settlement removed before the wallet
    // asks: the wallet's answer says why.
    const merchant = await settledMerchant(partner)
    const { paymentId } = await paymentFor(partner, merchant, "1050")
    const buyer = newBuyer()
    const { page, errors } = await openPage()
    await injectWallet(page, buyer.key, { chainId: "0x7a69" })
    await goto(page, paymentId)
    expect(await page.locator("#token-amount").innerText()).toBe(
      "You pay 10.50 USDC on Pay sandbox"
    )
    const listed = await partner.get(`/v1/merchants/${merchant}/settlements`)
    for (const { id } of listed.body.crypto) {
      const removed = await partner.request(
        "DELETE",
        `/v1/merchants/${merchant}/settlements/crypto/${id}`
      )
      expect(removed.status, removed.text).toBe(200)
    }
    await page.getByRole("button", { name: "Connect wallet (Test Wallet)" }).click()
    await page.waitForFunction(() => document.getElementById("wallet-message")?.textContent)
    expect(await page.locator("#wallet-message").innerText()).toBe(
      "This merchant has not set up how it is paid in crypto, so there is no way to pay it yet."
    )
    expect(await page.getByRole("button", { name: "Sign and pay" }).isVisible()).toBe(false)
    expect(await seriousViolations(page)).toEqual([])
    expect(errors).toEqual([])
    expect(browser.offLoopback).toEqual([])
    expect(browser.cspViolations).toEqual([])
    await page.close()
  })

  it("speaks Spanish to a browser that prefers it", async () => {
    const { paymentId } = await paymentFor(partner, merchantId)
    const page = await browser.newPage()
    await page.setExtraHTTPHeaders({ "accept-language": "es-ES,es;q=0.9" })
    await goto(page, paymentId)
    expect(await page.locator("html").getAttribute("lang")).toBe("es")
    expect(await page.getByRole("status").locator("h2").innerText()).toBe("Esperando el pago")
    expect(await page.locator("#token-amount").innerText()).toBe("Pagas 10.50 USDC en Pay sandbox")
    await page.getByRole("button", { name: "Copiar enlace" }).waitFor()
    await saveScreenshot(page, shots, "requires_action-es")
    await page.close()
  })
})
