/**
 * End to end over loopback against the real standalone server (node:http, or
 * Bun.serve under `npm run test:bun`), with small rate limits: a partner key
 * gets exactly its burst, then 429 `rate_limited` with Retry-After; a
 * partner's keys together get the partner's budget (by default one key's),
 * other partners go on; a wrong key is still 401; after Retry-After the key is let in again;
 * the legacy route and a held long-poll count like any request. On the
 * gateway, a wallet app and a payment each have their own bucket. SQLite
 * only: several instances on PostgreSQL are rate-limits-instances.e2e.test.ts's.
 */
import { ApiKeys } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  client,
  createPartner,
  type E2eServer,
  expectError,
  newKey,
  startServer
} from "./e2e-support.js"
import { walletClient } from "./gateway-support.js"
import { sleep, usd } from "./payments-support.js"

/** The partner API: 1 a second, 3 at once; wallet apps: 4 at once; payments: 2 at once. */
const LIMITS = {
  perApiKey: { perSecond: 1, burst: 3 },
  perWalletApp: { perSecond: 1, burst: 4 },
  perPayment: { perSecond: 1, burst: 2 }
}

/** The 429 of a rate limit: its body, and a Retry-After of whole seconds, at least 1. */
const expectLimited = (response: ApiResponse, message: string): number => {
  expectError(response, 429, "rate_limited")
  expect(response.body.message).toMatch(message)
  const retryAfter = response.headers.get("retry-after")
  expect(retryAfter).toMatch(/^[1-9]\d*$/)
  return Number(retryAfter)
}

describe("rate limits", () => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  /** A request that waits out any 429 (as a well-behaved client does): setup only. */
  const admitted = async (send: () => Promise<ApiResponse>): Promise<ApiResponse> => {
    for (;;) {
      const response = await send()
      if (response.status !== 429) return response
      await sleep(Number(response.headers.get("retry-after")) * 1000)
    }
  }

  /** A partner of its own, with a merchant; its key is spent on that, then refilled. */
  const partnerWithMerchant = async (name: string) => {
    const { partnerId, apiKey } = await createPartner(server, name)
    const merchant = await admitted(() =>
      api.request("POST", "/v1/merchants", {
        key: apiKey,
        idempotencyKey: newKey(),
        body: { merchantName: name, merchantEmail: "billing@shop.example" }
      })
    )
    expect(merchant.status, merchant.text).toBe(201)
    return { partnerId, apiKey, merchantId: merchant.body.merchant.id as string }
  }

  const createPayment = async (key: string, merchantId: string) => {
    const created = await admitted(() =>
      api.request("POST", "/v1/payments", {
        key,
        idempotencyKey: newKey(),
        headers: { "merchant-id": merchantId },
        body: { referenceId: "order-1", amount: usd("1050") }
      })
    )
    expect(created.status, created.text).toBe(201)
    return created.body.paymentId as string
  }

  /** Waits until a bucket of 1 a second and this burst is full again. */
  const refilled = (burst: number) => sleep(burst * 1000 + 100)

  beforeAll(async () => {
    server = await startServer("sqlite", { rateLimits: LIMITS })
  })

  afterAll(async () => {
    await server?.stop()
  })

  describe("the partner API, by API key", () => {
    it("gives a key exactly its burst, then 429 with Retry-After; another partner's keys, and the key after the wait, go on", async () => {
      const a = await createPartner(server, "Limited A")
      const b = await createPartner(server, "Limited B")
      const list = (key: string) => api.get("/v1/merchants", { key })

      for (let i = 0; i < 3; i++) expect((await list(a.apiKey)).status).toBe(200)
      const refused = await list(a.apiKey)
      const retryAfter = expectLimited(refused, "Too many requests with this API key; retry in")
      expect(retryAfter).toBe(1)
      expect((await list(a.apiKey)).status).toBe(429)

      // Another partner's key is not held.
      for (let i = 0; i < 3; i++) expect((await list(b.apiKey)).status).toBe(200)

      // A wrong key is still told so: the limit comes after the key is known.
      for (let i = 0; i < 5; i++) {
        expectError(await list("pk_wrong_0123456789abcdef0123456789"), 401, "invalid_api_key")
      }
      expectError(await api.get("/v1/merchants", { key: null }), 401, "missing_api_key")

      await sleep(retryAfter * 1000)
      expect((await list(a.apiKey)).status).toBe(200)
      expect((await list(a.apiKey)).status).toBe(429)
    })

    it("gives two keys of one partner together the partner's budget (by default one key's); another partner goes on", async () => {
      const e = await createPartner(server, "Two keys E")
      const f = await createPartner(server, "Other F")
      // A second key of partner E: minting it must buy E nothing.
      const { secret: e2 } = await server.runEngine(
        Effect.flatMap(ApiKeys, (keys) =>
          keys.create({ kind: "partner", id: e.partnerId }, { name: "second" })
        )
      )
      const list = (key: string) => api.get("/v1/merchants", { key })

      // E's burst of 3 across its two keys: 2 with the first, 1 with the second.
      expect((await list(e.apiKey)).status).toBe(200)
      expect((await list(e2)).status).toBe(200)
      expect((await list(e.apiKey)).status).toBe(200)
      // Each key still has a token of its own; the partner's bucket is empty.
      const partnerMessage = "Too many requests with this partner's API keys together; retry in"
      const refused = expectLimited(await list(e2), partnerMessage)
      expect(refused).toBe(1)
      expectLimited(await list(e.apiKey), partnerMessage)

      // Partner F is not held by E's spending: its own burst, whole.
      for (let i = 0; i < 3; i++) expect((await list(f.apiKey)).status).toBe(200)
      expectLimited(await list(f.apiKey), "Too many requests with this API key")

      // A second later E has one token again, whichever key asks; not two.
      await sleep(refused * 1000)
      expect((await list(e2)).status).toBe(200)
      expectLimited(await list(e.apiKey), partnerMessage)
    })

    it("counts the legacy route (X-Api-Key) against the same key", async () => {
      const c = await partnerWithMerchant("Legacy C")
      await refilled(3)
      const legacy = () =>
        api.get(`/v1/merchants/${c.merchantId}/payments`, {
          key: null,
          headers: { "x-api-key": c.apiKey }
        })
      expect((await api.get("/v1/merchants", { key: c.apiKey })).status).toBe(200)
      expect((await legacy()).status).toBe(200)
      expect((await legacy()).status).toBe(200)
      expectLimited(await legacy(), "Too many requests with this API key")
      expect((await api.get("/v1/merchants", { key: c.apiKey })).status).toBe(429)
      // A wrong legacy key is 401 there too.
      const wrong = await api.get(`/v1/merchants/${c.merchantId}/payments`, {
        key: null,
        headers: { "x-api-key": "pk_wrong_0123456789abcdef0123456789" }
      })
      expectError(wrong, 401, "invalid_api_key")
    })

    it("counts a held long-poll once, however long it is held", async () => {
      const d = await partnerWithMerchant("Polling D")
      const paymentId = await createPayment(d.apiKey, d.merchantId)
      await refilled(3)
      const status = (maxPollMs: number) =>
        api.get(`/v1/payments/${paymentId}/status?maxPollMs=${maxPollMs}`, {
          key: d.apiKey,
          headers: { "merchant-id": d.merchantId }
        })
      const started = Date.now()
      const held = await status(1500)
      expect(held.status, held.text).toBe(200)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400)
      // Held 1.5 s, it took one token, and 1.5 came back (to the burst of 3): three more.
      for (let i = 0; i < 3; i++) expect((await status(0)).status).toBe(200)
      expectLimited(await status(0), "Too many requests with this API key")
    })
  })

  describe("the wallet gateway", () => {
    let owner: { readonly apiKey: string; readonly merchantId: string }
    let payments: Array<string>

    beforeAll(async () => {
      owner = await partnerWithMerchant("Gateway Owner")
      payments = []
      for (let i = 0; i < 7; i++) payments.push(await createPayment(owner.apiKey, owner.merchantId))
    }, 60_000)

    it("gives a wallet app its burst across payments, then 429; another app goes on; a wrong key is 401", async () => {
      const first = await walletClient(server)
      const second = await walletClient(server)
      const info = (wallet: typeof first, id: string) => wallet.api.get(`/v1/gateway/payment/${id}`)
      // Four payments, one request each: under every payment's own limit.
      for (const id of payments.slice(0, 4)) expect((await info(first, id)).status).toBe(200)
      const retryAfter = expectLimited(
        await info(first, payments[4]!),
        "Too many requests from this wallet app; retry in"
      )
      expect(retryAfter).toBe(1)
      expect((await info(second, payments[4]!)).status).toBe(200)
      // By its public App-Id too: the app is the same, so is its bucket.
      const byAppId = await first.api.get(`/v1/gateway/payment/${payments[4]}`, {
        key: null,
        headers: { "app-id": first.appId }
      })
      expectLimited(byAppId, "Too many requests from this wallet app")
      expectError(
        await first.api.get(`/v1/gateway/payment/${payments[4]}`, {
          key: "pk_wrong_0123456789abcdef0123456789"
        }),
        401,
        "invalid_api_key"
      )
      await sleep(retryAfter * 1000)
      expect((await info(first, payments[4]!)).status).toBe(200)
    })

    it("gives a payment its own burst, whichever apps ask, then 429; other payments go on", async () => {
      const first = await walletClient(server)
      const second = await walletClient(server)
      const id = payments[5]!
      const status = (wallet: typeof first, paymentId: string) =>
        wallet.api.get(`/v1/gateway/payment/${paymentId}/status`)
      expect((await status(first, id)).status).toBe(200)
      expect((await status(second, id)).status).toBe(200)
      const retryAfter = expectLimited(
        await status(first, id),
        "Too many requests about this payment; retry in"
      )
      expectLimited(await status(second, id), "Too many requests about this payment")
      // The payment's buyer link names it too: the same bucket.
      const link = encodeURIComponent(`${server.config.publicUrl}/${id}`)
      expectLimited(
        await first.api.get(`/v1/gateway/payment/${link}/status`),
        "Too many requests about this payment"
      )
      expect((await status(first, payments[6]!)).status).toBe(200)
      await sleep(retryAfter * 1000)
      expect((await status(second, id)).status).toBe(200)
    })

    it("counts the checkout page's requests under the link against the same payment's burst", async () => {
      const wallet = await walletClient(server)
      const id = await createPayment(owner.apiKey, owner.merchantId)
      const page = (path = "") =>
        api.request("GET", `/${id}${path}`, { key: null, headers: { accept: "text/html" } })
      const shown = await page()
      expect(shown.status, shown.text).toBe(200)
      expect(shown.headers.get("content-type")).toMatch(/^text\/html/)
      expect((await page("/status")).status).toBe(200)
      // The burst of two is spent: the page's own routes and the gateway's alike.
      const retryAfter = expectLimited(
        await page("/status"),
        "Too many requests about this payment"
      )
      expectLimited(
        await wallet.api.get(`/v1/gateway/payment/${id}/status`),
        "Too many requests about this payment"
      )
      await sleep(retryAfter * 1000)
      expect((await page()).status).toBe(200)
    })
  })
})
