/**
 * `verifyWebhook` as a receiver imports it from @pay/client: a delivery
 * signed by the Standard Webhooks reference library verifies; a tampered one
 * does not.
 */
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { verifyWebhook, WebhookVerificationError } from "./index.js"

describe("verifyWebhook from @pay/client", () => {
  it("verifies a Standard Webhooks delivery, and refuses a tampered body", async () => {
    const secret = `whsec_${btoa("r".repeat(32))}`
    const body = JSON.stringify({ id: "evt_1", type: "payment.settled", data: { object: {} } })
    const at = new Date()
    const headers = {
      "webhook-id": "evt_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign("evt_1", at, body)
    }
    expect(await verifyWebhook(body, headers, secret)).toEqual(JSON.parse(body))
    await expect(
      verifyWebhook(body.replace("settled", "failed"), headers, secret)
    ).rejects.toBeInstanceOf(WebhookVerificationError)
  })
})
