/**
 * The settings of webhook delivery, in a module of their own so that the
 * engine's configuration (Config.ts) does not import the runner.
 */

export interface WebhookDeliverySettings {
  /** How often an idle instance looks for due deliveries. */
  readonly pollMs?: number
  /** How long a claim holds a delivery before another instance may take it over. */
  readonly leaseMs?: number
  /** The most deliveries one instance sends at once. */
  readonly concurrency?: number
  /** The most deliveries in flight to one endpoint at once, across every instance. */
  readonly perEndpoint?: number
  /**
   * The waits before each retry, in milliseconds: the first is after the
   * first failed attempt; a delivery fails for good once they are used up.
   * Each wait is varied by up to ±20% (jitter).
   */
  readonly retryScheduleMs?: ReadonlyArray<number>
  /** An endpoint failing without a success for this long is disabled. */
  readonly disableAfterMs?: number
  /** One attempt's time limit: connecting, sending, the response and its body. */
  readonly timeoutMs?: number
}

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
] as const

export const DEFAULT_WEBHOOK_DELIVERY = {
  pollMs: 250,
  // Longer than an attempt can take (15 s), with room for the write that records it.
  leaseMs: 60 * SECOND,
  concurrency: 32,
  perEndpoint: 8,
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS as ReadonlyArray<number>,
  disableAfterMs: 5 * DAY,
  timeoutMs: 15 * SECOND
} as const

/** `Retry-After` is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = HOUR
/** Response bodies are recorded up to this many bytes. */
export const MAX_RESPONSE_BYTES = 64 * 1024
