/**
 * The complete test of docs/testing-your-integration.md, as written there (a
 * check in this file keeps the two the same): what a platform copies must pass.
 */
import { verifyWebhook } from "@pay/core/webhooks"
import { createTestEngine } from "@pay/testing"
import { expect, test } from "vitest"

test("an order is marked paid once, whatever the webhook replays", async () => {
  const orders = new Map<string, { paymentId: string; status: string }>()
  let secret = ""
  // Your webhook route, as your server runs it: verify, then act once.
  const onWebhook = async (request: Request) => {
    const body = await request.text()
    const event = (await verifyWebhook(body, request.headers, secret)) as {
      type: string
      data: { object: { paymentId: string; referenceId: string } }
    }
    const order = orders.get(event.data.object.referenceId)
    if (order && event.type === "payment.succeeded") order.status = "paid"
    return new Response(null, { status: 204 })
  }
  const engine = await createTestEngine({ webhooks: onWebhook })

  // The platform's setup, through the partner API as in production.
  const partner = await engine.partners.create({ name: "My platform" })
  const api = (method: string, path: string, body?: unknown, headers = {}) =>
    engine
      .fetch(
        new Request(`http://pay.test${path}`, {
          method,
          headers: {
            "api-key": partner.apiKey,
            "content-type": "application/json",
            "idempotency-key": crypto.randomUUID(),
            ...headers
          },
          body: body === undefined ? null : JSON.stringify(body)
        })
      )
      .then((r) => r.json())
  const { merchant } = await api("POST", "/v1/merchants", {
    merchantName: "Coffee",
    merchantEmail: "owner@coffee.example"
  })
  await api("POST", `/v1/merchants/${merchant.id}/settlements/crypto`, {
    settlements: [
      {
        asset: engine.network.usdc,
        destination: `${engine.network.chainId}:0x000000000000000000000000000000000000dEaD`
      }
    ]
  })
  ;({ secret } = await api("POST", "/v1/webhook-endpoints", { url: "https://shop.test/webhooks" }))
  const payment = await api(
    "POST",
    "/v1/payments",
    { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "450" } },
    { "merchant-id": merchant.id }
  )
  orders.set("ORDER-1", { paymentId: payment.paymentId, status: "open" })

  await engine.pay(payment.paymentId)

  expect(orders.get("ORDER-1")?.status).toBe("paid")
  const succeeded = engine.deliveries().filter((d) => d.type === "payment.succeeded")
  expect(succeeded).toHaveLength(1)
  // A replay of the same delivery: your handler must change nothing.
  const replay = succeeded[0]!
  await onWebhook(
    new Request("https://shop.test/webhooks", {
      method: "POST",
      headers: replay.headers,
      body: replay.body
    })
  )
  expect(orders.get("ORDER-1")?.status).toBe("paid")
  await engine.close()
})

test("the doc's complete test is this file's", async () => {
  const { readFile } = await import("node:fs/promises")
  const doc = await readFile(
    new URL("../../../docs/testing-your-integration.md", import.meta.url),
    "utf8"
  )
  const self = await readFile(new URL(import.meta.url), "utf8")
  const inDoc = doc.match(/## One complete test\n\n```ts\n([\s\S]*?)```/)?.[1]
  expect(inDoc).toBeDefined()
  expect(self).toContain(inDoc)
})
