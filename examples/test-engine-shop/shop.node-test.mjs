/**
 * The shop against the test engine, under node:test (`node --test
 * shop.node-test.mjs`): the same cases as shop.test.mjs (vitest), with
 * node:assert. Named so that neither vitest nor a bare `node --test` of
 * shop.test.mjs picks the other runner's file.
 */
import assert from "node:assert/strict"
import { afterEach, describe, it } from "node:test"
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
    assert.equal(order.status, "awaiting_payment")
    assert.equal(order.amountCents, 1250)

    const paid = await engine.pay(order.paymentId)

    assert.equal(paid.status, "succeeded")
    assert.equal((await call("GET", `/orders/${order.id}`)).body.order.status, "paid")
    // Every event reached the shop's route and was accepted (the merchant's destination was paid
    // too); one of them changed the order.
    const deliveries = engine.deliveries()
    assert.deepEqual(
      deliveries.map((d) => [d.type, d.status]),
      [
        ["payment.processing", 200],
        ["payment.succeeded", 200],
        ["payment.settled", 200]
      ]
    )
    assert.deepEqual(shop.changes(), [
      { orderId: order.id, change: "paid", eventId: deliveries[1].event.id }
    ])

    // The same request again, as a retry after a lost answer would bring it.
    const before = structuredClone(shop.order(order.id))
    const replayed = await redeliver(deliveries[1])
    assert.deepEqual(replayed, { status: 200, body: { outcome: "duplicate" } })
    assert.equal(shop.changes().length, 1)
    assert.deepEqual(shop.order(order.id), before)

    // A body the engine did not sign is refused, and changes nothing either.
    const forged = await redeliver({
      ...deliveries[1],
      body: deliveries[1].body.replace(order.paymentId, "pay_forged")
    })
    assert.equal(forged.status, 400)
    assert.equal(shop.changes().length, 1)
  })

  it("an order expires: not before its payment's time, expired once after", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()
    const expiresInMs = order.expiresAt * 1000 - engine.now().getTime()

    await engine.advance(expiresInMs - 1000)
    assert.equal((await call("GET", `/orders/${order.id}`)).body.order.status, "awaiting_payment")
    assert.equal(shop.changes().length, 0)

    await engine.advance(60_000)
    assert.equal((await call("GET", `/orders/${order.id}`)).body.order.status, "expired")
    assert.deepEqual(
      engine.deliveries().map((d) => [d.type, d.status]),
      [["payment.expired", 200]]
    )
    assert.deepEqual(
      shop.changes().map((c) => c.change),
      ["expired"]
    )
  })

  it("a buyer declines in the wallet: the order is cancelled, once", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()

    await engine.decline(order.paymentId)

    assert.equal((await call("GET", `/orders/${order.id}`)).body.order.status, "cancelled")
    assert.deepEqual(
      engine.deliveries().map((d) => [d.type, d.status]),
      [["payment.cancelled", 200]]
    )
    assert.deepEqual(
      shop.changes().map((c) => c.change),
      ["cancelled"]
    )
  })

  it("a paid order is refunded through the engine: the shop records the refund its webhook brings, once", async () => {
    const { engine, shop, call, placeOrder } = await start()
    const order = await placeOrder()
    await engine.pay(order.paymentId)

    const refund = await call("POST", `/orders/${order.id}/refund`)
    // Asked through the partner API, not a helper of the test engine's: its webhook goes out
    // once the engine has done what is due.
    await engine.settled()

    assert.equal(refund.status, 202)
    assert.match(refund.body.refundId, /^rfnd_/)
    const { body } = await call("GET", `/orders/${order.id}`)
    assert.equal(body.order.status, "paid")
    assert.equal(body.order.refundId, refund.body.refundId)
    const refunds = engine.deliveries().filter((d) => d.type === "refund.requested")
    assert.deepEqual(
      refunds.map((d) => d.status),
      [200]
    )
    assert.deepEqual(
      shop.changes().map((c) => c.change),
      ["paid", "refunded"]
    )

    // A second refund of the same order: the engine answers its first one again (the
    // shop's idempotency key), and nothing new is sent or recorded.
    const again = await call("POST", `/orders/${order.id}/refund`)
    await engine.settled()
    assert.deepEqual(again, refund)
    assert.equal(engine.deliveries().filter((d) => d.type === "refund.requested").length, 1)
    assert.equal(shop.changes().length, 2)
  })
})
