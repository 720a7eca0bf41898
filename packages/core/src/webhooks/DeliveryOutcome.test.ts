import { describe, expect, it } from "vitest"
import { attemptOutcome, retryAfterMs } from "./DeliveryOutcome.js"
import type { WebhookResponse } from "./WebhookSender.js"
import { DEFAULT_RETRY_SCHEDULE_MS } from "./WebhookWorkConfig.js"

const at = new Date("2026-11-24T12:00:00.000Z")
const settings = { retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS, disableAfterMs: 5 * 86_400_000 }
const answered = (status: number, fields: Partial<WebhookResponse> = {}): WebhookResponse => ({
  status,
  body: "body",
  retryAfter: null,
  error: null,
  durationMs: 31,
  ...fields
})
const noResponse: WebhookResponse = {
  status: null,
  body: "",
  retryAfter: null,
  error: "no response within 15000 ms, the time limit",
  durationMs: 15_000
}
const waitOf = (o: ReturnType<typeof attemptOutcome>) => o.nextAttemptAt.getTime() - at.getTime()

describe("attempt outcomes", () => {
  it("any 2xx is delivered and ends the endpoint's run of failures", () => {
    for (const status of [200, 201, 202, 204, 299]) {
      const o = attemptOutcome(answered(status), 3, at, settings, 0.5)
      expect([o.state, o.endpoint._tag, o.attempt.error, o.attempt.responseStatus]).toEqual([
        "delivered",
        "Succeeded",
        null,
        status
      ])
    }
  })

  it("retries on the schedule, varied by at most ±20%, then fails for good after the last wait", () => {
    const schedule = DEFAULT_RETRY_SCHEDULE_MS
    schedule.forEach((wait, before) => {
      const low = attemptOutcome(answered(500), before, at, settings, 0)
      const high = attemptOutcome(answered(500), before, at, settings, 0.999_999)
      const middle = attemptOutcome(noResponse, before, at, settings, 0.5)
      expect(low.state).toBe("pending")
      expect(waitOf(low)).toBe(Math.round(wait * 0.8))
      expect(waitOf(high)).toBeLessThanOrEqual(Math.round(wait * 1.2))
      expect(waitOf(high)).toBeGreaterThan(Math.round(wait * 1.19))
      expect(waitOf(middle)).toBe(wait)
    })
    // About three days from the first attempt to the last.
    const total = schedule.reduce((sum, wait) => sum + wait, 0)
    expect(total / 86_400_000).toBeGreaterThan(2.5)
    expect(total / 86_400_000).toBeLessThan(3.5)
    const last = attemptOutcome(answered(500), schedule.length, at, settings, 0.5)
    expect(last.state).toBe("failed")
    expect(last.endpoint._tag).toBe("Failed")
  })

  it("honours Retry-After, in seconds or as a date, up to one hour", () => {
    const inSeconds = attemptOutcome(answered(503, { retryAfter: "120" }), 0, at, settings, 0.5)
    expect(waitOf(inSeconds)).toBe(120_000)
    const asDate = attemptOutcome(
      answered(429, { retryAfter: new Date(at.getTime() + 600_000).toUTCString() }),
      0,
      at,
      settings,
      0.5
    )
    expect(waitOf(asDate)).toBe(600_000)
    const tooLong = attemptOutcome(answered(503, { retryAfter: "86400" }), 0, at, settings, 0.5)
    expect(waitOf(tooLong)).toBe(3_600_000)
    const unreadable = attemptOutcome(answered(503, { retryAfter: "soon" }), 0, at, settings, 0.5)
    expect(waitOf(unreadable)).toBe(5_000)
    // It does not add attempts: the schedule's length still bounds them.
    const afterLast = attemptOutcome(
      answered(503, { retryAfter: "1" }),
      DEFAULT_RETRY_SCHEDULE_MS.length,
      at,
      settings,
      0.5
    )
    expect(afterLast.state).toBe("failed")
    expect([retryAfterMs(null, at), retryAfterMs(" 7 ", at)]).toEqual([undefined, 7000])
  })

  it("a 410 fails the delivery and disables the endpoint at once, saying why", () => {
    const o = attemptOutcome(answered(410), 0, at, settings, 0.5)
    expect(o.state).toBe("failed")
    expect(o.endpoint._tag).toBe("Gone")
    expect(o.endpoint._tag === "Gone" && o.endpoint.reason).toContain("410 Gone")
  })

  it("a failure asks to disable the endpoint if it has failed since five days before", () => {
    const o = attemptOutcome(answered(302), 0, at, settings, 0.5)
    expect(o.endpoint).toEqual({
      _tag: "Failed",
      disableIfFailingSince: new Date(at.getTime() - 5 * 86_400_000),
      reason: expect.stringContaining("every delivery failed for 5 days")
    })
    expect(o.attempt.error).toBe(
      "HTTP 302: only a 2xx answer counts as delivered (redirects are not followed)"
    )
    const none = attemptOutcome(noResponse, 0, at, settings, 0.5)
    expect([none.attempt.responseStatus, none.attempt.responseBody, none.attempt.error]).toEqual([
      null,
      null,
      noResponse.error
    ])
  })
})
