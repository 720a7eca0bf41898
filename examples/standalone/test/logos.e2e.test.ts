/**
 * Merchant logos end to end over loopback, against the real standalone server
 * on either store and the real fetcher and checks (@pay/logos): a loopback
 * HTTPS server (a test CA) serves the images, which only a fetcher allowed to
 * reach private addresses gets to. What buyers see is the engine's frozen
 * copy: it does not change when the image behind the partner's URL does. A
 * refusal is the documented 400 with its code, kept under the
 * Idempotency-Key unless a retry may pass. The default fetcher
 * (PAY_FETCH_ALLOW_PRIVATE unset) refuses every loopback form without
 * connecting. Under `npm run test:bun` all of it runs on Bun.
 */
import { logoCaptureLayer } from "@pay/logos"
import { type LogoServer, plainImage, startLogoServer } from "@pay/logos/testing"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  type E2eServer,
  expectError,
  type Json,
  newKey,
  type PayClient,
  payClient,
  STORES,
  startServer
} from "./e2e-support.js"
import { walletClient } from "./gateway-support.js"
import { newPayment } from "./payments-support.js"

/** The engine's URL of a frozen logo (the e2e servers' PAY_PUBLIC_URL is http://127.0.0.1). */
const FROZEN_LOGO = /^http:\/\/127\.0\.0\.1\/logos\/([0-9a-f]{64}\.webp)$/

let logos: LogoServer

beforeAll(async () => {
  logos = await startLogoServer()
  logos.set("/ok.png", await plainImage(600, "png"), "image/png")
  logos.set("/small.png", await plainImage(499, "png"), "image/png")
  logos.set("/wide.jpg", await plainImage(600, "jpeg", "#3366cc", 660), "image/jpeg")
  // Says PNG, is not.
  logos.set("/fake.png", new TextEncoder().encode("<html>not an image</html>"), "image/png")
  logos.set("/huge.png", new Uint8Array(2 * 1024 * 1024 + 1), "image/png")
})

afterAll(async () => {
  await logos?.close()
})

const merchantBody = (iconUrl: string | null, name = "Logo Shop") => ({
  merchantName: name,
  merchantEmail: "logo@shop.example",
  iconUrl
})

describe.each(STORES)("%s: merchant logos, frozen", (store) => {
  let server: E2eServer
  let pay: PayClient
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(
      store,
      {},
      { logos: logoCaptureLayer({ allowPrivate: true, ca: logos.ca }) }
    )
    pay = payClient(server)
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** The image the engine serves at a frozen logo's URL (its path, on this server). */
  const served = async (iconUrl: string, query = "") => {
    const name = iconUrl.match(FROZEN_LOGO)?.[1]
    expect(name, iconUrl).toBeDefined()
    const response = await fetch(`${server.baseUrl}/logos/${name}${query}`)
    return { response, bytes: Buffer.from(await response.arrayBuffer()) }
  }

  it("the buyer's URL keeps serving the same image after the image behind the partner's URL changes", async () => {
    const path = `/swap-${store}.png`
    logos.set(path, await plainImage(800, "png", "#112233"), "image/png")
    const created = await pay.merchants.create(merchantBody(`${logos.origin}${path}`))
    const first = created.merchant.iconUrl!
    expect(first).toMatch(FROZEN_LOGO)
    const before = await served(first)
    expect(before.response.status).toBe(200)
    expect(before.response.headers.get("content-type")).toBe("image/webp")
    expect(before.response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(before.response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(await sharp(before.bytes).metadata()).toMatchObject({
      format: "webp",
      width: 800,
      height: 800
    })
    const small = await served(first, "?size=64")
    expect(await sharp(small.bytes).metadata()).toMatchObject({ width: 64, height: 64 })

    // Another image behind the same URL: nothing buyers see changes.
    logos.set(path, await plainImage(900, "png", "#ddeeff"), "image/png")
    const { id } = created.merchant
    expect((await pay.merchants.get(id)).merchant.iconUrl).toBe(first)
    const after = await served(first)
    expect(after.bytes.equals(before.bytes)).toBe(true)
    expect(logos.requests(path)).toBe(1)

    // A PATCH with the same URL takes the new image; the old snapshot stays served.
    const patched = await pay.merchants.update(id, { iconUrl: `${logos.origin}${path}` })
    const second = patched.merchant.iconUrl!
    expect(second).toMatch(FROZEN_LOGO)
    expect(second).not.toBe(first)
    expect((await sharp((await served(second)).bytes).metadata()).width).toBe(900)
    expect((await served(first)).bytes.equals(before.bytes)).toBe(true)

    // null removes the logo from the merchant; the snapshot's URL still answers.
    expect((await pay.merchants.update(id, { iconUrl: null })).merchant.iconUrl).toBeNull()
    expect((await served(second)).response.status).toBe(200)
  })

  it("payment views, payment lists and the gateway's payment info show the engine's URL", async () => {
    const { merchant } = await pay.merchants.create(merchantBody(`${logos.origin}/ok.png`))
    expect(merchant.iconUrl).toMatch(FROZEN_LOGO)
    const payment = await newPayment(pay, merchant.id, { referenceId: "logo-order" })
    expect((await pay.payments.get(payment.paymentId)).merchant.iconUrl).toBe(merchant.iconUrl)
    const listed = await api.get(`/v1/payments?merchantId=${merchant.id}`)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.map((p: Json) => p.merchant.iconUrl)).toEqual([merchant.iconUrl])
    const wallet = await walletClient(server)
    const info = await wallet.api.get(`/v1/gateway/payment/${payment.paymentId}`)
    expect(info.status, info.text).toBe(200)
    expect(info.body.merchant).toEqual({ name: "Logo Shop", iconUrl: merchant.iconUrl })
  })

  it("a refused logo is kept under its Idempotency-Key: the same key answers the same 400 without fetching again", async () => {
    const path = `/small-${store}.png`
    logos.set(path, await plainImage(499, "png"), "image/png")
    const key = newKey()
    const first = await api.request("POST", "/v1/merchants", {
      body: merchantBody(`${logos.origin}${path}`),
      idempotencyKey: key
    })
    expectError(first, 400, "params_validation", ["iconUrl"])
    expect(first.body.issues).toEqual([
      { field: "iconUrl", code: "icon_too_small", message: expect.stringMatching(/500/) }
    ])
    const again = await api.request("POST", "/v1/merchants", {
      body: merchantBody(`${logos.origin}${path}`),
      idempotencyKey: key
    })
    expect([again.status, again.text]).toEqual([first.status, first.text])
    expect(logos.requests(path)).toBe(1)
  })

  it("an unreachable logo is not kept: the same key succeeds once the image is there", async () => {
    const path = `/later-${store}.png`
    const key = newKey()
    const body = merchantBody(`${logos.origin}${path}`)
    const refused = await api.request("POST", "/v1/merchants", { body, idempotencyKey: key })
    expectError(refused, 400, "params_validation", ["iconUrl"])
    expect(refused.body.issues[0].code).toBe("icon_unreachable")
    expect(refused.body.issues[0].message).toContain("404")

    logos.set(path, await plainImage(512, "webp"), "image/webp")
    const created = await api.request("POST", "/v1/merchants", { body, idempotencyKey: key })
    expect(created.status, created.text).toBe(201)
    expect(created.body.merchant.iconUrl).toMatch(FROZEN_LOGO)
    // A replay answers the merchant again and fetches nothing.
    const replay = await api.request("POST", "/v1/merchants", { body, idempotencyKey: key })
    expect(replay.text).toBe(created.text)
    expect(logos.requests(path)).toBe(2)
  })
})

describe("the logo rules over HTTP", () => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(
      "sqlite",
      {},
      { logos: logoCaptureLayer({ allowPrivate: true, ca: logos.ca }) }
    )
  })

  afterAll(async () => {
    await server?.stop()
  })

  it.each([
    ["/small.png", "icon_too_small"],
    ["/wide.jpg", "icon_not_square"],
    ["/fake.png", "icon_unsupported_format"],
    ["/huge.png", "icon_too_large"],
    ["/missing.png", "icon_unreachable"]
  ])("%s: 400 params_validation, iconUrl %s; no merchant written", async (path, code) => {
    const name = `Refused ${path}`
    const response = await api.request("POST", "/v1/merchants", {
      body: merchantBody(`${logos.origin}${path}`, name),
      idempotencyKey: newKey()
    })
    expectError(response, 400, "params_validation", ["iconUrl"])
    expect(response.body.issues.map((i: Json) => i.code)).toEqual([code])
    expect(response.body.message).toBe(`iconUrl: ${response.body.issues[0].message}`)
    const listed = await api.get(`/v1/merchants?search=${encodeURIComponent(name)}`)
    expect(listed.body.totalCount).toBe(0)
  })

  it("PATCH with a refused logo changes nothing, not even the other fields", async () => {
    const created = await api.request("POST", "/v1/merchants", {
      body: merchantBody(`${logos.origin}/ok.png`, "Kept"),
      idempotencyKey: newKey()
    })
    const { id, iconUrl } = created.body.merchant
    const refused = await api.request("PATCH", `/v1/merchants/${id}`, {
      body: { merchantName: "Not applied", iconUrl: `${logos.origin}/wide.jpg` }
    })
    expectError(refused, 400, "params_validation", ["iconUrl"])
    const now = await api.get(`/v1/merchants/${id}`)
    expect([now.body.merchant.name, now.body.merchant.iconUrl]).toEqual(["Kept", iconUrl])
  })
})

describe("the default fetcher (PAY_FETCH_ALLOW_PRIVATE unset): public internet only", () => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    // The server as configured from the environment: no test CA, no private addresses.
    server = await startServer("sqlite")
    expect(server.config.fetchAllowPrivate).toBe(false)
  })

  afterAll(async () => {
    await server?.stop()
  })

  it.each([
    ["127.0.0.1", (port: number) => `https://127.0.0.1:${port}/ok.png`],
    ["[::1]", (port: number) => `https://[::1]:${port}/ok.png`],
    ["localhost", (port: number) => `https://localhost:${port}/ok.png`],
    ["[::ffff:127.0.0.1]", (port: number) => `https://[::ffff:127.0.0.1]:${port}/ok.png`],
    ["[::ffff:7f00:1]", (port: number) => `https://[::ffff:7f00:1]:${port}/ok.png`]
  ])(
    "%s: 400 icon_address_not_allowed, and the server that would answer is never reached",
    async (_, urlOf) => {
      const reached = logos.requests("/ok.png")
      const response = await api.request("POST", "/v1/merchants", {
        body: merchantBody(urlOf(logos.port)),
        idempotencyKey: newKey()
      })
      expectError(response, 400, "params_validation", ["iconUrl"])
      expect(response.body.issues.map((i: Json) => i.code)).toEqual(["icon_address_not_allowed"])
      expect(response.body.issues[0].message).toMatch(/loopback/)
      expect(logos.requests("/ok.png")).toBe(reached)
    }
  )
})
