/**
 * The test engine behind Node's own server, as a platform mounts the real one
 * (`toNodeHandler` of `@pay/adapter-node`): requests over loopback reach the
 * same engine the scripted buyer pays through.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { toNodeHandler } from "@pay/adapter-node"
import { expect, it } from "vitest"
import { createTestEngine } from "./index.js"

it("serves over node:http through the adapter; a payment made over HTTP is paid by the scripted buyer", async () => {
  const engine = await createTestEngine()
  const server = createServer(toNodeHandler(engine))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const partner = await engine.partners.create({ name: "Over HTTP" })
    const call = async (method: string, path: string, body?: unknown, headers = {}) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          "api-key": partner.apiKey,
          "content-type": "application/json",
          "idempotency-key": crypto.randomUUID(),
          ...headers
        },
        body: body === undefined ? null : JSON.stringify(body)
      })
      return { status: response.status, body: await response.json() }
    }
    const merchant = await call("POST", "/v1/merchants", {
      merchantName: "Loopback shop",
      merchantEmail: "owner@loopback.example"
    })
    expect(merchant.status).toBe(201)
    const settlements = await call(
      "POST",
      `/v1/merchants/${merchant.body.merchant.id}/settlements/crypto`,
      {
        settlements: [
          {
            asset: engine.network.usdc,
            destination: `${engine.network.chainId}:0x000000000000000000000000000000000000dEaD`
          }
        ]
      }
    )
    expect(settlements.status).toBe(201)
    const payment = await call(
      "POST",
      "/v1/payments",
      { referenceId: "HTTP-1", amount: { unit: "iso4217/USD", value: "300" } },
      { "merchant-id": merchant.body.merchant.id }
    )
    expect(payment.status).toBe(201)

    await engine.pay(payment.body.paymentId)

    const read = await call("GET", `/v1/payments/${payment.body.paymentId}`)
    expect(read.body).toMatchObject({ status: "succeeded", livemode: false })
  } finally {
    await new Promise((resolve) => server.close(resolve))
    await engine.close()
  }
})
