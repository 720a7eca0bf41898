/**
 * End to end over loopback against the real standalone server: payment
 * creation (SPEC.md 4.3, WIRE.md section 3 "Payments"), its validation and
 * idempotency, the full details of GET /v1/payments/{id}, and the OpenAPI
 * document's payment routes. What should succeed, and the engine's refusals,
 * go through the typed client (@pay/client); malformed bodies and headers,
 * requests without a key and replays compared byte for byte stay on raw HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  expectRefusal,
  issueFields,
  type Json,
  type Merchant,
  newKey,
  type PayClient,
  payClient,
  RFC3339,
  STORES,
  startServer,
  uniqueToken,
  unknownId,
  whole
} from "./e2e-support.js"
import {
  createPaymentRequest,
  details,
  EURC_BASE,
  MAX_UINT256,
  newPayment,
  PAYMENT_ID,
  REFUND_ID,
  setMerchantStatus,
  startProcessing,
  succeed,
  token,
  UNKNOWN_PAYMENT,
  USDC_BASE,
  usd
} from "./payments-support.js"

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  /** The typed client with the bootstrap partner's key, and with another partner's. */
  let pay: PayClient
  let other: PayClient
  let merchant: Merchant
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    pay = payClient(server)
    other = payClient(server, (await createPartner(server, "Other")).apiKey)
    merchant = await createMerchant(pay, "Pay Shop")
  })

  afterAll(async () => {
    await server?.stop()
  })

  const nowSeconds = () => Math.floor(Date.now() / 1000)

  /** POST /v1/payments over raw HTTP for the shared merchant, with a fresh idempotency key. */
  const post = (body: unknown, merchantId: string | null = merchant.id) =>
    createPaymentRequest(api, body, { merchantId, idempotencyKey: newKey() })

  /** The partner's payments whose referenceId contains `search`, through the client. */
  const listByReference = async (search: string, by: PayClient = pay) =>
    (await by.payments.list({ referenceId: search })).data

  describe("POST /v1/payments", () => {
    it("201 with paymentId, status, expiresAt (Unix seconds, now + 5 min), isFinal, gatewayUrl, pollInMs", async () => {
      const before = nowSeconds()
      const created = whole(
        pay,
        await pay.payments.create(merchant.id, { referenceId: "order-1001", amount: usd("1050") })
      )
      const after = nowSeconds()
      const response = pay.lastAnswer()
      expect(response.status, response.text).toBe(201)
      expect(response.headers.get("content-type")).toMatch(/^application\/json\b/)
      expect(Object.keys(response.body).sort()).toEqual(
        ["expiresAt", "gatewayUrl", "isFinal", "livemode", "paymentId", "pollInMs", "status"].sort()
      )
      expect(created.paymentId).toMatch(PAYMENT_ID)
      expect(created.status).toBe("requires_action")
      expect(created.isFinal).toBe(false)
      expect(Number.isInteger(created.expiresAt)).toBe(true)
      expect(created.expiresAt).toBeGreaterThanOrEqual(before + 300 - 1)
      expect(created.expiresAt).toBeLessThanOrEqual(after + 300 + 1)
      expect(created.gatewayUrl).toBe(`${server.config.publicUrl}/${created.paymentId}`)
      expect(Number.isInteger(created.pollInMs)).toBe(true)
      expect(created.pollInMs).toBeGreaterThan(0)
      // The server runs the sandbox chain: a test payment.
      expect(created.livemode).toBe(false)
    })

    it("a token amount: the unit and value are kept, with the token's display", async () => {
      const created = await newPayment(pay, merchant.id, { amount: token(USDC_BASE, "2500000") })
      const shown = whole(pay, await pay.payments.get(created.paymentId))
      const expected = {
        unit: `caip19/${USDC_BASE}`,
        value: "2500000",
        display: {
          assetSymbol: "USDC",
          assetName: "USD Coin",
          decimals: 6,
          networkName: "Base"
        }
      }
      expect(shown.amount).toEqual(expected)
      expect(shown.tokenAmount).toEqual(expected)
      expect(shown).not.toHaveProperty("fiatAmount")
    })

    it("expiresAt as Unix seconds is kept as given", async () => {
      const expiresAt = nowSeconds() + 3600
      const created = await newPayment(pay, merchant.id, { expiresAt })
      expect(created.expiresAt).toBe(expiresAt)
      expect((await pay.payments.get(created.paymentId)).expiresAt).toBe(expiresAt)
    })

    it("expiresAt as RFC 3339 (Z or an offset) is answered in Unix seconds", async () => {
      const at = new Date((nowSeconds() + 7200) * 1000)
      const inZ = await newPayment(pay, merchant.id, { expiresAt: at.toISOString() })
      expect(inZ.expiresAt).toBe(at.getTime() / 1000)
      const plusTwo = new Date(at.getTime() + 2 * 3600_000).toISOString().replace("Z", "+02:00")
      const withOffset = await newPayment(pay, merchant.id, { expiresAt: plusTwo })
      expect(withOffset.expiresAt).toBe(at.getTime() / 1000)
    })

    it("expiresAt in the past: 400 naming expiresAt, nothing created", async () => {
      const ref = `past-${uniqueToken()}`
      const amount = usd("100")
      for (const expiresAt of [nowSeconds() - 60, new Date(Date.now() - 60_000).toISOString()]) {
        expectError(await post({ referenceId: ref, amount, expiresAt }), 400, "params_validation", [
          "expiresAt"
        ])
      }
      expect(await listByReference(ref)).toEqual([])
    })

    it("expiresAt more than 30 days ahead: 400 naming expiresAt; 29 days is accepted", async () => {
      const day = 24 * 3600
      const tooFar = await post({
        referenceId: "far",
        amount: usd("100"),
        expiresAt: nowSeconds() + 31 * day
      })
      expectError(tooFar, 400, "params_validation", ["expiresAt"])
      const justOver = new Date(Date.now() + 30 * day * 1000 + 60_000).toISOString()
      expectError(
        await post({ referenceId: "far", amount: usd("100"), expiresAt: justOver }),
        400,
        "params_validation",
        ["expiresAt"]
      )
      const within = await newPayment(pay, merchant.id, { expiresAt: nowSeconds() + 29 * day })
      expect(within.status).toBe("requires_action")
    })

    it("expiresAt that is neither Unix seconds nor RFC 3339: 400 naming expiresAt", async () => {
      for (const expiresAt of ["tomorrow", "2030-01-01", 1.5, -5]) {
        expectError(
          await post({ referenceId: "bad-exp", amount: usd("100"), expiresAt }),
          400,
          "params_validation",
          ["expiresAt"]
        )
      }
    })

    it("checkout {successUrl, errorUrl} is stored and shown by GET /v1/payments/{id}", async () => {
      const checkout = {
        successUrl: "https://shop.example/thanks",
        errorUrl: "https://shop.example/oops"
      }
      const created = await newPayment(pay, merchant.id, { checkout })
      const shown = whole(pay, await pay.payments.get(created.paymentId))
      expect(shown.checkout).toEqual(checkout)
    })

    it("expiresAt null and checkout null mean the defaults", async () => {
      const before = nowSeconds()
      const created = await pay.payments.create(merchant.id, {
        referenceId: "nulls",
        amount: usd("100"),
        expiresAt: null,
        checkout: null
      })
      expect(created.expiresAt).toBeGreaterThanOrEqual(before + 299)
      expect(created.expiresAt).toBeLessThanOrEqual(nowSeconds() + 301)
      expect((await pay.payments.get(created.paymentId)).checkout).toBeNull()
    })

    it("checkout with an http:// URL: 400 naming it", async () => {
      const response = await post({
        referenceId: "co",
        amount: usd("100"),
        checkout: { successUrl: "http://shop.example/thanks", errorUrl: "https://shop.example/e" }
      })
      expectError(response, 400, "params_validation", ["checkout.successUrl"])
      expect(issueFields(response)).not.toContain("checkout.errorUrl")
    })

    it("without Merchant-Id: 400 missing_merchant_id", async () => {
      const response = await post({ referenceId: "x", amount: usd("100") }, null)
      expectError(response, 400, "missing_merchant_id", ["Merchant-Id"])
    })

    it("a malformed Merchant-Id: 400 naming it", async () => {
      for (const id of ["merchant-1", "mrch_", "pay_0000000000ZZZZZZZZZZ", "mrch_!!!!!!!!!!"]) {
        const response = await post({ referenceId: "x", amount: usd("100") }, id)
        expect(response.status, response.text).toBe(400)
        expectError(response, 400, "invalid_params", ["Merchant-Id"])
      }
    })

    it("an unknown merchant: 404 merchant_not_found", async () => {
      await expectRefusal(
        pay,
        newPayment(pay, unknownId("mrch"), { referenceId: "x", amount: usd("100") }),
        404,
        "merchant_not_found"
      )
    })

    it("another partner's merchant: 403 forbidden, nothing created", async () => {
      const theirs = await createMerchant(other, "Their shop")
      const ref = `theirs-${uniqueToken()}`
      await expectRefusal(
        pay,
        newPayment(pay, theirs.id, { referenceId: ref, amount: usd("100") }),
        403,
        "forbidden"
      )
      expect(await listByReference(ref, other)).toEqual([])
    })

    it("a deleted merchant: 404 merchant_not_found", async () => {
      const gone = await createMerchant(pay, "Gone shop")
      expect(await pay.merchants.delete(gone.id)).toEqual({ id: gone.id, deleted: true })
      await expectRefusal(
        pay,
        newPayment(pay, gone.id, { referenceId: "x", amount: usd("100") }),
        404,
        "merchant_not_found"
      )
    })

    it("an inactive or suspended merchant: 409 merchant_inactive; active again: 201", async () => {
      const shop = await createMerchant(pay, "Sleepy shop")
      for (const status of ["inactive", "suspended"] as const) {
        await setMerchantStatus(server, shop.id, status)
        await expectRefusal(
          pay,
          newPayment(pay, shop.id, { referenceId: "x", amount: usd("100") }),
          409,
          "merchant_inactive"
        )
      }
      await setMerchantStatus(server, shop.id, "active")
      const created = await newPayment(pay, shop.id, { referenceId: "x", amount: usd("100") })
      expect(created.status).toBe("requires_action")
    })

    it("amount values that are not positive whole minor units: 400 naming amount.value", async () => {
      const values: Array<unknown> = [
        "0",
        "-5",
        "10.5",
        "1e3",
        1050,
        "01",
        "",
        " 5",
        "0x10",
        "1000000000000001"
      ]
      for (const value of values) {
        const response = await post({ referenceId: "v", amount: { unit: "iso4217/USD", value } })
        expectError(response, 400, "params_validation", ["amount.value"])
        expect(issueFields(response), JSON.stringify(value)).not.toContain("amount.unit")
      }
    })

    it("a fiat amount of exactly 10^15 minor units is accepted", async () => {
      const created = await newPayment(pay, merchant.id, { amount: usd("1000000000000000") })
      expect((await pay.payments.get(created.paymentId)).amount.value).toBe("1000000000000000")
    })

    it("unknown, lowercase or unprefixed units and unknown tokens: 400 naming amount.unit", async () => {
      const units = [
        "iso4217/XYZ",
        "iso4217/usd",
        "USD",
        "usd",
        `caip19/eip155:8453/erc20:0x${"1".repeat(40)}`,
        "caip19/not-an-asset",
        USDC_BASE
      ]
      for (const unit of units) {
        const response = await post({ referenceId: "u", amount: { unit, value: "100" } })
        expectError(response, 400, "params_validation", ["amount.unit"])
        expect(issueFields(response), unit).not.toContain("amount.value")
      }
    })

    it("a token amount of 2^256 - 1 is accepted and echoed exactly; 2^256 is refused", async () => {
      const created = await newPayment(pay, merchant.id, { amount: token(EURC_BASE, MAX_UINT256) })
      const shown = await pay.payments.get(created.paymentId)
      expect(shown.amount.value).toBe(MAX_UINT256)
      expect(shown.tokenAmount?.value).toBe(MAX_UINT256)
      // Raw: the client refuses 2^256 itself, before sending.
      const over = await post({
        referenceId: "big",
        amount: token(EURC_BASE, (2n ** 256n).toString())
      })
      expectError(over, 400, "params_validation", ["amount.value"])
    })

    it("an unknown body field: 400 naming it", async () => {
      const response = await post({ referenceId: "x", amount: usd("100"), expiresIn: 60 })
      expectError(response, 400, "params_validation", ["expiresIn"])
    })

    it("several bad fields: every one is named", async () => {
      const response = await post({
        amount: { unit: "iso4217/XYZ", value: "-1" },
        checkout: { successUrl: "ftp://x.example", errorUrl: "https://ok.example" },
        colour: "red"
      })
      expectError(response, 400, "params_validation", [
        "referenceId",
        "amount.unit",
        "amount.value",
        "checkout.successUrl",
        "colour"
      ])
    })

    it("referenceId empty or missing, or amount missing: 400 naming them", async () => {
      expectError(await post({ referenceId: "", amount: usd("100") }), 400, "params_validation", [
        "referenceId"
      ])
      expectError(await post({ referenceId: "x" }), 400, "params_validation", ["amount"])
    })
  })

  describe("POST /v1/payments with Idempotency-Key", () => {
    it("a replay answers the identical body and creates no second payment", async () => {
      const ref = `idem-${uniqueToken()}`
      const key = newKey()
      const body = { referenceId: ref, amount: usd("990") }
      const first = await createPaymentRequest(api, body, {
        merchantId: merchant.id,
        idempotencyKey: key
      })
      const second = await createPaymentRequest(api, body, {
        merchantId: merchant.id,
        idempotencyKey: key
      })
      expect(first.status, first.text).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect((await listByReference(ref)).map((p) => p.paymentId)).toEqual([first.body.paymentId])
    })

    it("the same key with another body: 409 idempotency_conflict, nothing more created", async () => {
      const ref = `idemc-${uniqueToken()}`
      const key = newKey()
      await pay.payments.create(
        merchant.id,
        { referenceId: ref, amount: usd("990") },
        { idempotencyKey: key }
      )
      await expectRefusal(
        pay,
        pay.payments.create(
          merchant.id,
          { referenceId: ref, amount: usd("991") },
          { idempotencyKey: key }
        ),
        409,
        "idempotency_conflict"
      )
      expect(await listByReference(ref)).toHaveLength(1)
    })

    it("the same key and body for another merchant: 409 idempotency_conflict", async () => {
      const ref = `idemm-${uniqueToken()}`
      const key = newKey()
      const second = await createMerchant(pay, "Second shop")
      const body = { referenceId: ref, amount: usd("990") }
      await pay.payments.create(merchant.id, body, { idempotencyKey: key })
      await expectRefusal(
        pay,
        pay.payments.create(second.id, body, { idempotencyKey: key }),
        409,
        "idempotency_conflict"
      )
      expect(await listByReference(ref)).toHaveLength(1)
    })

    it("10 concurrent identical requests with one key: one payment, one answer", async () => {
      const ref = `idemp-${uniqueToken()}`
      const key = newKey()
      const body = { referenceId: ref, amount: usd("4200") }
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          createPaymentRequest(api, body, { merchantId: merchant.id, idempotencyKey: key })
        )
      )
      for (const response of responses) {
        expect(response.status, response.text).toBe(201)
        expect(response.text).toBe(responses[0]!.text)
      }
      const listed = await listByReference(ref)
      expect(listed.map((p) => p.paymentId)).toEqual([responses[0]!.body.paymentId])
    })

    it("without a key, two identical requests create two payments", async () => {
      // Raw: the client always sends a key.
      const ref = `nokey-${uniqueToken()}`
      const body = { referenceId: ref, amount: usd("100") }
      const a = await createPaymentRequest(api, body, { merchantId: merchant.id })
      const b = await createPaymentRequest(api, body, { merchantId: merchant.id })
      expect([a.status, b.status]).toEqual([201, 201])
      expect(a.body.paymentId).not.toBe(b.body.paymentId)
      expect(await listByReference(ref)).toHaveLength(2)
    })
  })

  describe("GET /v1/payments/{id}", () => {
    it("a new fiat payment: amount, fiatAmount, merchant, expiresAt, gatewayUrl, no buyer yet, info null", async () => {
      const ref = `details-${uniqueToken()}`
      const created = await newPayment(pay, merchant.id, { referenceId: ref, amount: usd("1050") })
      const body = whole(pay, await pay.payments.get(created.paymentId))
      const amount = {
        unit: "iso4217/USD",
        value: "1050",
        display: { assetSymbol: "USD", assetName: "US Dollar", decimals: 2 }
      }
      expect(body).toMatchObject({
        paymentId: created.paymentId,
        merchant: { id: merchant.id, name: "Pay Shop", iconUrl: null },
        referenceId: ref,
        status: "requires_action",
        isTerminal: false,
        isFinal: false,
        amount,
        fiatAmount: amount,
        expiresAt: created.expiresAt,
        gatewayUrl: created.gatewayUrl,
        info: null,
        checkout: null,
        refund: null
      })
      for (const absent of [
        "tokenAmount",
        "buyer",
        "transaction",
        "failureCode",
        "cancelledReason"
      ]) {
        expect(body).not.toHaveProperty(absent)
      }
      expect(body.createdAt).toMatch(RFC3339)
      expect(body.lastUpdatedAt).toMatch(RFC3339)
      expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(10_000)
    })

    it("processing shows tokenAmount, buyer and transaction; succeeded adds info; a refund shows", async () => {
      const created = await newPayment(pay, merchant.id, { amount: usd("2000") })
      const account = "eip155:8453:0x1111111111111111111111111111111111111111"
      const hash = `0x${"ab".repeat(32)}`
      await startProcessing(server, created.paymentId, {
        value: "20000000",
        account,
        hash,
        nonce: 7
      })
      const processing = whole(pay, await pay.payments.get(created.paymentId))
      const tokenAmount = {
        unit: `caip19/${USDC_BASE}`,
        value: "20000000",
        display: {
          assetSymbol: "USDC",
          assetName: "USD Coin",
          decimals: 6,
          networkName: "Base"
        }
      }
      expect(processing).toMatchObject({
        status: "processing",
        isTerminal: false,
        isFinal: false,
        tokenAmount,
        buyer: { accountCaip10: account, accountProviderName: "MetaMask" },
        transaction: { networkId: "8453", hash, nonce: 7 },
        info: null,
        refund: null
      })
      expect(processing.fiatAmount?.value).toBe("2000")

      const txId = `0x${"cd".repeat(32)}`
      await succeed(server, created.paymentId, txId)
      const succeeded = whole(pay, await pay.payments.get(created.paymentId))
      expect(succeeded).toMatchObject({
        status: "succeeded",
        isTerminal: true,
        isFinal: true,
        info: { optionAmount: tokenAmount, txId },
        refund: null
      })
      expect(succeeded).not.toHaveProperty("failureCode")

      const refunded = await pay.refunds.create(created.paymentId)
      const after = whole(pay, await pay.payments.get(created.paymentId))
      expect(after.refund).toEqual({
        refundId: refunded.refund.refundId,
        createdAt: refunded.refund.createdAt
      })
      expect(after.refund?.refundId).toMatch(REFUND_ID)
      expect(after.status).toBe("succeeded")
    })

    it("another partner's payment: 403 forbidden", async () => {
      const created = await newPayment(pay, merchant.id)
      await expectRefusal(other, other.payments.get(created.paymentId), 403, "forbidden")
    })

    it("an unknown payment: 404 payment_not_found", async () => {
      await expectRefusal(pay, pay.payments.get(UNKNOWN_PAYMENT), 404, "payment_not_found")
    })

    it("a malformed id names nothing: 404 payment_not_found, whatever its shape", async () => {
      // Raw: the client answers a malformed path id itself.
      for (const id of ["pay_x", "mrch_0000000000ZZZZZZZZZZ", "pay_00000000000000000000!"]) {
        const response = await details(api, encodeURIComponent(id))
        expectError(response, 404, "payment_not_found")
        expect(response.body.message).toBe(`No payment ${id}`)
      }
    })
  })

  describe("GET /openapi.json", () => {
    it("lists every payment route", async () => {
      const response = await api.get("/openapi.json", { key: null })
      expect(response.status).toBe(200)
      const paths = response.body.paths as Record<string, Record<string, unknown>>
      const operations = (path: string) => Object.keys(paths[path] ?? {}).sort()
      expect(operations("/v1/payments")).toEqual(expect.arrayContaining(["get", "post"]))
      expect(operations("/v1/payments/{id}")).toEqual(expect.arrayContaining(["get"]))
      expect(operations("/v1/payments/{id}/status")).toEqual(expect.arrayContaining(["get"]))
      expect(operations("/v1/payments/{id}/cancel")).toEqual(expect.arrayContaining(["post"]))
      expect(operations("/v1/refunds")).toEqual(expect.arrayContaining(["post"]))
      expect(operations("/v1/merchants/payments")).toEqual(expect.arrayContaining(["get"]))
      expect(operations("/v1/merchants/{merchant_id}/payments")).toEqual(
        expect.arrayContaining(["get"])
      )
      expect((paths["/v1/merchants/{merchant_id}/payments"]?.get as Json)?.deprecated).toBe(true)
    })
  })
})
