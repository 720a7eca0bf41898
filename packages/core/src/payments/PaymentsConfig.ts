/**
 * The payments' settings: how long a payment lives, how its status is held
 * (long-polls) and how often expiries are recorded. Top-level engine options
 * (`paymentLifetimeMs`, …): decoding applies every default.
 */
import { Context, Schema } from "effect"
import { wholeNumber } from "../shared/WholeNumber.js"

/** A payment cannot be asked to stay open longer than this. */
export const MAX_PAYMENT_LIFETIME_MS = 30 * 24 * 60 * 60_000
/** The range `expirySweepMs` may take: 100 ms to an hour. */
export const MIN_EXPIRY_SWEEP_MS = 100
export const MAX_EXPIRY_SWEEP_MS = 3_600_000
/** The `Retry-After` (seconds) of a long-poll refused because too many are held. */
export const LONG_POLL_RETRY_AFTER_SECONDS = 2

export const PaymentsSettings = Schema.Struct({
  /** Lifetime of a payment created without `expiresAt` (WIRE.md: 5 minutes). */
  paymentLifetimeMs: Schema.optionalWith(
    wholeNumber(1000, MAX_PAYMENT_LIFETIME_MS, "milliseconds"),
    { default: () => 5 * 60_000 }
  ),
  /** The longest a status request is held (`maxPollMs` above it is capped). */
  maxLongPollMs: Schema.optionalWith(wholeNumber(0, 120_000, "milliseconds"), {
    default: () => 30_000
  }),
  /**
   * The most partners' status long-polls (`GET /v1/payments/{id}/status`) this
   * engine holds at once; one more is answered 503 `too_many_long_polls` with
   * `Retry-After`. Public polls (below) count apart: anyone holding a payment
   * link could otherwise fill this and refuse every partner's.
   */
  maxHeldLongPolls: Schema.optionalWith(wholeNumber(1, 10_000_000, "long-polls"), {
    default: () => 20_000
  }),
  /**
   * The most public status long-polls (the checkout page's `/{id}/status` and
   * the wallet gateway's, which need only the payment's link) held at once;
   * one more is answered as past `maxHeldLongPolls`.
   */
  maxHeldPublicLongPolls: Schema.optionalWith(wholeNumber(1, 10_000_000, "long-polls"), {
    default: () => 10_000
  }),
  /**
   * The most public status long-polls held at once for one payment: a buyer's
   * page and wallet need a few; one link opened thousands of times gets the
   * same refusal past this, and leaves the public cap to other payments.
   */
  maxHeldLongPollsPerPayment: Schema.optionalWith(wholeNumber(1, 10_000_000, "long-polls"), {
    default: () => 32
  }),
  /**
   * How often the expiry sweep runs: it records each payment whose time has
   * passed unpaid as expired (with its `payment.expired` event), so an expiry
   * is written at most this long after it is due. Every instance sweeps; each
   * expiry is recorded once.
   */
  expirySweepMs: Schema.optionalWith(
    wholeNumber(MIN_EXPIRY_SWEEP_MS, MAX_EXPIRY_SWEEP_MS, "milliseconds"),
    { default: () => 5_000 }
  )
})
export type PaymentsSettings = typeof PaymentsSettings.Type

export class PaymentsConfig extends Context.Tag("@pay/core/PaymentsConfig")<
  PaymentsConfig,
  PaymentsSettings
>() {}

/** The payments' settings with every default, as an engine left alone runs. */
export const defaultPaymentsSettings: PaymentsSettings = Schema.decodeSync(PaymentsSettings)({})
