/**
 * The shop against the test engine, under vitest: an order paid, expired,
 * declined and refunded, each seen by the shop through its own webhook route,
 * with the changes counted. shop.node-test.mjs holds the same cases for
 * node:test.
 */
import { afterEach, describe, expect, it } from "vitest"
import { openShop } from "./support.mjs"

/** @type {Array<() => Promise<void>>} */
const opened = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()))
})

const start = async () => {
  const shop = await openShop()
  opened.push(shop.close)
  return shop
}

describe("the shop on the test engine", () => {
  it("an order is paid: the webhook marks it paid once, and a replayed webhook changes nothing", async () => {
    const { engine, shop, call, placeOrder, redeliver } = await start()
    const order = await placeOrder(1250)
    expect(order).toMatchObject({ status: "awaiting_payment", amountCents: 1250 })

    const paid = await engine.pay(order.paymentId)

    expect(paid.status).toBe("succeeded")
    expect((await call("GET", `/orders/${order.id}`)).body.order.status).toBe("paid")
    // Every event reached the shop's route and was accepted (the merchant's destination was paid
    // too); one of them changed the order.
    const deliveries = engine.deliveries()
    expect(deliveries.map((d) => [d.type, d.status])).toEqual([
      ["payment.processing", 200],
      ["payment.succeeded", 200],
      ["payment.settled", 200]
    ])
    expect(shop.changes()).toEqual([
      { orderId: order.id, change: "paid", eventId: deliveries[1].event.id }
    ])

    // The same request again, as a retry after a lost answer would bring it.
    const before = structuredClone(shop.order(order.id))
    const replayed = await redeliver(deliveries[1])
    expect(replayed).toEqual({ status: 200, body: { outcome: "duplicate" } })
    expect(shop.changes()).toHaveLength(1)
    expect(shop.order(order.id)).toEqual(before)

    // A body the engine did not sign is refused, and changes nothing either.
    const forged = await redeliver({
      ...deliveries[1],
      body: deliveries[1].body.replace(order.paymentId, "pay_forged")
    })
    expect(forged.status).toBe(400)
    expect(shop.changes()).toHaveLength(1)
  })

  it("an order expires: not before its payment's time, expired once after", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()
    const expiresInMs = order.expiresAt * 1000 - engine.now().getTime()

    await engine.advance(expiresInMs - 1000)
    expect((await call("GET", `/orders/${order.id}`)).body.order.status).toBe("awaiting_payment")
    expect(shop.changes()).toHaveLength(0)

    await engine.advance(60_000)
    expect((await call("GET", `/orders/${order.id}`)).body.order.status).toBe("expired")
    expect(engine.deliveries().map((d) => [d.type, d.status])).toEqual([["payment.expired", 200]])
    expect(shop.changes().map((c) => c.change)).toEqual(["expired"])
  })

  it("a buyer declines in the wallet: the order is cancelled, once", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()

    await engine.decline(order.paymentId)

    expect((await call("GET", `/orders/${order.id}`)).body.order.status).toBe("cancelled")
    expect(engine.deliveries().map((d) => [d.type, d.status])).toEqual([["payment.cancelled", 200]])
    expect(shop.changes().map((c) => c.change)).toEqual(["cancelled"])
  })

  it("a paid order is refunded through the engine: the shop records the refund its webhook brings, once", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()
    await engine.pay(order.paymentId)

    const refund = await call("POST", `/orders/${order.id}/refund`)
    // Asked through the partner API, not a helper of the test engine's: its webhook goes out
    // once the engine has done what is due.
    await engine.settled()

    expect(refund.status).toBe(202)
    expect(refund.body.refundId).toMatch(/^rfnd_/)
    const { body } = await call("GET", `/orders/${order.id}`)
    expect(body.order).toMatchObject({ status: "paid", refundId: refund.body.refundId })
    const refunds = engine.deliveries().filter((d) => d.type === "refund.requested")
    expect(refunds.map((d) => d.status)).toEqual([200])
    expect(shop.changes().map((c) => c.change)).toEqual(["paid", "refunded"])

    // A second refund of the same order: the engine answers its first one again (the
    // shop's idempotency key), and nothing new is sent or recorded.
    const again = await call("POST", `/orders/${order.id}/refund`)
    await engine.settled()
    expect(again).toEqual(refund)
    expect(engine.deliveries().filter((d) => d.type === "refund.requested")).toHaveLength(1)
    expect(shop.changes()).toHaveLength(2)
  })
})
