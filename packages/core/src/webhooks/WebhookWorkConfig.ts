/**
 * The settings of webhook delivery (the engine's `webhookDelivery` option):
 * decoding applies every default. In a module of their own so that the
 * engine's options (EngineOptions.ts) do not import the runner.
 */
import { Context, Schema } from "effect"
import { wholeNumber } from "../shared/WholeNumber.js"

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * Nine attempts over about three days (5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * then daily): the last one about 2.7 days after the first.
 */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  DAY,
  DAY
] as ReadonlyArray<number>

export const WebhookDeliverySettings = Schema.Struct({
  /** How often an idle instance looks for due deliveries. */
  pollMs: Schema.optionalWith(wholeNumber(10, 60_000, "milliseconds"), { default: () => 250 }),
  /**
   * How long a claim holds a delivery before another instance may take it over:
   * longer than an attempt can take (15 s), with room for the write that records it.
   */
  leaseMs: Schema.optionalWith(wholeNumber(1_000, 600_000, "milliseconds"), {
    default: () => 60 * SECOND
  }),
  /** The most deliveries one instance sends at once. */
  concurrency: Schema.optionalWith(wholeNumber(1, 1000, "deliveries"), { default: () => 32 }),
  /** The most deliveries in flight to one endpoint at once, across every instance. */
  perEndpoint: Schema.optionalWith(wholeNumber(1, 1000, "deliveries"), { default: () => 8 }),
  /**
   * The most deliveries in flight to one partner's endpoints together, across
   * every instance: below `concurrency`, so a partner whose endpoints hang
   * (each up to `perEndpoint`) leaves slots for every other partner.
   */
  perPartner: Schema.optionalWith(wholeNumber(1, 1000, "deliveries"), { default: () => 16 }),
  /**
   * The most live (not deleted) endpoints one partner may have: each one
   * multiplies every event's deliveries, so a partner cannot mint thousands.
   */
  maxEndpointsPerPartner: Schema.optionalWith(wholeNumber(1, 10_000, "endpoints"), {
    default: () => 16
  }),
  /**
   * The waits before each retry, in milliseconds: the first is after the
   * first failed attempt; a delivery fails for good once they are used up.
   * Each wait is varied by up to ±20% (jitter).
   */
  retryScheduleMs: Schema.optionalWith(
    Schema.Array(wholeNumber(0, 7 * 86_400_000, "milliseconds")).pipe(
      Schema.maxItems(50, { message: () => "must have at most 50 waits" })
    ),
    { default: () => DEFAULT_RETRY_SCHEDULE_MS }
  ),
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: Schema.optionalWith(wholeNumber(1_000, 90 * 86_400_000, "milliseconds"), {
    default: () => 5 * DAY
  }),
  /** One attempt's time limit: connecting, sending, the response and its body. */
  timeoutMs: Schema.optionalWith(wholeNumber(100, 120_000, "milliseconds"), {
    default: () => 15 * SECOND
  })
})
export type WebhookDeliverySettings = typeof WebhookDeliverySettings.Type

export class WebhookDeliveryConfig extends Context.Tag("@pay/core/WebhookDeliveryConfig")<
  WebhookDeliveryConfig,
  WebhookDeliverySettings
>() {}

/** `Retry-After` is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = HOUR
/** Response bodies are recorded up to this many bytes. */
export const MAX_RESPONSE_BYTES = 64 * 1024
