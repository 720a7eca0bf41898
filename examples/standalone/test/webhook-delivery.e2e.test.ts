/**
 * Webhook deliveries end to end, on either store, against the real server
 * with a real receiver on loopback that verifies every delivery with the
 * `standardwebhooks` package: signed, retried on a (short) schedule with the
 * same id and bytes, in order per payment, a 410 disabling the endpoint, a
 * receiver that times out, answers slowly, goes away and comes back; the
 * attempts log, redelivery, the ping, secret rotation, the per-endpoint
 * limit, and another partner seeing none of it. Each test has a partner of
 * its own, so it receives only its own events.
 */
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
import { newPayment, refund, startProcessing, succeed } from "./payments-support.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const RETRY_MS = 150

/**
 * How long an `expect.poll` waits for a delivery's state: vitest's default (1 s) is too short for
 * a loaded machine, where four attempts (the first and three retries) take several seconds.
 */
const SETTLED = { timeout: 15_000, interval: 50 }

describe.each(STORES)("%s: webhook delivery", (store) => {
  let server: E2eServer
  const receivers: Array<WebhookReceiver> = []
  const api = client(() => server.baseUrl)
  let partners = 0

  beforeAll(async () => {
    server = await startServer(
      store,
      { fetchAllowPrivate: true },
      {
        webhookDelivery: {
          pollMs: 20,
          retryScheduleMs: [RETRY_MS, RETRY_MS, RETRY_MS],
          timeoutMs: 1_000,
          perEndpoint: 2
        }
      }
    )
  })

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()))
    await server?.stop()
  })

  /** A partner of its own, a receiver, and an endpoint for it (all event types). */
  const setup = async (body: Json = {}) => {
    const { apiKey: key } = await createPartner(server, `Hooks ${++partners}`)
    const receiver = await startWebhookReceiver()
    receivers.push(receiver)
    const created = await api.request("POST", "/v1/webhook-endpoints", {
      key,
      idempotencyKey: newKey(),
      body: { url: receiver.url, ...body }
    })
    expect(created.status, created.text).toBe(201)
    receiver.secrets.push(created.body.secret)
    const pay = payClient(server, key)
    const deliveries = async (query = "") => {
      const listed = await api.get(`/v1/webhook-endpoints/${created.body.id}/deliveries${query}`, {
        key
      })
      expect(listed.status, listed.text).toBe(200)
      return listed.body.data as Array<Json>
    }
    return { key, receiver, endpoint: created.body, pay, deliveries }
  }

  it("delivers an event signed as Standard Webhooks say: verified by standardwebhooks, the id the event's, the body the event as GET /v1/events shows it", async () => {
    const { key, receiver, pay, deliveries, endpoint } = await setup()
    const merchant = await createMerchant(pay, "Signed")
    await receiver.until((r) => r.length === 1)
    const [got] = receiver.received
    expect(got!.verifiedBy).toEqual(receiver.secrets)
    expect(got!.event.type).toBe("merchant.created")
    expect(got!.event.data.object.id).toBe(merchant.id)
    expect(got!.contentType).toBe("application/json")
    expect(got!.userAgent).toMatch(/^pay-engine-webhooks\//)
    expect(Math.abs(Number(got!.timestamp) - Date.now() / 1000)).toBeLessThan(60)
    const event = await api.get(`/v1/events/${got!.id}`, { key })
    expect(event.status).toBe(200)
    expect(got!.event).toEqual(event.body)
    expect(got!.event.apiVersion).toBe(endpoint.apiVersion)
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("delivered")
    const [delivery] = await deliveries()
    expect(delivery).toMatchObject({
      endpointId: endpoint.id,
      eventId: got!.id,
      eventType: "merchant.created",
      paymentId: null,
      status: "delivered",
      nextAttemptAt: null
    })
    expect(delivery.attempts).toHaveLength(1)
    expect(delivery.attempts[0]).toMatchObject({
      responseStatus: 204,
      responseBody: "",
      error: null
    })
    expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(0)
  })

  it("retries a failing receiver with the same id and bytes until a 2xx, and logs every attempt with its status, body and error", async () => {
    const { receiver, pay, deliveries } = await setup()
    receiver.answer = (_r, nth) =>
      nth === 1
        ? { status: 500, body: "Ünïcode ☕ broke" }
        : nth === 2
          ? { status: 302, headers: { location: "https://elsewhere.example/" } }
          : { status: 200, body: "ok" }
    await createMerchant(pay, "Retried")
    await receiver.until((r) => r.some((x) => x.answered === 200))
    const tries = receiver.received
    expect(tries).toHaveLength(3)
    expect(new Set(tries.map((t) => t.id)).size).toBe(1)
    expect(new Set(tries.map((t) => t.body)).size).toBe(1)
    for (const t of tries) expect(t.verifiedBy).toHaveLength(1)
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("delivered")
    const [delivery] = await deliveries()
    // Waited the schedule between tries (±20 % jitter), by the engine's own times of its
    // attempts (newest first): the receiver's arrival times carry each request's latency too.
    const startedAt = delivery.attempts.map((a: Json) => Date.parse(a.attemptedAt))
    expect(startedAt[1] - startedAt[2]).toBeGreaterThanOrEqual(RETRY_MS * 0.8)
    expect(delivery.attempts.map((a: Json) => [a.responseStatus, a.responseBody, a.error])).toEqual(
      [
        [200, "ok", null],
        [302, "", "HTTP 302: only a 2xx answer counts as delivered (redirects are not followed)"],
        [500, "Ünïcode ☕ broke", "HTTP 500: only a 2xx answer counts as delivered"]
      ]
    )
  })

  it("records a receiver that does not answer in time as timed out, and one that answers slowly as delivered", async () => {
    const { receiver, pay, deliveries } = await setup()
    receiver.answer = (_r, nth) => (nth === 1 ? { hang: true } : { delayMs: 300, status: 202 })
    await createMerchant(pay, "Slow")
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("delivered")
    const [delivery] = await deliveries()
    const [slow, timedOut] = delivery.attempts
    expect([slow.responseStatus, slow.error]).toEqual([202, null])
    expect(slow.durationMs).toBeGreaterThanOrEqual(290)
    expect([timedOut.responseStatus, timedOut.responseBody]).toEqual([null, null])
    expect(timedOut.error).toBe("no response within 1000 ms, the time limit")
    expect(timedOut.durationMs).toBeGreaterThanOrEqual(990)
  })

  it("keeps trying a receiver that went away, and delivers once it is back; a response body is recorded up to 64 KB", async () => {
    const { receiver, pay, deliveries } = await setup()
    await receiver.goAway()
    receiver.answer = () => ({ status: 200, body: "x".repeat(100_000) })
    await createMerchant(pay, "Away")
    await expect
      .poll(async () => (await deliveries())[0]?.attempts.length ?? 0, SETTLED)
      .toBeGreaterThanOrEqual(1)
    const [refused] = (await deliveries())[0].attempts
    expect(refused.responseStatus).toBeNull()
    expect(refused.error).toMatch(/ECONNREFUSED|refused|connect/i)
    await receiver.reopen()
    await receiver.until((r) => r.length === 1)
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("delivered")
    const [done] = (await deliveries())[0].attempts
    expect(done.responseBody).toHaveLength(64 * 1024)
  })

  it("fails a delivery for good once its retries are used up; status=failed lists it; redeliver sends it again", async () => {
    const { key, receiver, pay, deliveries, endpoint } = await setup()
    receiver.answer = () => ({ status: 503, body: "down" })
    await createMerchant(pay, "Exhausted")
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("failed")
    const [failed] = await deliveries("?status=failed")
    // The first attempt and three retries.
    expect(failed.attempts).toHaveLength(4)
    expect(receiver.received).toHaveLength(4)
    expect(await deliveries("?status=delivered")).toEqual([])
    const status = await api.get(`/v1/webhook-endpoints/${endpoint.id}`, { key })
    expect(status.body.status).toBe("enabled")
    receiver.answer = () => ({ status: 200 })
    const again = await api.request(
      "POST",
      `/v1/webhook-endpoints/${endpoint.id}/events/${failed.eventId}/redeliver`,
      { key }
    )
    expect(again.status, again.text).toBe(202)
    expect(again.body).toMatchObject({ eventId: failed.eventId, status: "pending" })
    expect(again.body.attempts).toHaveLength(4)
    await expect.poll(async () => (await deliveries())[0]?.status, SETTLED).toBe("delivered")
    expect((await deliveries())[0].attempts).toHaveLength(5)
    expect(await deliveries("?status=failed")).toEqual([])
  })

  it("a 410 disables the endpoint at once, saying why; nothing more is queued until it is enabled again", async () => {
    const { key, receiver, pay, deliveries, endpoint } = await setup()
    receiver.answer = () => ({ status: 410 })
    await createMerchant(pay, "Gone 1")
    await expect
      .poll(
        async () => (await api.get(`/v1/webhook-endpoints/${endpoint.id}`, { key })).body,
        SETTLED
      )
      .toMatchObject({ status: "disabled", disabledReason: expect.stringContaining("410 Gone") })
    expect(receiver.received).toHaveLength(1)
    await createMerchant(pay, "Gone 2")
    expect(await deliveries()).toHaveLength(1)
    receiver.answer = () => ({ status: 200 })
    const enabled = await api.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, {
      key,
      body: { status: "enabled" }
    })
    expect(enabled.body).toMatchObject({ status: "enabled", disabledReason: null })
    await createMerchant(pay, "Back")
    await receiver.until((r) => r.some((x) => x.event.data.object.name === "Back"))
    expect(receiver.received).toHaveLength(2)
  })

  it("delivers one payment's events in the order they happened while the first is retried; other events do not wait", async () => {
    const { key, receiver, pay } = await setup()
    const merchant = await createMerchant(pay, "Ordered")
    await receiver.until((r) => r.length === 1)
    const payment = await newPayment(pay, merchant.id)
    // The first event of the payment fails twice; nothing else does.
    receiver.answer = (r, nth) =>
      r.event.type === "payment.processing" && nth <= 2 ? { status: 500 } : { status: 200 }
    await startProcessing(server, payment.paymentId)
    await succeed(server, payment.paymentId)
    const refunded = await refund(api, payment.paymentId, key)
    expect(refunded.status, refunded.text).toBe(201)
    await createMerchant(pay, "Unrelated")
    await receiver.until((r) =>
      r.some((x) => x.event.type === "refund.requested" && x.answered === 200)
    )
    const ofPayment = receiver.received.filter((r) => r.event.type !== "merchant.created")
    expect(ofPayment.map((r) => [r.event.type, r.answered])).toEqual([
      ["payment.processing", 500],
      ["payment.processing", 500],
      ["payment.processing", 200],
      ["payment.succeeded", 200],
      ["refund.requested", 200]
    ])
    // The other merchant's event went while the payment's first event was being retried.
    const unrelated = receiver.received.findIndex((r) => r.event.data.object.name === "Unrelated")
    const processed = receiver.received.findIndex(
      (r) => r.event.type === "payment.processing" && r.answered === 200
    )
    expect(unrelated).toBeLessThan(processed)
  })

  it("signs with both secrets during a rotation's overlap, and with the new one only once it ends", async () => {
    const { key, receiver, pay, endpoint } = await setup()
    const [oldSecret] = receiver.secrets
    const rotate = (expireCurrentInSeconds: number) =>
      api.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        key,
        idempotencyKey: newKey(),
        body: { expireCurrentInSeconds }
      })
    const rotated = await rotate(3600)
    expect(rotated.status, rotated.text).toBe(200)
    const newSecret = rotated.body.secret as string
    receiver.secrets.push(newSecret)
    await createMerchant(pay, "Overlap")
    await receiver.until((r) => r.length === 1)
    const [during] = receiver.received
    expect(during!.signature.split(" ")).toHaveLength(2)
    expect(during!.verifiedBy).toEqual([oldSecret, newSecret])
    // Rotated again at once: only the newest signs.
    const last = await rotate(0)
    receiver.secrets.push(last.body.secret)
    await createMerchant(pay, "After")
    await receiver.until((r) => r.length === 2)
    const after = receiver.received[1]!
    expect(after.signature.split(" ")).toHaveLength(1)
    expect(after.verifiedBy).toEqual([last.body.secret])
  })

  it("sends a ping to the tested endpoint only, and never more than the per-endpoint limit at once", async () => {
    const { key, receiver, pay, endpoint, deliveries } = await setup()
    const other = await startWebhookReceiver()
    receivers.push(other)
    const second = await api.request("POST", "/v1/webhook-endpoints", {
      key,
      idempotencyKey: newKey(),
      body: { url: other.url }
    })
    const ping = await api.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { key })
    expect(ping.status, ping.text).toBe(202)
    expect(ping.body.event).toMatchObject({
      type: "ping",
      data: { object: { endpointId: endpoint.id, url: receiver.url } }
    })
    expect(ping.body.delivery).toMatchObject({ eventType: "ping", status: "pending" })
    await receiver.until((r) => r.some((x) => x.event.type === "ping"))
    expect(receiver.received[0]!.verifiedBy).toHaveLength(1)
    // The engine records the outcome once the receiver's answer is back: after the receiver saw it.
    await expect
      .poll(async () => (await deliveries())[0], SETTLED)
      .toMatchObject({ eventType: "ping", status: "delivered" })
    // Six merchant events at once, each held 300 ms: at most two in flight (the limit here).
    receiver.answer = () => ({ delayMs: 300, status: 200 })
    await Promise.all(Array.from({ length: 6 }, (_, i) => createMerchant(pay, `Burst ${i}`)))
    await receiver.until((r) => r.filter((x) => x.answered === 200).length === 6, 20_000)
    expect(receiver.inFlight().max).toBe(2)
    await other.until((r) => r.length === 6)
    expect(other.received.some((r) => r.event.type === "ping")).toBe(false)
    expect(second.status).toBe(201)
  })

  it("another partner's endpoint, event or delivery answers 404", async () => {
    const mine = await setup()
    const theirs = await setup()
    await createMerchant(theirs.pay, "Theirs")
    await theirs.receiver.until((r) => r.length === 1)
    const theirEvent = theirs.receiver.received[0]!.id
    for (const path of [
      `/v1/webhook-endpoints/${theirs.endpoint.id}/deliveries`,
      `/v1/webhook-endpoints/${theirs.endpoint.id}/test`,
      `/v1/webhook-endpoints/${theirs.endpoint.id}/events/${theirEvent}/redeliver`,
      `/v1/webhook-endpoints/${mine.endpoint.id}/events/${theirEvent}/redeliver`
    ]) {
      const method = path.endsWith("deliveries") ? "GET" : "POST"
      const answer = await api.request(method, path, { key: mine.key })
      expectError(answer, 404, "not_found")
    }
    const badCursor = await api.get(
      `/v1/webhook-endpoints/${mine.endpoint.id}/deliveries?cursor=nope`,
      { key: mine.key }
    )
    expect(badCursor.status).toBe(400)
    const badStatus = await api.get(
      `/v1/webhook-endpoints/${mine.endpoint.id}/deliveries?status=lost`,
      { key: mine.key }
    )
    expect(badStatus.status).toBe(400)
  })
})
