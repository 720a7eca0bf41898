/**
 * A small shop that takes its payments through an embedded payment engine:
 * orders kept in memory, a payment made through the engine's partner API when
 * an order is placed, and a webhook route that moves an order on when its
 * payment ends (paid, expired, cancelled, failed) or is refunded.
 *
 * The shop only needs the engine's `fetch(Request)`, so the same code runs on
 * the engine `createPaymentEngine` makes and on `createTestEngine`'s
 * (@pay/testing), which its tests use. Plain JavaScript, so its tests run under
 * `node --test` as well as vitest, with no TypeScript loader.
 */
import { verifyWebhook } from "@pay/core/webhooks"
import express from "express"

/**
 * What each final payment event makes of an order still waiting for its payment.
 * @type {Readonly<Record<string, OrderStatus | undefined>>}
 */
const ORDER_STATUS_OF_EVENT = {
  "payment.succeeded": "paid",
  "payment.expired": "expired",
  "payment.cancelled": "cancelled",
  "payment.failed": "failed"
}

/**
 * @typedef {{ readonly fetch: (request: Request) => Promise<Response>, readonly publicUrl: string, readonly basePath: string }} Engine
 * @typedef {{ readonly apiKey: string, readonly merchantId: string, readonly webhookSecret: string }} Registration
 * @typedef {"awaiting_payment" | "paid" | "expired" | "cancelled" | "failed"} OrderStatus
 * @typedef {{ id: string, amountCents: number, status: OrderStatus, paymentId: string, payUrl: string, expiresAt: number, refundId: string | null }} Order
 * @typedef {{ orderId: string, change: string, eventId: string }} OrderChange
 */

/**
 * The engine's partner API, called in-process through its `fetch`.
 * @param {Engine} engine
 * @param {string} apiKey
 */
export const partnerApi = (engine, apiKey) => {
  /**
   * @param {string} method
   * @param {string} path
   * @param {{ body?: unknown, headers?: Record<string, string> }} [options]
   * @returns {Promise<{ status: number, body: any }>}
   */
  return async (method, path, { body, headers = {} } = {}) => {
    const response = await engine.fetch(
      new Request(new URL(`${engine.basePath}${path}`, engine.publicUrl), {
        method,
        headers: {
          "api-key": apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }
}

/**
 * The platform's onboarding, done once: a partner for the shop, the shop as its
 * merchant (settled to `settlement` when given), and the webhook endpoint the
 * engine delivers the shop's events to. What `createShop` needs, to keep.
 * @param {Engine & { partners: { create: (input: { name: string }) => Promise<{ apiKey: string }> } }} engine
 * @param {{ webhookUrl: string, settlement?: { asset: string, destination: string } }} options
 * @returns {Promise<Registration>}
 */
export const registerShop = async (engine, { webhookUrl, settlement }) => {
  const { apiKey } = await engine.partners.create({ name: "Corner shop platform" })
  const api = partnerApi(engine, apiKey)
  /** @param {string} step @param {{ status: number, body: any }} answer */
  const ok = (step, answer) => {
    if (answer.status >= 300)
      throw new Error(`${step}: ${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.body
  }
  const { merchant } = ok(
    "the merchant",
    await api("POST", "/v1/merchants", {
      body: { merchantName: "Corner shop", merchantEmail: "owner@corner.example" },
      headers: { "idempotency-key": "register-merchant" }
    })
  )
  if (settlement !== undefined) {
    ok(
      "its settlement",
      await api("POST", `/v1/merchants/${merchant.id}/settlements/crypto`, {
        body: { settlements: [settlement] },
        headers: { "idempotency-key": "register-settlement" }
      })
    )
  }
  const endpoint = ok(
    "the webhook endpoint",
    await api("POST", "/v1/webhook-endpoints", {
      body: { url: webhookUrl },
      headers: { "idempotency-key": "register-webhooks" }
    })
  )
  return { apiKey, merchantId: merchant.id, webhookSecret: endpoint.secret }
}

/**
 * The shop: its Express app, and its orders for a test to look at.
 * @param {{ engine: Engine } & Registration} options
 */
export const createShop = ({ engine, apiKey, merchantId, webhookSecret }) => {
  const api = partnerApi(engine, apiKey)
  /** @type {Map<string, Order>} */
  const orders = new Map()
  /** @type {Map<string, Order>} */
  const orderOfPayment = new Map()
  /** Every change a webhook made to an order, oldest first. @type {Array<OrderChange>} */
  const changes = []
  /** The events already acted on: the engine may deliver one again (a retry after a timeout). */
  const handledEvents = new Set()

  /**
   * Acts on a verified event, once: an order changes only from the state the event follows.
   * @param {any} event
   * @returns {"applied" | "duplicate" | "ignored"}
   */
  const apply = (event) => {
    if (handledEvents.has(event.id)) return "duplicate"
    handledEvents.add(event.id)
    const order = orderOfPayment.get(event.data?.object?.paymentId)
    if (order === undefined) return "ignored"
    if (event.type === "refund.requested") {
      if (order.refundId !== null) return "ignored"
      order.refundId = event.data.object.refundId
      changes.push({ orderId: order.id, change: "refunded", eventId: event.id })
      return "applied"
    }
    const next = ORDER_STATUS_OF_EVENT[event.type]
    // payment.processing, payment.settled…: nothing for the order; a final status comes once.
    if (next === undefined || order.status !== "awaiting_payment") return "ignored"
    order.status = next
    changes.push({ orderId: order.id, change: next, eventId: event.id })
    return "applied"
  }

  let lastOrder = 0
  const app = express()

  app.post("/orders", express.json(), async (req, res) => {
    const amountCents = req.body?.amountCents
    if (!Number.isSafeInteger(amountCents) || amountCents <= 0) {
      res.status(400).json({ error: "amountCents: a whole number of cents above 0" })
      return
    }
    const id = `order-${++lastOrder}`
    const created = await api("POST", "/v1/payments", {
      body: { referenceId: id, amount: { value: String(amountCents), unit: "iso4217/USD" } },
      // The order's own key: a create retried after a lost answer makes no second payment.
      headers: { "merchant-id": merchantId, "idempotency-key": `payment-${id}` }
    })
    if (created.status !== 201) {
      res.status(502).json({ error: "the payment could not be created", engine: created.body })
      return
    }
    /** @type {Order} */
    const order = {
      id,
      amountCents,
      status: "awaiting_payment",
      paymentId: created.body.paymentId,
      payUrl: created.body.gatewayUrl,
      expiresAt: created.body.expiresAt,
      refundId: null
    }
    orders.set(id, order)
    orderOfPayment.set(order.paymentId, order)
    res.status(201).json({ order })
  })

  app.get("/orders/:id", (req, res) => {
    const order = orders.get(req.params.id)
    if (order === undefined) res.status(404).json({ error: "no such order" })
    else res.json({ order })
  })

  // Asks the engine for the refund; the order records it when the refund's webhook comes, as
  // every other change: one path, whoever asked (this route, the engine's operator).
  app.post("/orders/:id/refund", async (req, res) => {
    const order = orders.get(req.params.id)
    if (order === undefined) {
      res.status(404).json({ error: "no such order" })
      return
    }
    const refund = await api("POST", "/v1/refunds", {
      body: { paymentId: order.paymentId },
      headers: { "idempotency-key": `refund-${order.id}` }
    })
    if (refund.status === 201) res.status(202).json({ refundId: refund.body.refund.refundId })
    else res.status(409).json({ error: "the engine refused the refund", engine: refund.body })
  })

  // The raw body: the signature is over the exact bytes the engine sent.
  app.post("/webhooks", express.raw({ type: () => true }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body.toString("utf8") : ""
    let event
    try {
      event = await verifyWebhook(body, req.headers, webhookSecret)
    } catch {
      res.status(400).json({ error: "the webhook's signature does not verify" })
      return
    }
    res.json({ outcome: apply(event) })
  })

  return {
    app,
    /** @param {string} id */
    order: (id) => orders.get(id),
    /** Every change a webhook made to an order, oldest first. */
    changes: () => [...changes]
  }
}
