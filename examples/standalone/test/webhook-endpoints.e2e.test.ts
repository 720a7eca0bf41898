/**
 * Webhook endpoints end to end over loopback against the real standalone
 * server, on either store: registering one (its secret shown once, sealed in
 * the database), the URL rules (https://, public addresses; the default
 * server refuses loopback in every form), listing, changing, deleting, and
 * another partner seeing none of it. Deliveries: webhook-delivery.e2e.test.ts.
 */
import {
  EngineSecret,
  WEBHOOK_SECRET_PURPOSE,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "@pay/core"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  newKey,
  payClient,
  STORES,
  startServer
} from "./e2e-support.js"

const FIELDS = [
  "apiVersion",
  "createdAt",
  "description",
  "disabledReason",
  "events",
  "id",
  "merchantId",
  "status",
  "url"
].sort()

describe.each(STORES)("%s: webhook endpoints", (store) => {
  let server: E2eServer
  let otherKey: string
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    // No background work: the URL rules need public addresses, and with no delivery worker
    // the engine never connects to one (deliveries: webhook-delivery.e2e, over loopback).
    server = await startServer(store, {}, { workers: false })
    otherKey = (await createPartner(server, "Other")).apiKey
  })

  afterAll(async () => {
    await server?.stop()
  })

  const register = (body: Json, idempotencyKey = newKey(), key?: string) =>
    api.request("POST", "/v1/webhook-endpoints", {
      body,
      idempotencyKey,
      ...(key === undefined ? {} : { key })
    })

  it("registers one: 201 with the secret once, sealed in the database; a replay answers the same", async () => {
    const merchant = await createMerchant(payClient(server), "Hooked")
    const key = newKey()
    const body = {
      url: "https://93.184.215.14/hooks/pay",
      events: ["payment.succeeded", "payment.settled"],
      merchantId: merchant.id,
      description: "Orders",
      apiVersion: "2026-02-19.preview"
    }
    const created = await register(body, key)
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual([...FIELDS, "secret"].sort())
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^whep_[0-9A-Za-z]{20}$/),
      ...body,
      status: "enabled",
      disabledReason: null
    })
    const secret: string = created.body.secret
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect((await register(body, key)).text).toBe(created.text)

    // Kept sealed, never in clear: the engine's secret opens it.
    const stored = await server.runEngine(
      Effect.flatMap(WebhookEndpointStore, (s) => s.find(created.body.id as WebhookEndpointId))
    )
    const sealed = Option.getOrThrow(stored).secret
    expect(sealed).not.toContain(secret.slice(6))
    expect(
      await server.runEngine(
        Effect.flatMap(EngineSecret, (s) => s.open(WEBHOOK_SECRET_PURPOSE, sealed))
      )
    ).toBe(secret)

    // Read back without the secret.
    const fetched = await api.get(`/v1/webhook-endpoints/${created.body.id}`)
    const { secret: _, ...view } = created.body
    expect(fetched.body).toEqual(view)
    expect((await api.get("/v1/webhook-endpoints")).body.data).toContainEqual(view)
  })

  it("defaults: every event type, all the partner's merchants, the partner's API version", async () => {
    const created = await register({ url: "https://93.184.215.14/all" })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      events: null,
      merchantId: null,
      description: null,
      apiVersion: "2026-02-18"
    })
  })

  it.each([
    ["http://93.184.215.14/hooks", /https:\/\//],
    ["https://127.0.0.1/hooks", /loopback/],
    ["https://[::1]/hooks", /loopback/],
    ["https://localhost/hooks", /loopback/],
    ["https://[::ffff:127.0.0.1]/hooks", /loopback/],
    ["https://10.1.2.3/hooks", /private/],
    ["https://169.254.169.254/latest", /link-local|metadata/],
    ["https://user:pw@93.184.215.14/hooks", /credentials/]
  ])("%s: 400 invalid_webhook_url naming why; nothing registered", async (url, why) => {
    const before = (await api.get("/v1/webhook-endpoints")).body.data.length
    const refused = await register({ url })
    expectError(refused, 400, "invalid_webhook_url", ["url"])
    expect(refused.body.issues[0].message).toMatch(why)
    expect((await api.get("/v1/webhook-endpoints")).body.data).toHaveLength(before)
  })

  it("refuses unknown event types, an empty list, another partner's merchant and an unknown version", async () => {
    const url = "https://93.184.215.14/x"
    expectError(await register({ url, events: ["payment.paid"] }), 400, "params_validation", [
      "events.0"
    ])
    expectError(await register({ url, events: [] }), 400, "params_validation", ["events"])
    const theirs = await createMerchant(payClient(server, otherKey), "Theirs")
    expectError(await register({ url, merchantId: theirs.id }), 400, "params_validation", [
      "merchantId"
    ])
    expectError(await register({ url, apiVersion: "2020-01-01" }), 400, "params_validation", [
      "apiVersion"
    ])
    expectError(
      await api.request("POST", "/v1/webhook-endpoints", { body: { url } }),
      400,
      "missing_idempotency_key"
    )
  })

  it("rotates the secret: the new one once, the previous kept signing for the overlap, both sealed", async () => {
    const created = (await register({ url: "https://93.184.215.14/rotate" })).body
    const path = `/v1/webhook-endpoints/${created.id}/rotate-secret`
    const key = newKey()
    const before = Date.now()
    const rotated = await api.request("POST", path, {
      body: { expireCurrentInSeconds: 3600 },
      idempotencyKey: key
    })
    expect(rotated.status, rotated.text).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(created.secret)
    const until = Date.parse(rotated.body.previousSecretExpiresAt)
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000 - 1000)
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000)
    // A replay answers the same secret, and rotates nothing more.
    const replay = await api.request("POST", path, {
      body: { expireCurrentInSeconds: 3600 },
      idempotencyKey: key
    })
    expect(replay.text).toBe(rotated.text)
    const stored = Option.getOrThrow(
      await server.runEngine(
        Effect.flatMap(WebhookEndpointStore, (s) => s.find(created.id as WebhookEndpointId))
      )
    )
    const open = (sealed: string) =>
      server.runEngine(Effect.flatMap(EngineSecret, (s) => s.open(WEBHOOK_SECRET_PURPOSE, sealed)))
    expect(await open(stored.secret)).toBe(rotated.body.secret)
    expect(await open(stored.previousSecret!)).toBe(created.secret)

    // At once: no previous secret.
    const now = await api.request("POST", path, {
      body: { expireCurrentInSeconds: 0 },
      idempotencyKey: newKey()
    })
    expect(now.body.previousSecretExpiresAt).toBeNull()
    expectError(
      await api.request("POST", path, {
        body: { expireCurrentInSeconds: 700_000 },
        idempotencyKey: newKey()
      }),
      400,
      "params_validation",
      ["expireCurrentInSeconds"]
    )
    expectError(
      await api.request("POST", path, { body: {}, idempotencyKey: newKey(), key: otherKey }),
      404,
      "not_found"
    )
  })

  it("changes URL, events, description and status; deletes once; another partner's id is 404", async () => {
    const created = (await register({ url: "https://93.184.215.14/a", description: "A" })).body
    const path = `/v1/webhook-endpoints/${created.id}`
    const patched = await api.request("PATCH", path, {
      body: { url: "https://93.184.215.14/b", events: ["refund.requested"], description: null }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({
      url: "https://93.184.215.14/b",
      events: ["refund.requested"],
      description: null,
      status: "enabled"
    })
    const disabled = await api.request("PATCH", path, { body: { status: "disabled" } })
    expect(disabled.body).toMatchObject({
      status: "disabled",
      disabledReason: "disabled by the partner"
    })
    const enabled = await api.request("PATCH", path, { body: { status: "enabled" } })
    expect(enabled.body).toMatchObject({ status: "enabled", disabledReason: null })
    expectError(
      await api.request("PATCH", path, { body: { url: "https://127.0.0.1/x" } }),
      400,
      "invalid_webhook_url",
      ["url"]
    )
    expectError(await api.request("PATCH", path, { body: {} }), 400, "params_validation", ["body"])

    // Another partner: 404 for every route, never 403.
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { description: "mine" }],
      ["DELETE", undefined]
    ] as const) {
      expectError(
        await api.request(method, path, { key: otherKey, ...(body ? { body } : {}) }),
        404,
        "not_found"
      )
    }
    expect((await api.get("/v1/webhook-endpoints", { key: otherKey })).body.data).toEqual([])

    for (let i = 0; i < 2; i++) {
      const deleted = await api.request("DELETE", path)
      expect([deleted.status, deleted.body]).toEqual([200, { id: created.id, deleted: true }])
    }
    expectError(await api.get(path), 404, "not_found")
    expect((await api.get("/v1/webhook-endpoints")).body.data.map((e: Json) => e.id)).not.toContain(
      created.id
    )
    expectError(await api.get("/v1/webhook-endpoints/whep_0000000000ZZZZZZZZZZ"), 404, "not_found")
    expectError(await api.get("/v1/webhook-endpoints/nope"), 404, "not_found")
  })
})

describe("PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER", () => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    // Loopback endpoints allowed, so the test registers nothing beyond this machine.
    server = await startServer("sqlite", {
      fetchAllowPrivate: true,
      webhookMaxEndpointsPerPartner: 2
    })
  })

  afterAll(async () => {
    await server?.stop()
  })

  const register = (path: string) =>
    api.request("POST", "/v1/webhook-endpoints", {
      body: { url: `http://127.0.0.1:9/${path}` },
      idempotencyKey: newKey()
    })

  it("caps a partner's live endpoints at the setting: one more is 400 naming it; a deletion frees a place", async () => {
    const first = await register("one")
    expect(first.status, first.text).toBe(201)
    expect((await register("two")).status).toBe(201)
    const refused = await register("three")
    expectError(refused, 400, "params_validation", ["url"])
    expect(refused.text).toContain("maxEndpointsPerPartner, 2")
    const listed = await api.request("GET", "/v1/webhook-endpoints")
    expect(listed.body.data).toHaveLength(2)
    const removed = await api.request("DELETE", `/v1/webhook-endpoints/${first.body.id}`)
    expect(removed.status, removed.text).toBe(200)
    expect((await register("three")).status).toBe(201)
  })
})
