/**
 * The buyer's checkout page at a payment's link, over HTTP against the
 * standalone server on SQLite: a browser (`Accept: text/html`) gets the page,
 * in its language, with the page's policy as a header; anything else at the
 * link (a wallet SDK's JSON, `curl`'s `*\/*`) gets the 404 it always got. Each
 * state's page, the page's script, and its live status route.
 */
import { PaymentEvents } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Client, client, type E2eServer, eventually, startServer } from "./e2e-support.js"
import {
  baseOnlyMerchant,
  fund,
  newBuyer,
  paymentFor,
  settledMerchant,
  signAction,
  usdcBalance
} from "./gateway-support.js"
import { fail, randomTxHash, startProcessing, succeed } from "./payments-support.js"

const HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

describe("the checkout page at gatewayUrl", () => {
  let server: E2eServer
  let partner: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer("sqlite")
    partner = client(() => server.baseUrl)
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(() => server?.stop())

  const page = (paymentId: string, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/${paymentId}`, { headers: { accept: HTML, ...headers } })

  const checkout = {
    successUrl: "https://shop.example/thanks?order=1",
    errorUrl: "https://shop.example/sorry"
  }

  it("answers a wallet SDK or a tool exactly as before: the 404 of a path no route has", async () => {
    const { paymentId } = await paymentFor(partner, merchantId)
    for (const accept of ["application/json", "*/*", undefined]) {
      const response = await fetch(`${server.baseUrl}/${paymentId}`, {
        headers: accept === undefined ? {} : { accept }
      })
      expect(response.status).toBe(404)
      expect(await response.text()).toBe(
        JSON.stringify({ code: "not_found", message: `No route for GET /${paymentId}` })
      )
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expect(response.headers.get("content-security-policy")).toBeNull()
      expect(response.headers.get("pay-version")).toBeNull()
      // Other methods too: the link is still no route for them.
      const post = await fetch(`${server.baseUrl}/${paymentId}`, {
        method: "POST",
        headers: accept === undefined ? {} : { accept }
      })
      expect(post.status).toBe(404)
    }
  })

  it("shows a browser the merchant, the amount, the reference, the QR code and the countdown", async () => {
    const { paymentId, gatewayUrl } = await paymentFor(partner, merchantId, "123450", {
      referenceId: "order-<42>"
    })
    const response = await page(paymentId)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const csp = response.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    expect(csp).toMatch(/frame-ancestors \*$/)
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("content-language")).toBe("en")
    const html = await response.text()
    expect(html).toContain("Gateway Shop")
    expect(html).toContain("$1,234.50")
    // Which token, on which network, and how much, before any wallet is opened: exact.
    expect(html).toContain(
      '<p class="token-amount" id="token-amount">You pay 1234.50 USDC on Pay sandbox</p>'
    )
    expect(html).not.toContain('id="no-options"')
    // Escaped, never markup.
    expect(html).toContain("order-&lt;42&gt;")
    expect(html).not.toContain("order-<42>")
    expect(html).toMatch(/<svg role="img" aria-label="QR code of the payment link"/)
    expect(html).toContain(`href="${gatewayUrl}"`)
    expect(html).toContain(`value="${gatewayUrl}"`)
    expect(html).toMatch(/<time id="countdown-time" datetime="[^"]+">[45]:\d\d<\/time>/)
    expect(html).toContain('data-state="requires_action"')
    // No inline script: the one script is a file of its own, pinned by its hash.
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
    const src = /<script src="([^"]+)" integrity="(sha256-[^"]+)"/.exec(html)
    expect(src).not.toBeNull()
    const script = await fetch(new URL(src![1]!, `${server.baseUrl}/${paymentId}`))
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    const { createHash } = await import("node:crypto")
    expect(
      `sha256-${createHash("sha256")
        .update(await script.text())
        .digest("base64")}`
    ).toBe(src![2])
  })

  it("shows a payment asked in a token as that token's amount", async () => {
    const { paymentId } = await paymentFor(partner, merchantId, "1050", {
      amount: {
        unit: "caip19/eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116",
        value: "12340000"
      }
    })
    const html = await (await page(paymentId)).text()
    expect(html).toContain('<p class="amount" id="amount">12.34 USDC</p>')
    expect(html).toContain("You pay 12.34 USDC on Pay sandbox")
  })

  it("speaks Spanish to a browser that prefers it", async () => {
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const response = await page(paymentId, { "accept-language": "es-MX,es;q=0.9,en;q=0.5" })
    expect(response.headers.get("content-language")).toBe("es")
    const html = await response.text()
    expect(html).toContain('<html lang="es">')
    expect(html).toContain("Esperando el pago")
    expect(html).toContain("Referencia")
    expect(html).toContain("Pagas 10.50 USDC en Pay sandbox")
  })

  it("shows each state: processing with its hash, succeeded, failed with the reason in words, cancelled, expired", async () => {
    const processing = (await paymentFor(partner, merchantId)).paymentId
    await startProcessing(server, processing)
    let html = await (await page(processing)).text()
    expect(html).toContain('data-state="processing"')
    expect(html).toContain("Payment on its way")
    expect(html).not.toContain('id="pay"')

    const succeeded = (await paymentFor(partner, merchantId, "1050", { checkout })).paymentId
    await startProcessing(server, succeeded)
    const tx = randomTxHash()
    await succeed(server, succeeded, tx)
    html = await (await page(succeeded)).text()
    expect(html).toContain("Payment received")
    expect(html).toContain(tx)
    expect(html).toContain(`href="https://shop.example/thanks?order=1&amp;paymentId=${succeeded}"`)

    const failed = (await paymentFor(partner, merchantId, "1050", { checkout })).paymentId
    await startProcessing(server, failed)
    await fail(server, failed, "transaction_reverted")
    html = await (await page(failed)).text()
    expect(html).toContain("Payment failed")
    expect(html).toContain("The network rejected the transaction.")
    expect(html).toContain(`href="https://shop.example/sorry?paymentId=${failed}"`)

    const cancelled = (await paymentFor(partner, merchantId)).paymentId
    const cancel = await partner.request("POST", `/v1/payments/${cancelled}/cancel`, {
      headers: { "merchant-id": merchantId }
    })
    expect(cancel.status, cancel.text).toBe(200)
    html = await (await page(cancelled)).text()
    expect(html).toContain("Payment cancelled")

    const expired = (
      await paymentFor(partner, merchantId, "1050", {
        expiresAt: Math.floor(Date.now() / 1000) + 1
      })
    ).paymentId
    await new Promise((resolve) => setTimeout(resolve, 1500))
    html = await (await page(expired)).text()
    expect(html).toContain("Payment expired")
    expect(html).not.toContain("<svg")
  })

  /** POSTs JSON to a route under the payment's link, as the page's script does. */
  const post = async (
    paymentId: string,
    route: string,
    body: unknown,
    headers: Record<string, string> = {}
  ) => {
    const response = await fetch(`${server.baseUrl}/${paymentId}/${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    return { status: response.status, text, body: JSON.parse(text) }
  }

  it("lets the page pay as the engine's own wallet app: options for an address, then confirm", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, 10_500_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const offered = await post(paymentId, "options", { address: buyer.address })
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.options).toHaveLength(1)
    const option = offered.body.options[0]
    expect(option).toMatchObject({
      account: buyer.account,
      chainId: "eip155:31337",
      amount: "10.50 USDC",
      signer: buyer.address,
      collectDataUrl: null
    })
    expect(Object.keys(option).sort()).toEqual(
      [
        "account",
        "amount",
        "chainId",
        "collectDataUrl",
        "expiresAt",
        "id",
        "network",
        "signer",
        "transactions",
        "typedData"
      ].sort()
    )
    const signature = await signAction(buyer.key, {
      type: "walletRpc",
      data: { method: "eth_signTypedData_v4", params: [option.signer, option.typedData] }
    })
    // A signature of something else is refused, naming nothing but the field.
    const wrong = await post(paymentId, "confirm", {
      optionId: option.id,
      signature: `0x${"11".repeat(65)}`
    })
    expect(wrong.status, wrong.text).toBe(400)
    const confirmed = await post(paymentId, "confirm", { optionId: option.id, signature })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(["processing", "succeeded"]).toContain(confirmed.body.status)
    // The payment records the page as the buyer's wallet.
    const details = await partner.request("GET", `/v1/payments/${paymentId}`, {
      headers: { "merchant-id": merchantId }
    })
    expect(details.body.buyer).toMatchObject({
      accountCaip10: buyer.account,
      accountProviderName: "Checkout page"
    })
    const done = await fetch(`${server.baseUrl}/${paymentId}/status?maxPollMs=15000`)
    const final = (await done.json()) as { status: string; transactionHash?: string }
    const settled =
      final.status === "succeeded"
        ? final
        : ((await (
            await fetch(`${server.baseUrl}/${paymentId}/status?maxPollMs=15000`)
          ).json()) as typeof final)
    expect(settled.status).toBe("succeeded")
    expect(settled.transactionHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await usdcBalance(server, buyer.address)).toBe(0n)
  })

  it("says how much is needed when the account holds too little, and refuses bodies it does not know", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, 1_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const { body } = await post(paymentId, "options", { address: buyer.address })
    const option = body.options[0]
    const signature = await signAction(buyer.key, {
      type: "walletRpc",
      data: { method: "eth_signTypedData_v4", params: [option.signer, option.typedData] }
    })
    const refused = await post(paymentId, "confirm", { optionId: option.id, signature })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body).toMatchObject({
      code: "insufficient_balance",
      required: "10.50 USDC",
      balance: "0.001 USDC"
    })
    expect((await post(paymentId, "options", { address: "nope" })).status).toBe(400)
    expect((await post(paymentId, "confirm", {})).status).toBe(400)
    expect(
      (await post("pay_0000000000ZZZZZZZZZZ", "options", { address: buyer.address })).status
    ).toBe(404)
  })

  it("says why there is no way to pay for a merchant settled only on Base (not a network the server runs), in both languages", async () => {
    const { merchantId: baseMerchant, warnings } = await baseOnlyMerchant(partner)
    expect(warnings).toHaveLength(1)
    const { paymentId } = await paymentFor(partner, baseMerchant, "450")

    const english = await (await page(paymentId)).text()
    expect(english).toContain('<h2 id="no-options-heading">No way to pay</h2>')
    expect(english).toContain(
      '<p id="no-options-reason">This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here.</p>'
    )
    // No QR code, wallet button or "You pay" line for what cannot be paid; the status is still live.
    expect(english).not.toContain("<svg")
    expect(english).not.toContain('id="pay"')
    expect(english).toContain('<p class="token-amount" id="token-amount" hidden></p>')
    expect(english).toContain("Waiting for payment")

    const spanish = await (await page(paymentId, { "accept-language": "es" })).text()
    expect(spanish).toContain('<h2 id="no-options-heading">No hay forma de pagar</h2>')
    expect(spanish).toContain(
      "Este comercio solo recibe pagos en USDC en Base, que este servicio de pagos no admite, así que aquí no hay forma de pagarle."
    )

    // The page's wallet route says the same to the script, in the page's language.
    const buyer = newBuyer()
    const offered = await post(paymentId, "options", { address: buyer.address })
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body).toEqual({
      reason:
        "This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here.",
      options: []
    })
    const enEspanol = await post(
      paymentId,
      "options",
      { address: buyer.address },
      { "accept-language": "es-MX,es;q=0.9" }
    )
    expect(enEspanol.body.reason).toMatch(/^Este comercio solo recibe pagos en USDC en Base/)
  })

  it("answers a link that names no payment with a page that says so", async () => {
    const response = await page("pay_0000000000ZZZZZZZZZZ")
    expect(response.status).toBe(404)
    expect(await response.text()).toContain("Payment not found")
  })

  it("tells the page's script the status, held until it changes", async () => {
    const { paymentId } = await paymentFor(partner, merchantId)
    const first = await fetch(`${server.baseUrl}/${paymentId}/status`)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ status: "requires_action", isFinal: false })
    const heldPolls = () => server.runEngine(Effect.flatMap(PaymentEvents, (events) => events.held))
    const before = await heldPolls()
    const started = Date.now()
    const held = fetch(`${server.baseUrl}/${paymentId}/status?maxPollMs=10000`)
    // Held by the server (its held long-polls counter), not a fixed wait: the cancel then
    // reaches the poll only by waking it.
    await eventually(async () => expect(await heldPolls(), "long-polls held").toBe(before + 1), {
      timeoutMs: 4_000,
      intervalMs: 20
    })
    const cancel = await partner.request("POST", `/v1/payments/${paymentId}/cancel`, {
      headers: { "merchant-id": merchantId }
    })
    expect(cancel.status, cancel.text).toBe(200)
    const answer = await held
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await answer.json()).toEqual({ status: "cancelled", isFinal: true })
    const missing = await fetch(`${server.baseUrl}/pay_0000000000ZZZZZZZZZZ/status`)
    expect(missing.status).toBe(404)
  })
})
