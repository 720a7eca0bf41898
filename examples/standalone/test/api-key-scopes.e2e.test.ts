/**
 * API keys with least privilege end to end over loopback against the real
 * standalone server, on either store (issue 40): a key's scopes bound the
 * routes it opens (403 `insufficient_scope` naming the scope needed), and a
 * key never makes or rotates into a key with more scopes or a later end than
 * its own. The bootstrap key holds every scope; a key made without `scopes`
 * gets its creator's; a rotation keeps the rotated key's expiry and scopes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  newKey,
  STORES,
  startServer
} from "./e2e-support.js"

const EVERY_SCOPE = ["read", "payments", "merchants", "webhooks", "refunds", "keys"]

describe.each(STORES)("%s: API key scopes", (store) => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
  })

  afterAll(async () => {
    await server?.stop()
  })

  const create = (body: Json, key: string) =>
    api.request("POST", "/v1/api-keys", { body, idempotencyKey: newKey(), key })
  const rotate = (id: string, body: Json, key: string) =>
    api.request("POST", `/v1/api-keys/${id}/rotate`, { body, idempotencyKey: newKey(), key })
  const listKeys = (key: string) => api.get("/v1/api-keys", { key })
  /** A key of `apiKey`'s partner, made with `apiKey`: its secret and view. */
  const made = async (body: Json, apiKey: string) => {
    const answer = await create(body, apiKey)
    expect(answer.status, answer.text).toBe(201)
    return answer.body as { id: string; secret: string; scopes: Array<string>; expiresAt: string }
  }
  const merchantOf = async (apiKey: string) => {
    const created = await api.request("POST", "/v1/merchants", {
      key: apiKey,
      idempotencyKey: newKey(),
      body: { merchantName: "Scoped shop", merchantEmail: "s@shop.example" }
    })
    expect(created.status, created.text).toBe(201)
    return created.body.merchant.id as string
  }

  it("gives the bootstrap key every scope, shown in the key views", async () => {
    const { apiKey } = await createPartner(server, "Bootstrap scopes")
    const listed = await listKeys(apiKey)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.map((k: { scopes: unknown }) => k.scopes)).toEqual([EVERY_SCOPE])
  })

  it("refuses a read key on POST /v1/payments with 403 naming payments; it still reads", async () => {
    const { apiKey } = await createPartner(server, "Read only")
    const merchantId = await merchantOf(apiKey)
    const reader = await made({ name: "dashboard", scopes: ["read"] }, apiKey)
    expect(reader.scopes).toEqual(["read"])
    const refused = await api.request("POST", "/v1/payments", {
      key: reader.secret,
      idempotencyKey: newKey(),
      headers: { "merchant-id": merchantId },
      body: { referenceId: "order-1", amount: { unit: "iso4217/USD", value: "1050" } }
    })
    expectError(refused, 403, "insufficient_scope")
    expect(refused.body.message).toContain("payments scope")
    expect(refused.body.message).toContain("POST /v1/payments")
    expect((await api.get("/v1/payments", { key: reader.secret })).status).toBe(200)
    expect((await api.get(`/v1/merchants/${merchantId}`, { key: reader.secret })).status).toBe(200)
    // Nor a merchant, a webhook endpoint, a refund.
    const merchant = await api.request("POST", "/v1/merchants", {
      key: reader.secret,
      idempotencyKey: newKey(),
      body: { merchantName: "No", merchantEmail: "n@shop.example" }
    })
    expectError(merchant, 403, "insufficient_scope")
    expect(merchant.body.message).toContain("merchants scope")
  })

  it("lets a payments key create a payment and nothing it lacks", async () => {
    const { apiKey } = await createPartner(server, "Payments only")
    const merchantId = await merchantOf(apiKey)
    const payer = await made({ scopes: ["payments"] }, apiKey)
    const payment = await api.request("POST", "/v1/payments", {
      key: payer.secret,
      idempotencyKey: newKey(),
      headers: { "merchant-id": merchantId },
      body: { referenceId: "order-2", amount: { unit: "iso4217/USD", value: "1050" } }
    })
    expect(payment.status, payment.text).toBe(201)
    const read = await api.get("/v1/payments", { key: payer.secret })
    expectError(read, 403, "insufficient_scope")
    expect(read.body.message).toContain("read scope")
  })

  it("refuses scopes that are unknown, none or repeated, naming the field", async () => {
    const { apiKey } = await createPartner(server, "Bad scopes")
    for (const scopes of [["read", "admin"], [], ["read", "read"], "read"]) {
      const answer = await create({ scopes } as Json, apiKey)
      expectError(answer, 400, "params_validation", ["scopes"])
      expect(answer.body.message).toContain("scopes")
    }
  })

  it("a key without keys cannot mint; a read,keys key cannot mint a payments key", async () => {
    const { apiKey } = await createPartner(server, "No keys scope")
    const noKeys = await made({ scopes: ["read", "payments"] }, apiKey)
    const refused = await create({ scopes: ["read"] }, noKeys.secret)
    expectError(refused, 403, "insufficient_scope")
    expect(refused.body.message).toContain("keys scope")

    const keyManager = await made({ scopes: ["read", "keys"] }, apiKey)
    const escalation = await create({ scopes: ["payments"] }, keyManager.secret)
    expectError(escalation, 403, "insufficient_scope")
    expect(escalation.body.message).toContain("payments")
    // Without scopes, a key gets its creator's; a subset is fine.
    expect((await made({}, keyManager.secret)).scopes).toEqual(["read", "keys"])
    expect((await made({ scopes: ["read"] }, keyManager.secret)).scopes).toEqual(["read"])
    // Nor can it rotate the all-scopes key into a new one of every scope.
    const listed = await listKeys(apiKey)
    const bootstrap = listed.body.data.at(-1).id as string
    expectError(await rotate(bootstrap, {}, keyManager.secret), 403, "insufficient_scope")
  })

  it("a short-lived key cannot mint a never-expiring or later-expiring key", async () => {
    const { apiKey } = await createPartner(server, "Short lived")
    const ends = new Date(Date.now() + 120_000)
    const brief = await made({ scopes: ["read", "keys"], expiresAt: ends.toISOString() }, apiKey)
    const never = await create({ scopes: ["read"] }, brief.secret)
    expectError(never, 403, "insufficient_scope")
    expect(never.body.message).toContain(ends.toISOString())
    const later = new Date(ends.getTime() + 60_000).toISOString()
    expectError(
      await create({ scopes: ["read"], expiresAt: later }, brief.secret),
      403,
      "insufficient_scope"
    )
    const sooner = new Date(ends.getTime() - 60_000).toISOString()
    const ok = await made({ expiresAt: sooner }, brief.secret)
    expect(ok.expiresAt).toBe(sooner)
  })

  it("rotation keeps the rotated key's expiry and scopes", async () => {
    const { apiKey } = await createPartner(server, "Rotating")
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const key = await made({ name: "ci", scopes: ["payments", "keys"], expiresAt }, apiKey)
    const rotated = await rotate(key.id, { overlapSeconds: 0 }, key.secret)
    expect(rotated.status, rotated.text).toBe(201)
    expect(rotated.body.expiresAt).toBe(expiresAt)
    expect(rotated.body.scopes).toEqual(["payments", "keys"])
    expect(rotated.body.previousKey.scopes).toEqual(["payments", "keys"])
    // The new key is held to the same scopes.
    expectError(
      await api.get("/v1/api-keys", { key: rotated.body.secret }),
      403,
      "insufficient_scope"
    )
  })
})
