import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ChainWorkSettings } from "../chainwork/ChainWorkConfig.js"
import { HttpSettings } from "../http/HttpConfig.js"
import { PaymentsSettings } from "../payments/PaymentsConfig.js"
import { RateLimitSettings } from "../ratelimit/RateLimitConfig.js"
import { WebhookDeliverySettings } from "../webhooks/WebhookWorkConfig.js"
import { wholeNumber, wholeNumberRangeOf } from "./WholeNumber.js"

describe("a whole-number setting's range, read from its schema", () => {
  it("is the range the schema checks, with its unit", () => {
    expect(wholeNumberRangeOf({ n: wholeNumber(3, 9, "things") }, "n")).toEqual({
      from: 3,
      to: 9,
      unit: "things"
    })
    expect(wholeNumberRangeOf(PaymentsSettings.fields, "maxLongPollMs")).toEqual({
      from: 0,
      to: 120_000,
      unit: "milliseconds"
    })
    expect(wholeNumberRangeOf(HttpSettings.fields, "maxBodyBytes")).toEqual({
      from: 1024,
      to: 100 * 1024 * 1024,
      unit: "bytes"
    })
    expect(wholeNumberRangeOf(ChainWorkSettings.fields, "leaseMs").to).toBe(600_000)
  })

  it("reads through an optional field and an array's element", () => {
    expect(wholeNumberRangeOf(RateLimitSettings.from.fields, "burst")).toEqual({
      from: 0,
      to: 1_000_000,
      unit: "requests"
    })
    expect(wholeNumberRangeOf(WebhookDeliverySettings.fields, "retryScheduleMs")).toEqual({
      from: 0,
      to: 7 * 86_400_000,
      unit: "milliseconds"
    })
  })

  it("agrees with what the schema takes at its ends", () => {
    const { from, to } = wholeNumberRangeOf(PaymentsSettings.fields, "expirySweepMs")
    const decode = Schema.decodeUnknownEither(PaymentsSettings)
    expect(decode({ expirySweepMs: from })._tag).toBe("Right")
    expect(decode({ expirySweepMs: to })._tag).toBe("Right")
    expect(decode({ expirySweepMs: from - 1 })._tag).toBe("Left")
    expect(decode({ expirySweepMs: to + 1 })._tag).toBe("Left")
  })

  it("throws on a field that has none", () => {
    expect(() => wholeNumberRangeOf(HttpSettings.fields, "publicUrl")).toThrow(
      "publicUrl is not a whole-number setting"
    )
  })
})
