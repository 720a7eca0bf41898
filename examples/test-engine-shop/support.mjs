/**
 * The shop on the test engine, for its tests (shop.test.mjs under vitest,
 * shop.node-test.mjs under node:test): the shop's Express app listening on a
 * loopback port, and every webhook the engine sends forwarded to that app's
 * route over HTTP, as a real delivery would arrive, signature and all.
 */
import { createTestEngine } from "@pay/testing"
import { createShop, registerShop } from "./shop.mjs"

/** Where the merchant's USDC is settled: any address will do on the scripted chain. */
const MERCHANT_WALLET = "0x00000000000000000000000000000000000000D0"

/** The engine's deliveries go here; never connected to: the test engine hands them to `forward`. */
const WEBHOOK_URL = "https://shop.test/webhooks"

/** Request headers fetch sets itself from the body and the target. */
const OWN_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding"])

export const openShop = async () => {
  /** @type {string | undefined} */
  let shopOrigin
  /** @param {string} path @param {{ headers: Readonly<Record<string, string>> | Headers, body: string }} request */
  const post = (path, { headers, body }) => {
    if (shopOrigin === undefined) throw new Error("a webhook came before the shop listened")
    const kept = new Headers(headers)
    for (const name of OWN_HEADERS) kept.delete(name)
    return fetch(`${shopOrigin}${path}`, { method: "POST", headers: kept, body })
  }
  const engine = await createTestEngine({
    // The delivery's path on the shop's own origin: the route a real delivery reaches.
    webhooks: async (request) =>
      post(new URL(request.url).pathname, { headers: request.headers, body: await request.text() })
  })
  try {
    const registration = await registerShop(engine, {
      webhookUrl: WEBHOOK_URL,
      settlement: {
        asset: engine.network.usdc,
        destination: `${engine.network.chainId}:${MERCHANT_WALLET}`
      }
    })
    const shop = createShop({ engine, ...registration })
    const server = shop.app.listen(0, "127.0.0.1")
    await new Promise((resolve, reject) => {
      server.once("listening", resolve)
      server.once("error", reject)
    })
    const address = /** @type {import("node:net").AddressInfo} */ (server.address())
    shopOrigin = `http://127.0.0.1:${address.port}`

    /**
     * A call to the shop's own API, as its storefront makes it.
     * @param {string} method @param {string} path @param {unknown} [body]
     * @returns {Promise<{ status: number, body: any }>}
     */
    const call = async (method, path, body) => {
      const response = await fetch(`${shopOrigin}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      })
      return { status: response.status, body: await response.json() }
    }

    /** Places an order of `amountCents`; the order as the shop answered it. */
    const placeOrder = async (amountCents = 1250) => {
      const placed = await call("POST", "/orders", { amountCents })
      if (placed.status !== 201) throw new Error(`order refused: ${JSON.stringify(placed.body)}`)
      return placed.body.order
    }

    /**
     * Sends a delivery the engine made to the shop's webhook route again, exactly as it was.
     * @param {{ url: string, headers: Readonly<Record<string, string>>, body: string }} delivery
     */
    const redeliver = async (delivery) => {
      const response = await post(new URL(delivery.url).pathname, delivery)
      return { status: response.status, body: await response.json() }
    }

    return {
      engine,
      shop,
      call,
      placeOrder,
      redeliver,
      close: async () => {
        await new Promise((resolve) => server.close(resolve))
        await engine.close()
      }
    }
  } catch (error) {
    await engine.close()
    throw error
  }
}
