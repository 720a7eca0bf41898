/**
 * The test engine as a platform uses it: a partner, a merchant with a
 * settlement destination, a webhook endpoint, payments paid, declined, failed
 * on chain and left to expire, with what the engine answers and sends checked
 * at each step, counted where a count is the claim.
 */
import { verifyWebhook } from "@pay/core/webhooks"
import { privateKeyToAccount } from "viem/accounts"
import { afterEach, describe, expect, it, vi } from "vitest"
import { createTestEngine, type TestEngine } from "./index.js"

const MERCHANT_WALLET = "0x00000000000000000000000000000000000000D0"

const engines: Array<TestEngine> = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()))
})

const start = async (options: Parameters<typeof createTestEngine>[0] = {}) => {
  const engine = await createTestEngine({ startAt: Date.UTC(2026, 0, 1), ...options })
  engines.push(engine)
  return engine
}

/** The partner API over the engine's fetch, with the partner's key. */
const partnerApi =
  (engine: TestEngine, apiKey: string) =>
  async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await engine.fetch(
      new Request(`http://pay.test${path}`, {
        method,
        headers: {
          "api-key": apiKey,
          ...(method === "GET" ? {} : { "idempotency-key": crypto.randomUUID() }),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }

/** A partner with one merchant settled in the test network's USDC, and a webhook endpoint. */
const shopOn = async (engine: TestEngine) => {
  const partner = await engine.partners.create({ name: "Shop platform" })
  const api = partnerApi(engine, partner.apiKey)
  const merchant = await api("POST", "/v1/merchants", {
    merchantName: "Corner shop",
    merchantEmail: "owner@corner.example"
  })
  expect(merchant, JSON.stringify(merchant.body)).toMatchObject({ status: 201 })
  const settlements = await api(
    "POST",
    `/v1/merchants/${merchant.body.merchant.id}/settlements/crypto`,
    {
      settlements: [
        { asset: engine.network.usdc, destination: `${engine.network.chainId}:${MERCHANT_WALLET}` }
      ]
    }
  )
  expect(settlements.status).toBeLessThan(300)
  const endpoint = await api("POST", "/v1/webhook-endpoints", {
    url: "https://shop.test/webhooks"
  })
  expect(endpoint.status).toBe(201)
  const newPayment = async (cents = "1250") => {
    const created = await api(
      "POST",
      "/v1/payments",
      { referenceId: "ORDER-1", amount: { value: cents, unit: "iso4217/USD" } },
      { "merchant-id": merchant.body.merchant.id }
    )
    expect(created.status).toBe(201)
    return created.body.paymentId as string
  }
  return {
    api,
    merchantId: merchant.body.merchant.id as string,
    secret: endpoint.body.secret as string,
    newPayment
  }
}

describe("createTestEngine", () => {
  it("pays a payment through the gateway: succeeded, collected on the scripted chain, one signed webhook per event", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const id = await shop.newPayment()

    const paid = await engine.pay(id)

    expect(paid.status).toBe("succeeded")
    expect(paid.txId).toMatch(/^0x[0-9a-f]{64}$/)
    const read = await shop.api("GET", `/v1/payments/${id}`)
    expect(read.body.status).toBe("succeeded")
    // One collection mined for it, from the buyer, for the option's amount.
    const collects = engine.chain.mined.filter((t) => t.call.kind === "receive")
    expect(collects).toHaveLength(1)
    const succeeded = engine.deliveries().filter((d) => d.type === "payment.succeeded")
    expect(succeeded).toHaveLength(1)
    const delivery = succeeded[0]!
    expect(delivery.event.data.object.paymentId).toBe(id)
    expect(delivery.event.data.object.livemode).toBe(false)
    // Signed with the endpoint's secret: the platform's own check accepts it.
    // (Stamped with the real time, as the receiver's check compares it with its own clock.)
    const verified = await verifyWebhook(delivery.body, delivery.headers, shop.secret)
    expect((verified as { type: string }).type).toBe("payment.succeeded")
  })

  it("settles: the merchant's destination is paid the amount less fees, once", async () => {
    const engine = await start({
      settings: { fees: { default: { fixed: "0.10", percentage: "1" } } }
    })
    const shop = await shopOn(engine)
    const id = await shop.newPayment("1000")
    await engine.pay(id)

    const settlement = await engine.settle(id)

    // 10.00 USD in USDC (6 decimals), less 0.10 + 1 %.
    expect(settlement?.status).toBe("settled")
    expect(settlement?.amount).toBe(10_000_000n - 100_000n - 100_000n)
    const transfers = engine.chain.mined.filter((t) => t.call.kind === "transfer")
    expect(transfers).toHaveLength(1)
    expect(engine.chain.balance(MERCHANT_WALLET)).toBe(9_800_000n)
    expect(engine.deliveries().filter((d) => d.type === "payment.settled")).toHaveLength(1)
  })

  it("a buyer who declines in the wallet: cancelled by the user, one payment.cancelled", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const id = await shop.newPayment()

    await engine.decline(id)
    for (let i = 0; i < 50 && engine.deliveries().length === 0; i++)
      await new Promise((r) => setTimeout(r, 10))

    const read = await shop.api("GET", `/v1/payments/${id}`)
    expect(read.body).toMatchObject({ status: "cancelled", cancelledReason: "cancelled_by_user" })
    expect(engine.deliveries().map((d) => d.type)).toEqual(["payment.cancelled"])
    expect(engine.chain.mined).toHaveLength(0)
  })

  it("a transfer the chain reverts: failed, transaction_reverted, nothing collected", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const id = await shop.newPayment()

    const outcome = await engine.failOnChain(id)

    expect(outcome).toMatchObject({ status: "failed", failureCode: "transaction_reverted" })
    const read = await shop.api("GET", `/v1/payments/${id}`)
    expect(read.body.status).toBe("failed")
    expect(engine.chain.balance(engine.chain.network.collector)).toBe(0n)
    expect(engine.deliveries().filter((d) => d.type === "payment.failed")).toHaveLength(1)
    expect(engine.deliveries().filter((d) => d.type === "payment.succeeded")).toHaveLength(0)
  })

  it("expiry follows the clock: not before its time, expired and told once after", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const id = await shop.newPayment()
    const created = await shop.api("GET", `/v1/payments/${id}`)
    const expiresInMs = created.body.expiresAt * 1000 - engine.now().getTime()
    expect(expiresInMs).toBeGreaterThan(1000)

    await engine.advance(expiresInMs - 1000)
    expect((await shop.api("GET", `/v1/payments/${id}`)).body.status).toBe("requires_action")
    expect(engine.deliveries()).toHaveLength(0)

    await engine.advance(60_000)
    expect((await shop.api("GET", `/v1/payments/${id}`)).body.status).toBe("expired")
    expect(engine.deliveries().map((d) => d.type)).toEqual(["payment.expired"])
    // Paying now is refused by the gateway, as a wallet would be.
    await expect(engine.pay(id)).rejects.toThrow(/expired|invalid_state|no option/i)
  })

  it("a failing webhook receiver is retried on the engine's schedule as the clock moves", async () => {
    let answers = 0
    const engine = await start({
      settings: { webhookDelivery: { retryScheduleMs: [60_000, 600_000] } },
      webhooks: async (request) => {
        answers++
        await request.text()
        return new Response(null, { status: answers <= 2 ? 500 : 204 })
      }
    })
    const shop = await shopOn(engine)
    const id = await shop.newPayment()
    await engine.decline(id)
    expect(engine.deliveries().map((d) => d.status)).toEqual([500])

    // The first retry is due about a minute later (±20 %), the second ten minutes after it.
    await engine.advance(30_000)
    expect(engine.deliveries()).toHaveLength(1)
    await engine.advance(60_000)
    expect(engine.deliveries().map((d) => d.status)).toEqual([500, 500])
    await engine.advance(15 * 60_000)
    expect(engine.deliveries().map((d) => d.status)).toEqual([500, 500, 204])
    // The same event each time, under the same id.
    expect(new Set(engine.deliveries().map((d) => d.headers["webhook-id"])).size).toBe(1)
    await engine.advance(60 * 60_000)
    expect(answers).toBe(3)
  })

  it("pays with a given key and token, and refuses a token it does not offer", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
    const paid = await engine.pay(await shop.newPayment(), { token: "USDC", account: key })
    expect(paid.buyer).toBe(`${engine.network.chainId}:${privateKeyToAccount(key).address}`)
    await expect(engine.pay(await shop.newPayment(), { token: "DAI" })).rejects.toThrow(
      /no option in DAI/
    )
  })

  it("an unfunded buyer: the confirm is refused as a wallet's would be, and the payment still waits", async () => {
    const engine = await start()
    const shop = await shopOn(engine)
    const id = await shop.newPayment()
    await expect(engine.pay(id, { fund: false })).rejects.toThrow(/insufficient|balance/i)
    expect((await shop.api("GET", `/v1/payments/${id}`)).body.status).toBe("requires_action")
  })

  it("a payment it does not know: each scripted step says so", async () => {
    const engine = await start()
    await expect(engine.pay("pay_0000000000000000000000")).rejects.toThrow(/404 payment_not_found/)
    await expect(engine.decline("pay_0000000000000000000000")).rejects.toThrow(/404/)
    await expect(engine.settle("pay_0000000000000000000000")).rejects.toThrow(
      /no payment pay_0000000000000000000000/
    )
  })

  it("under a base path (publicUrl with a path), the buyer pays through it", async () => {
    const engine = await start({ settings: { publicUrl: "https://shop.example/pay" } })
    expect(engine.basePath).toBe("/pay")
    const partner = await engine.partners.create({ name: "Prefixed" })
    const api = partnerApi(engine, partner.apiKey)
    const outside = await api("GET", "/v1/merchants")
    expect(outside.status).toBe(404)
    const merchant = await api("POST", "/pay/v1/merchants", {
      merchantName: "Prefixed shop",
      merchantEmail: "owner@prefixed.example"
    })
    const merchantId = merchant.body.merchant.id
    await api("POST", `/pay/v1/merchants/${merchantId}/settlements/crypto`, {
      settlements: [
        { asset: engine.network.usdc, destination: `${engine.network.chainId}:${MERCHANT_WALLET}` }
      ]
    })
    const created = await api(
      "POST",
      "/pay/v1/payments",
      { referenceId: "P-1", amount: { value: "100", unit: "iso4217/USD" } },
      { "merchant-id": merchantId }
    )
    expect(created.body.gatewayUrl).toMatch(/^https:\/\/shop\.example\/pay\/pay_/)
    expect((await engine.pay(created.body.paymentId)).status).toBe("succeeded")
  })

  it("logs nothing by default: not the engine's lines, nor Effect's default logger's from its scripted steps", async () => {
    const written = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {})
    )
    try {
      const engine = await start()
      const shop = await shopOn(engine)
      const paid = await shop.newPayment()
      await engine.pay(paid)
      await engine.settle(paid)
      await shop.newPayment()
      // An expiry through the clock: the sweep's pass runs from the test engine's own call.
      await engine.advance(60 * 60_000)
      expect(engine.deliveries().map((d) => d.type)).toContain("payment.expired")
      for (const spy of written) expect(spy).not.toHaveBeenCalled()
    } finally {
      for (const spy of written) spy.mockRestore()
    }
  })

  it("advance takes whole milliseconds only", async () => {
    const engine = await start()
    await expect(engine.advance(-1)).rejects.toThrow(RangeError)
    await expect(engine.advance(1.5)).rejects.toThrow(RangeError)
    const before = engine.now().getTime()
    await engine.advance(0)
    expect(engine.now().getTime()).toBe(before)
  })
})

describe("createTestEngine with eth: the network's own coin", () => {
  /** A merchant settled in the test network's ETH (and USDC), and a payment in USD. */
  const ethShopOn = async (engine: TestEngine) => {
    const partner = await engine.partners.create({ name: "Coin platform" })
    const api = partnerApi(engine, partner.apiKey)
    const merchant = await api("POST", "/v1/merchants", {
      merchantName: "Coin shop",
      merchantEmail: "owner@coin.example"
    })
    const merchantId = merchant.body.merchant.id as string
    const destination = `${engine.network.chainId}:${MERCHANT_WALLET}`
    const settlements = await api("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      settlements: [
        { asset: engine.network.usdc, destination },
        { asset: engine.network.eth, destination }
      ]
    })
    expect(settlements.status, JSON.stringify(settlements.body)).toBeLessThan(300)
    expect(
      (await api("POST", "/v1/webhook-endpoints", { url: "https://coin.test/hooks" })).status
    ).toBe(201)
    const newPayment = async (cents = "1250") => {
      const created = await api(
        "POST",
        "/v1/payments",
        { referenceId: "ORDER-ETH", amount: { value: cents, unit: "iso4217/USD" } },
        { "merchant-id": merchantId }
      )
      expect(created.status).toBe(201)
      return created.body.paymentId as string
    }
    return { api, newPayment }
  }

  /** 12.50 USD at 3,000 USD an ETH, in wei, rounded up. */
  const TWELVE_FIFTY_IN_WEI = 4_166_666_666_666_667n

  it("is off by default: the network offers USDC only", async () => {
    const engine = await start()
    expect(engine.network.eth).toBeUndefined()
    expect(engine.chain.network.tokens.map((t) => t.symbol)).toEqual(["USDC"])
  })

  it("pays in ETH by the buyer's transfer, succeeds, and settles the amount less fees, fees.network paying the settlement's gas", async () => {
    const engine = await start({
      eth: true,
      settings: { fees: { default: { fixed: "0", percentage: "1" } } }
    })
    expect(engine.network.eth).toBe("eip155:84532/slip44:60")
    const shop = await ethShopOn(engine)
    const id = await shop.newPayment()
    const collector = engine.chain.network.collector
    const gasMoney = engine.chain.coinBalance(collector)

    const paid = await engine.pay(id, { token: "ETH" })

    expect(paid).toMatchObject({ status: "succeeded", failureCode: null })
    // One transfer from the buyer to the collector, the option's value, its data the reference.
    const sent = engine.chain.mined.filter((t) => t.call.kind === "coin" && t.sender !== collector)
    expect(sent).toHaveLength(1)
    expect(paid.buyer).toBe(`${engine.network.chainId}:${sent[0]!.sender}`)
    expect(sent[0]).toMatchObject({ to: collector, value: TWELVE_FIFTY_IN_WEI, success: true })
    expect(sent[0]!.data).toMatch(/^0x[0-9a-f]{64}$/)

    const settlement = await engine.settle(id)

    // 1 % of the amount, and a plain transfer's gas (21,000) at the quoted max fee (2 gwei).
    const percentage = (TWELVE_FIFTY_IN_WEI + 50n) / 100n
    const network = 21_000n * engine.chain.quote.maxFeePerGas
    expect(settlement?.status).toBe("settled")
    expect(settlement?.amount).toBe(TWELVE_FIFTY_IN_WEI - percentage - network)
    expect(engine.chain.coinBalance(MERCHANT_WALLET)).toBe(settlement?.amount)
    const read = await shop.api("GET", `/v1/payments/${id}`)
    expect(read.body.fees).toMatchObject({
      total: { value: (percentage + network).toString() },
      network: { value: network.toString() }
    })
    // The settlement's gas came out of the fees, not the operator's gas money.
    const settled = engine.chain.mined.filter((t) => t.sender === collector)
    expect(settled).toHaveLength(1)
    expect(settled[0]!.gasCost).toBe(network)
    expect(engine.chain.coinBalance(collector)).toBe(gasMoney + percentage)
    expect(engine.deliveries().map((d) => d.type)).toEqual([
      "payment.processing",
      "payment.succeeded",
      "payment.settled"
    ])
  })

  it("USDC beside it: still offered first and paid as before, the collector's gas paid from its gas money", async () => {
    const engine = await start({ eth: true })
    const shop = await ethShopOn(engine)
    const collector = engine.chain.network.collector
    const gasMoney = engine.chain.coinBalance(collector)
    const id = await shop.newPayment()

    expect((await engine.pay(id)).status).toBe("succeeded")
    await engine.settle(id)

    const kinds = engine.chain.mined.map((t) => t.call.kind)
    expect(kinds).toEqual(["receive", "transfer"])
    const burned = engine.chain.mined.reduce((sum, t) => sum + t.gasCost, 0n)
    expect(burned).toBeGreaterThan(0n)
    expect(engine.chain.coinBalance(collector)).toBe(gasMoney - burned)
  })

  it("a transfer of another value: failed, transaction_mismatch, what arrived kept at the collector", async () => {
    const engine = await start({ eth: true })
    const shop = await ethShopOn(engine)
    const id = await shop.newPayment()
    const collector = engine.chain.network.collector
    const gasMoney = engine.chain.coinBalance(collector)

    const outcome = await engine.pay(id, {
      token: "ETH",
      transfer: (asked) => ({ ...asked, value: asked.value - 1n })
    })

    expect(outcome).toMatchObject({ status: "failed", failureCode: "transaction_mismatch" })
    expect(engine.chain.coinBalance(collector)).toBe(gasMoney + TWELVE_FIFTY_IN_WEI - 1n)
    expect(engine.deliveries().filter((d) => d.type === "payment.failed")).toHaveLength(1)
    expect(engine.deliveries().filter((d) => d.type === "payment.succeeded")).toHaveLength(0)
  })

  it("a dropped transfer (the wallet's cancel took its nonce): failed, transaction_dropped, nothing moved", async () => {
    const engine = await start({ eth: true })
    const shop = await ethShopOn(engine)
    const id = await shop.newPayment()
    const collector = engine.chain.network.collector
    const gasMoney = engine.chain.coinBalance(collector)
    engine.chain.dropIf = (tx) => tx.call.kind === "coin" && tx.sender !== collector

    const outcome = await engine.pay(id, { token: "ETH" })

    expect(outcome).toMatchObject({ status: "failed", failureCode: "transaction_dropped" })
    expect(engine.chain.dropped).toHaveLength(1)
    expect(engine.chain.mined.map((t) => t.call.kind)).toEqual(["cancel"])
    expect(engine.chain.coinBalance(collector)).toBe(gasMoney)
    expect(engine.deliveries().filter((d) => d.type === "payment.failed")).toHaveLength(1)
  })

  it("a transfer the chain reverts (failOnChain): failed, transaction_reverted", async () => {
    const engine = await start({ eth: true })
    const shop = await ethShopOn(engine)
    const outcome = await engine.failOnChain(await shop.newPayment(), { token: "ETH" })
    expect(outcome).toMatchObject({ status: "failed", failureCode: "transaction_reverted" })
  })

  it("an unfunded buyer: its wallet cannot send the transfer, and the payment still waits", async () => {
    const engine = await start({ eth: true })
    const shop = await ethShopOn(engine)
    const id = await shop.newPayment()
    await expect(engine.pay(id, { token: "ETH", fund: false })).rejects.toThrow(
      /insufficient funds/
    )
    expect((await shop.api("GET", `/v1/payments/${id}`)).body.status).toBe("requires_action")
  })
})
