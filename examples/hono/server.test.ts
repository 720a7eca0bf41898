/**
 * The Hono example (engine.fetch on @hono/node-server): the app's own routes and the engine under /pay side
 * by side, a whole payment taken on the sandbox chain through the mount.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, freePort, takePayment } from "../embed-support.js"
import { startShop } from "./server.js"

const dir = mkdtempSync(join(tmpdir(), "pay-hono-"))
let shop: Awaited<ReturnType<typeof startShop>>
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

describe("the Hono example", () => {
  it("serves the app's routes and the engine's under /pay, each untouched by the other", async () => {
    expect(shop.publicUrl).toBe(`${base}/pay`)
    expect(await (await fetch(`${base}/`)).text()).toBe("My shop\n")
    // The engine's routes only under /pay.
    expect((await fetch(`${base}/pay/health`)).status).toBe(200)
    expect((await fetch(`${base}/health`)).status).toBe(404)
    const document = await (await fetch(`${base}/pay/openapi.json`)).json()
    expect(document.servers).toEqual([{ url: "/pay" }])
    expect(
      (await call(`${base}/pay/v1/merchants`, "pk_wrong_key_but_long_enough_000")).status
    ).toBe(401)
  })

  it("takes a payment on the sandbox chain through the mount", async () => {
    const taken = await takePayment({
      engineUrl: shop.publicUrl,
      partnerKey: shop.keys!.partner,
      walletKey: shop.keys!.wallet,
      asset: shop.sandbox.chain.token.asset
    })
    expect(taken.gatewayUrl).toBe(`${base}/pay/${taken.paymentId}`)
    expect(taken.finalStatus, taken.walletLog.join("\n")).toBe("succeeded")
  }, 60_000)
})
