/**
 * Webhook signatures against the Standard Webhooks reference library
 * (`standardwebhooks` on npm): what the engine signs, it verifies; what it
 * signs, our `verifyWebhook` verifies; rotation's two signatures; replays,
 * tampering and missing headers refused.
 */
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  webhookHeaders
} from "./Signature.js"

const body = JSON.stringify({ id: "evt_1", type: "payment.succeeded", data: { object: { a: 1 } } })
const now = () => Math.floor(Date.now() / 1000)

describe("Standard Webhooks signatures", () => {
  it("generates whsec_ secrets of 32 random bytes", () => {
    const secret = generateWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(generateWebhookSecret()).not.toBe(secret)
  })

  it("what the engine signs, the reference library verifies", async () => {
    const secret = generateWebhookSecret()
    const headers = await webhookHeaders([secret], "evt_1", now(), body)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
  })

  it("what the reference library signs, verifyWebhook verifies (Headers or Node's record)", async () => {
    const secret = generateWebhookSecret()
    const at = new Date()
    const signature = new Webhook(secret).sign("msg_1", at, body)
    const record = {
      "Webhook-Id": "msg_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature
    }
    expect(await verifyWebhook(body, record, secret)).toEqual(JSON.parse(body))
    expect(await verifyWebhook(body, new Headers(record), secret)).toEqual(JSON.parse(body))
  })

  it("during a rotation both secrets' signatures travel, and either one verifies", async () => {
    const old = generateWebhookSecret()
    const fresh = generateWebhookSecret()
    const headers = await webhookHeaders([fresh, old], "evt_2", now(), body)
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2)
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new Webhook(fresh).verify(body, headers)).toEqual(JSON.parse(body))
    expect(await verifyWebhook(body, headers, old)).toEqual(JSON.parse(body))
  })

  it("refuses another secret, a changed body, an old timestamp and missing headers", async () => {
    const secret = generateWebhookSecret()
    const headers = await webhookHeaders([secret], "evt_3", now(), body)
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => "verified",
        (e) => (e instanceof WebhookVerificationError ? e.message : `other: ${e}`)
      )
    expect(await refusal(verifyWebhook(body, headers, generateWebhookSecret()))).toMatch(
      /no signature/
    )
    expect(await refusal(verifyWebhook(`${body} `, headers, secret))).toMatch(/no signature/)
    const old = await webhookHeaders([secret], "evt_3", now() - 600, body)
    expect(await refusal(verifyWebhook(body, old, secret))).toMatch(/more than 300 s/)
    expect(() => new Webhook(secret).verify(body, old)).toThrow()
    expect(await refusal(verifyWebhook(body, { "webhook-id": "evt_3" }, secret))).toMatch(/missing/)
    // The id is signed: the same signature under another id does not verify.
    expect(
      await refusal(verifyWebhook(body, { ...headers, "webhook-id": "evt_4" }, secret))
    ).toMatch(/no signature/)
  })

  it("signs the exact bytes: id, timestamp and body joined by dots", async () => {
    const secret = `whsec_${btoa("k".repeat(32))}`
    const expected = new Webhook(secret).sign("evt_5", new Date(1_700_000_000_000), body)
    expect(await signWebhook([secret], "evt_5", 1_700_000_000, body)).toBe(expected)
  })
})
