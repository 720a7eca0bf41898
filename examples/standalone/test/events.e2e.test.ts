/**
 * Events end to end over loopback against the real standalone server, on
 * either store: each merchant and settlement change, by the partner API or
 * the operator's CLI path, leaves exactly one event whose object is what the
 * API answered for the resource at that moment; `GET /v1/events` lists them
 * newest first with its filters and cursor pages, `GET /v1/events/{id}` reads
 * one, and another partner sees none of them.
 */
import { type MerchantId, Merchants, Payments } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createPartner,
  type E2eServer,
  eventually,
  exactlyAfterQuiet,
  expectError,
  type Json,
  newKey,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  confirm,
  fund,
  newBuyer,
  onlyOption,
  paymentFor,
  settledMerchant,
  signAction,
  signed,
  walletClient
} from "./gateway-support.js"
import { cancel } from "./payments-support.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42"
const WALLET_A = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
const WALLET_B = "eip155:8453:0x00000000000000000000000000000000000000b0"

describe.each(STORES)("%s: events", (store) => {
  let server: E2eServer
  let otherKey: string
  const api = client(() => server.baseUrl)

  // Every event of the bootstrap partner is also delivered here, as a webhook.
  let receiver: WebhookReceiver

  beforeAll(async () => {
    server = await startServer(
      store,
      { fetchAllowPrivate: true },
      { webhookDelivery: { pollMs: 20 } }
    )
    otherKey = (await createPartner(server, "Other")).apiKey
    receiver = await startWebhookReceiver()
    const endpoint = await api.request("POST", "/v1/webhook-endpoints", {
      idempotencyKey: newKey(),
      body: { url: receiver.url }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    receiver.secrets.push(endpoint.body.secret)
  })

  afterAll(async () => {
    await receiver?.close()
    await server?.stop()
  })

  /**
   * The events arrive as webhooks too, signed, each exactly as the API lists it, and each
   * once: one delivery of every event, and still one through the quiet period after the last.
   */
  const expectDelivered = async (events: ReadonlyArray<Json>) => {
    await exactlyAfterQuiet(
      () => events.map((e) => [e.id, receiver.of(e.id).length]),
      events.map((e) => [e.id, 1]),
      { what: "deliveries of each event (id, count)" }
    )
    for (const e of events) {
      const [got, ...again] = receiver.of(e.id)
      expect(again).toEqual([])
      expect(got!.event).toEqual(e)
      expect(got!.verifiedBy).toHaveLength(1)
    }
  }

  /** Every event of the partner since `start` (RFC 3339), oldest first. */
  const eventsSince = async (start: string, key?: string): Promise<Array<Json>> => {
    const all: Array<Json> = []
    let cursor: string | null = null
    do {
      const page = await api.get(
        `/v1/events?limit=2&startTs=${start}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        key === undefined ? {} : { key }
      )
      expect(page.status, page.text).toBe(200)
      all.push(...page.body.data)
      cursor = page.body.nextCursor
    } while (cursor !== null)
    return all.reverse()
  }

  it("every merchant and settlement change leaves one event carrying what the API answered then", async () => {
    const start = new Date().toISOString()
    const body = { merchantName: "Evented", merchantEmail: "e@shop.example" }
    const key = newKey()
    const created = await api.request("POST", "/v1/merchants", { body, idempotencyKey: key })
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.merchant.id
    // A replay changes nothing, so it writes nothing.
    await api.request("POST", "/v1/merchants", { body, idempotencyKey: key })
    const profile = async () => (await api.get(`/v1/merchants/${id}`)).body.merchant
    const afterCreate = await profile()

    const patched = await api.request("PATCH", `/v1/merchants/${id}`, {
      body: { merchantName: "Evented, renamed" }
    })
    expect(patched.status).toBe(200)
    const afterPatch = await profile()

    const registered = await api.request("POST", `/v1/merchants/${id}/settlements/crypto`, {
      body: {
        settlements: [
          { asset: USDC_BASE, destination: WALLET_A },
          { asset: EURC_BASE, destination: WALLET_A }
        ]
      },
      idempotencyKey: newKey()
    })
    expect(registered.status, registered.text).toBe(201)
    const [usdc, eurc] = registered.body.settlements
    const moved = await api.request("PUT", `/v1/merchants/${id}/settlements/crypto/${usdc.id}`, {
      body: { destination: WALLET_B }
    })
    expect(moved.status, moved.text).toBe(200)
    for (let i = 0; i < 2; i++) {
      await api.request("DELETE", `/v1/merchants/${id}/settlements/crypto/${eurc.id}`)
    }
    // The operator's status change (what `npm run pay -- merchants set-status` calls).
    await server.runEngine(
      Effect.flatMap(Merchants, (m) => m.setStatus(id as MerchantId, "inactive"))
    )
    const afterStatus = await profile()
    for (let i = 0; i < 2; i++) await api.request("DELETE", `/v1/merchants/${id}`)

    // Read in pages of two, through the cursor.
    const events = await eventsSince(start)
    expect(events.map((e) => e.type)).toEqual([
      "merchant.created",
      "merchant.updated",
      "settlement.created",
      "settlement.created",
      "settlement.updated",
      "settlement.deleted",
      "merchant.updated",
      "merchant.deleted"
    ])
    expect(events.map((e) => e.data.object)).toEqual([
      afterCreate,
      afterPatch,
      usdc,
      eurc,
      moved.body.settlement,
      { id: eurc.id, deleted: true },
      afterStatus,
      { id, deleted: true }
    ])
    expect(afterStatus.settlements.crypto).toEqual([moved.body.settlement])
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9A-Za-z]{20}$/)
      expect(event.apiVersion).toBe("2026-02-18")
      expect(Date.parse(event.createdAt)).not.toBeNaN()
      const one = await api.get(`/v1/events/${event.id}`)
      expect(one.body).toEqual(event)
    }
    // Another partner sees none of them, and gets 404 for their ids.
    expect(await eventsSince(start, otherKey)).toEqual([])
    expectError(await api.get(`/v1/events/${events[0].id}`, { key: otherKey }), 404, "not_found")
    await expectDelivered(events)
  })

  it("a payment's status changes and its refund leave their events, each with what GET /v1/payments/{id} answered then", async () => {
    // Paid by a wallet on the sandbox chain: processing, then succeeded (by the chain work).
    const merchantId = await settledMerchant(api)
    const wallet = (await walletClient(server)).api
    const buyer = newBuyer()
    await fund(server, buyer, 100_000_000n)
    const { paymentId } = await paymentFor(api, merchantId, "1050")
    const option = await onlyOption(wallet, paymentId, buyer)
    const signature = await signAction(buyer.key, option.actions[0])
    const confirmed = await confirm(wallet, paymentId, signed(option.id, signature))
    expect(confirmed.body.status, confirmed.text).toBe("succeeded")
    // Settled by the chain work in the background: wait for it.
    const settledView: Json = await eventually(async () => {
      const view = (await api.get(`/v1/payments/${paymentId}`)).body
      expect(view.settlement?.status).toBe("settled")
      return view
    })
    const refunded = await api.request("POST", "/v1/refunds", { body: { paymentId } })
    expect(refunded.status, refunded.text).toBe(201)

    // Cancelled by the merchant.
    const cancelled = await paymentFor(api, merchantId, "500")
    await cancel(api, cancelled.paymentId, merchantId)
    const cancelledView = (await api.get(`/v1/payments/${cancelled.paymentId}`)).body

    const ofPayment = async (id: string) =>
      (await api.get(`/v1/events?paymentId=${id}&limit=100`)).body.data.reverse()
    // The chain work writes payment.settled in the background: one, and no other after it.
    await exactlyAfterQuiet(
      async () => (await ofPayment(paymentId)).map((e: Json) => e.type),
      ["payment.processing", "payment.succeeded", "payment.settled", "refund.requested"],
      { what: "the payment's events" }
    )
    const paid = await ofPayment(paymentId)
    expect(paid.map((e: Json) => e.type)).toEqual([
      "payment.processing",
      "payment.succeeded",
      "payment.settled",
      "refund.requested"
    ])
    expect(paid[0].data.object).toMatchObject({ paymentId, status: "processing" })
    expect(paid[1].data.object).toMatchObject({
      paymentId,
      status: "succeeded",
      settlement: { status: "pending" }
    })
    expect(paid[2].data.object).toEqual(settledView)
    expect(paid[3].data.object).toEqual(refunded.body.refund)
    const gone = await ofPayment(cancelled.paymentId)
    expect(gone.map((e: Json) => [e.type, e.data.object])).toEqual([
      ["payment.cancelled", cancelledView]
    ])
    // From the API, the gateway and the chain work alike: delivered, in the order they happened.
    await expectDelivered([...paid, ...gone])
    const order = receiver.received.filter((r) => r.event.data.object.paymentId === paymentId)
    expect(order.map((r) => r.event.type)).toEqual(paid.map((e: Json) => e.type))
  }, 60_000)

  it("the expiry sweep writes payment.expired with each expiry, once, whichever sweep gets there", async () => {
    const merchantId = await settledMerchant(api)
    const expiresAt = new Date(Date.now() + 1500).toISOString()
    const { paymentId } = await paymentFor(api, merchantId, "700", { expiresAt })
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50))
    // Three sweeps at once, as three instances' would be (the server's own may join in).
    await Promise.all(
      [1, 2, 3].map(() => server.runEngine(Effect.flatMap(Payments, (p) => p.sweepExpired)))
    )
    const expired = (await api.get(`/v1/payments/${paymentId}`)).body
    expect(expired.status).toBe("expired")
    // Once: the server's own sweep, running on its timer, writes no second one after these.
    const events = (await api.get(`/v1/events?paymentId=${paymentId}`)).body.data
    await exactlyAfterQuiet(
      async () => (await api.get(`/v1/events?paymentId=${paymentId}`)).body.data,
      events,
      { what: "the expired payment's events" }
    )
    expect(events.map((e: Json) => [e.type, e.data.object])).toEqual([["payment.expired", expired]])
    await expectDelivered(events)
  })

  it("lists newest first, by type and time, in cursor pages, in the request's API version", async () => {
    const start = new Date().toISOString()
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const created = await api.request("POST", "/v1/merchants", {
        body: { merchantName: `Paged ${i}`, merchantEmail: "p@shop.example" },
        idempotencyKey: newKey()
      })
      ids.push(created.body.merchant.id)
    }
    const pageOf = (query: string) => api.get(`/v1/events?${query}`)
    const first = await pageOf(`type=merchant.created&startTs=${start}&limit=2`)
    expect(first.body.data.map((e: Json) => e.data.object.id)).toEqual([ids[2], ids[1]])
    const second = await pageOf(
      `type=merchant.created&startTs=${start}&limit=2&cursor=${first.body.nextCursor}`
    )
    expect(second.body.data.map((e: Json) => e.data.object.id)).toEqual([ids[0]])
    expect(second.body.nextCursor).toBeNull()
    expect(
      (await pageOf(`type=settlement.created,merchant.deleted&startTs=${start}`)).body.data
    ).toEqual([])
    expect(
      (await pageOf(`endTs=${start}&type=merchant.created`)).body.data.map(
        (e: Json) => e.data.object.id
      )
    ).not.toContain(ids[0])
    const preview = await api.get(`/v1/events?limit=1`, {
      headers: { "pay-version": "2026-02-19.preview" }
    })
    expect(preview.body.data[0].apiVersion).toBe("2026-02-19.preview")
  })

  it("refuses what is not a filter, naming it; an unknown or malformed id is 404", async () => {
    expectError(await api.get("/v1/events?type=payment.paid"), 400, "invalid_params", ["type"])
    expectError(await api.get("/v1/events?startTs=yesterday"), 400, "invalid_params", ["startTs"])
    expectError(await api.get("/v1/events?cursor=nope"), 400, "invalid_params", ["cursor"])
    expectError(await api.get("/v1/events?limit=101"), 400, "invalid_params", ["limit"])
    expectError(await api.get("/v1/events/evt_0000000000ZZZZZZZZZZ"), 404, "not_found")
    expectError(await api.get("/v1/events/nope"), 404, "not_found")
    expectError(await api.get("/v1/events", { key: null }), 401, "missing_api_key")
  })
})
