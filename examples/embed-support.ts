/**
 * For the embedding examples' tests: a free loopback port (the examples need
 * theirs before they start, for their public URL), the suite every mounted
 * example passes (`describeMountedShop`), and a whole payment taken
 * through a mounted engine on the sandbox chain, the way a platform and a
 * wallet would: merchant, settlement destination, payment, the sandbox
 * wallet paying the buyer link, the status long-polled to `succeeded`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { payWithWallet } from "@pay/sandbox"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field by the tests
export type Json = any

export const call = async (
  url: string,
  apiKey: string,
  init: { body?: unknown; headers?: Record<string, string> } = {}
): Promise<{ status: number; body: Json }> => {
  const response = await fetch(url, {
    method: init.body === undefined ? "GET" : "POST",
    headers: {
      "api-key": apiKey,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

export interface TakenPayment {
  readonly paymentId: string
  readonly gatewayUrl: string
  readonly merchantId: string
  /** What the create answer said of the payment's mode (false on the sandbox). */
  readonly livemode: boolean
  /** The status a long-poll answered after the wallet paid. */
  readonly finalStatus: string
  readonly walletLog: ReadonlyArray<string>
}

/** A payment of 4.50 USD, from creation to `succeeded`, through the engine at `engineUrl`. */
export const takePayment = async (options: {
  readonly engineUrl: string
  readonly partnerKey: string
  readonly walletKey: string
  /** The sandbox token's CAIP-19 asset. */
  readonly asset: string
}): Promise<TakenPayment> => {
  const { engineUrl, partnerKey } = options
  const merchant = await call(`${engineUrl}/v1/merchants`, partnerKey, {
    headers: { "idempotency-key": `m-${Date.now()}` },
    body: { merchantName: "Coffee", merchantEmail: "owner@coffee.example" }
  })
  if (merchant.status !== 201)
    throw new Error(`merchant: ${merchant.status} ${JSON.stringify(merchant.body)}`)
  const merchantId: string = merchant.body.merchant.id
  const settlement = await call(
    `${engineUrl}/v1/merchants/${merchantId}/settlements/crypto`,
    partnerKey,
    {
      headers: { "idempotency-key": `s-${merchantId}` },
      body: {
        settlements: [
          {
            asset: options.asset,
            destination: `${options.asset.split("/")[0]}:0x000000000000000000000000000000000000dEaD`
          }
        ]
      }
    }
  )
  if (settlement.status >= 300) {
    throw new Error(`settlement: ${settlement.status} ${JSON.stringify(settlement.body)}`)
  }
  const payment = await call(`${engineUrl}/v1/payments`, partnerKey, {
    headers: { "merchant-id": merchantId },
    body: { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "450" } }
  })
  if (payment.status !== 201)
    throw new Error(`payment: ${payment.status} ${JSON.stringify(payment.body)}`)
  const walletLog: Array<string> = []
  await payWithWallet({
    engineUrl,
    payment: payment.body.gatewayUrl,
    apiKey: options.walletKey,
    faucet: 100_000_000n,
    log: (line) => walletLog.push(line)
  })
  const status = await call(
    `${engineUrl}/v1/payments/${payment.body.paymentId}/status?maxPollMs=10000`,
    partnerKey,
    { headers: { "merchant-id": merchantId } }
  )
  return {
    paymentId: payment.body.paymentId,
    gatewayUrl: payment.body.gatewayUrl,
    merchantId,
    livemode: payment.body.livemode,
    finalStatus: status.body.status,
    walletLog
  }
}

/** What the Express and Hono examples' `startShop` give. */
export interface Shop {
  readonly publicUrl: string
  readonly sandbox: { readonly chain: { readonly token: { readonly asset: string } } }
  readonly keys: { readonly partner: string; readonly wallet: string } | undefined
  readonly close: () => Promise<void>
}

/**
 * The tests every mounted example passes: its own page and the engine's routes under /pay
 * side by side, and a whole payment on the sandbox chain through the mount. `more` adds the
 * example's own, given the shop and its base URL.
 */
export const describeMountedShop = (
  name: string,
  startShop: (options: { readonly database: string; readonly port: number }) => Promise<Shop>,
  more?: (running: () => { readonly shop: Shop; readonly base: string }) => void
) =>
  describe(name, () => {
    const dir = mkdtempSync(join(tmpdir(), "pay-shop-"))
    let shop: Shop
    let base: string
    beforeAll(async () => {
      const port = await freePort()
      base = `http://127.0.0.1:${port}`
      shop = await startShop({ database: join(dir, "shop.sqlite"), port })
    }, 60_000)
    afterAll(async () => {
      await shop?.close()
      rmSync(dir, { recursive: true, force: true })
    })

    it("serves the app's page and the engine's routes under /pay, each untouched by the other", async () => {
      expect(shop.publicUrl).toBe(`${base}/pay`)
      expect(await (await fetch(`${base}/`)).text()).toBe("My shop\n")
      // The engine's routes only under /pay.
      expect((await fetch(`${base}/pay/health`)).status).toBe(200)
      expect((await fetch(`${base}/health`)).status).toBe(404)
      const document = await (await fetch(`${base}/pay/openapi.json`)).json()
      expect(document.servers).toEqual([{ url: "/pay" }])
      const wrongKey = await call(`${base}/pay/v1/merchants`, "pk_wrong_key_but_long_enough_000")
      expect(wrongKey.status).toBe(401)
    })

    it("takes a payment on the sandbox chain through the mount", async () => {
      const taken = await takePayment({
        engineUrl: shop.publicUrl,
        partnerKey: shop.keys!.partner,
        walletKey: shop.keys!.wallet,
        asset: shop.sandbox.chain.token.asset
      })
      expect(taken.gatewayUrl).toBe(`${base}/pay/${taken.paymentId}`)
      // The sandbox's engine options run the engine in test mode.
      expect(taken.livemode).toBe(false)
      expect(taken.finalStatus, taken.walletLog.join("\n")).toBe("succeeded")
    }, 60_000)

    more?.(() => ({ shop, base }))
  })
