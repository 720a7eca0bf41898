/**
 * End to end over loopback against the real standalone server: POST
 * /v1/refunds (SPEC.md 4.5 and 7, WIRE.md section 3), a full-refund marker
 * allowed once per succeeded payment. Refunds, the payments they refund and
 * the engine's refusals go through the typed client (@pay/client); malformed
 * bodies, replays compared byte for byte and concurrent requests without a
 * key stay on raw HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  expectRefusal,
  type Merchant,
  newKey,
  type PayClient,
  payClient,
  RFC3339,
  STORES,
  startServer,
  whole
} from "./e2e-support.js"
import {
  decline,
  fail,
  newPayment,
  REFUND_ID,
  refund,
  sleep,
  startProcessing,
  succeed,
  UNKNOWN_PAYMENT,
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
    merchant = await createMerchant(pay, "Refund Shop")
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** A payment of the shared merchant driven to succeeded; returns its id. */
  const succeeded = async (amount = usd("1050")): Promise<string> => {
    const { paymentId } = await newPayment(pay, merchant.id, { amount })
    await startProcessing(server, paymentId)
    await succeed(server, paymentId)
    return paymentId
  }

  /** The payment's refund, as GET /v1/payments/{id} shows it. */
  const refundOf = async (paymentId: string) => (await pay.payments.get(paymentId)).refund

  describe("POST /v1/refunds", () => {
    it("a succeeded payment: 201 with refundId, paymentId, the amount, status requested, createdAt", async () => {
      const id = await succeeded(usd("1050"))
      const before = Date.now()
      const body = whole(pay, await pay.refunds.create(id)).refund
      const response = pay.lastAnswer()
      expect(response.status, response.text).toBe(201)
      expect(Object.keys(response.body)).toEqual(["refund"])
      expect(Object.keys(response.body.refund).sort()).toEqual(
        ["amount", "createdAt", "livemode", "paymentId", "refundId", "status"].sort()
      )
      expect(body.refundId).toMatch(REFUND_ID)
      expect(body).toMatchObject({
        paymentId: id,
        status: "requested",
        livemode: false,
        amount: {
          unit: "iso4217/USD",
          value: "1050",
          display: { assetSymbol: "USD", assetName: "US Dollar", decimals: 2 }
        }
      })
      expect(body.createdAt).toMatch(RFC3339)
      expect(Date.parse(body.createdAt)).toBeGreaterThanOrEqual(before - 1000)
      expect(Date.parse(body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000)
      const shown = whole(pay, await pay.payments.get(id))
      expect(shown.refund).toEqual({ refundId: body.refundId, createdAt: body.createdAt })
      expect(shown.status).toBe("succeeded")
    })

    it("a second refund of the same payment: 409 refund_exists", async () => {
      const id = await succeeded()
      const first = await pay.refunds.create(id)
      await expectRefusal(pay, pay.refunds.create(id), 409, "refund_exists")
      expect((await refundOf(id))?.refundId).toBe(first.refund.refundId)
    })

    it("a replay with the same Idempotency-Key answers the first 201", async () => {
      const id = await succeeded()
      const key = newKey()
      // Raw: the replay's bytes are compared.
      const request = () =>
        api.request("POST", "/v1/refunds", { body: { paymentId: id }, idempotencyKey: key })
      const first = await request()
      const second = await request()
      expect(first.status, first.text).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
    })

    it("concurrent refunds of one payment: exactly one 201, the others 409 refund_exists", async () => {
      const id = await succeeded()
      // Raw: ten requests without a key at once, each answer's shape checked.
      const responses = await Promise.all(Array.from({ length: 10 }, () => refund(api, id)))
      const created = responses.filter((r) => r.status === 201)
      expect(created).toHaveLength(1)
      for (const response of responses.filter((r) => r.status !== 201)) {
        expectError(response, 409, "refund_exists")
      }
      expect((await refundOf(id))?.refundId).toBe(created[0]!.body.refund.refundId)
    })

    it("a payment that did not succeed: 409 invalid_state, and no refund recorded", async () => {
      const open = (await newPayment(pay, merchant.id)).paymentId
      const processing = (await newPayment(pay, merchant.id)).paymentId
      await startProcessing(server, processing)
      const failed = (await newPayment(pay, merchant.id)).paymentId
      await startProcessing(server, failed)
      await fail(server, failed)
      const declined = (await newPayment(pay, merchant.id)).paymentId
      await decline(server, declined)
      const cancelled = (await newPayment(pay, merchant.id)).paymentId
      expect((await pay.payments.cancel(cancelled, { merchantId: merchant.id })).status).toBe(
        "cancelled"
      )
      const expiresAt = new Date(Date.now() + 800).toISOString()
      const expired = (await newPayment(pay, merchant.id, { expiresAt })).paymentId
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 30)
      for (const id of [open, processing, failed, declined, cancelled, expired]) {
        await expectRefusal(pay, pay.refunds.create(id), 409, "invalid_state")
        expect(await refundOf(id)).toBeNull()
      }
    })

    it("another partner's payment: 403 forbidden; an unknown one: 404 payment_not_found", async () => {
      const id = await succeeded()
      await expectRefusal(other, other.refunds.create(id), 403, "forbidden")
      expect(await refundOf(id)).toBeNull()
      await expectRefusal(pay, pay.refunds.create(UNKNOWN_PAYMENT), 404, "payment_not_found")
    })

    it("a malformed paymentId, a missing one or an unknown field: 400 naming it", async () => {
      const id = await succeeded()
      const post = (body: unknown) => api.request("POST", "/v1/refunds", { body })
      expectError(await post({ paymentId: "pay_!" }), 400, "params_validation", ["paymentId"])
      expectError(await post({}), 400, "params_validation", ["paymentId"])
      expectError(await post({ paymentId: id, amount: "100" }), 400, "params_validation", [
        "amount"
      ])
      expect(await refundOf(id)).toBeNull()
    })
  })
})
