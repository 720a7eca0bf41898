/**
 * How long the engine keeps the rows its features leave behind (the
 * engine's `retention` option), and how often the one purge (Purge.ts)
 * deletes those past their time. Buyer data's retention is the gateway's
 * (`gateway.buyerDataRetentionMs`), beside the policy that collects it; the
 * option a payment was paid with has none: it is kept as long as its
 * payment, which refunds read its rate from.
 */
import { Context, Schema } from "effect"
import { REPLAY_WINDOW_MS } from "../idempotency/Idempotency.js"
import { wholeNumber } from "../shared/WholeNumber.js"

const HOUR = 60 * 60_000
const DAY = 24 * HOUR
/** The longest any retention may be: ten years (the audit trail's, a hundred). */
const TEN_YEARS = 3650 * DAY

export const RetentionSettings = Schema.Struct({
  /**
   * Events (`GET /v1/events`, what webhooks send), from when they were
   * written, and never before their deliveries: an event a delivery still has
   * to send (pending) is kept until it is sent or has failed for good, and
   * one whose delivery records are kept (`webhookDeliveriesMs`) with them.
   * Default 90 days.
   */
  eventsMs: Schema.optionalWith(wholeNumber(DAY, TEN_YEARS, "milliseconds"), {
    default: () => 90 * DAY
  }),
  /**
   * Webhook deliveries that are over (delivered, or failed for good) and
   * every attempt of each, from its last attempt. A pending delivery, in
   * flight or waiting for a retry, is never purged. Default 30 days.
   */
  webhookDeliveriesMs: Schema.optionalWith(wholeNumber(DAY, TEN_YEARS, "milliseconds"), {
    default: () => 30 * DAY
  }),
  /**
   * Finished idempotency records, from their request. Replayed only within
   * `REPLAY_WINDOW_MS` (48 hours), so never shorter than it. Default 7 days.
   */
  idempotencyKeysMs: Schema.optionalWith(wholeNumber(REPLAY_WINDOW_MS, TEN_YEARS, "milliseconds"), {
    default: () => 7 * DAY
  }),
  /**
   * Payment options no payment was paid with, after they expire (a confirm of
   * one answers `quote_expired` until then). Never while their payment is
   * `processing`; the option a payment was paid with is kept as long as the
   * payment. Default 1 day.
   */
  expiredOptionsMs: Schema.optionalWith(wholeNumber(HOUR, TEN_YEARS, "milliseconds"), {
    default: () => DAY
  }),
  /**
   * The audit trail, from each entry's time. Left out (the default), the
   * engine never purges it; set, at least a year.
   */
  auditTrailMs: Schema.optional(wholeNumber(365 * DAY, 36_500 * DAY, "milliseconds")),
  /**
   * How often the purge runs: one instance a time (a lease in the database),
   * the first pass at start. Default 1 hour.
   */
  purgeEveryMs: Schema.optionalWith(wholeNumber(1_000, DAY, "milliseconds"), {
    default: () => HOUR
  })
})
export type RetentionSettings = typeof RetentionSettings.Type

export class RetentionConfig extends Context.Tag("@pay/core/RetentionConfig")<
  RetentionConfig,
  RetentionSettings
>() {}
