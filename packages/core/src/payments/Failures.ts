/**
 * The payments' errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type {
  InvalidState,
  LongPollsExhausted,
  MerchantInactive,
  PaymentExpired,
  PaymentNotFound,
  RefundExists
} from "./Payment.js"
import { LONG_POLL_RETRY_AFTER_SECONDS } from "./PaymentsConfig.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly PaymentNotFound: PaymentNotFound
    readonly InvalidState: InvalidState
    readonly PaymentExpired: PaymentExpired
    readonly LongPollsExhausted: LongPollsExhausted
    readonly MerchantInactive: MerchantInactive
    readonly RefundExists: RefundExists
  }
}

/** What each cap counts, as a refusal names it. */
const HELD_KINDS = {
  partner: "long-polls (maxHeldLongPolls)",
  public: "public long-polls (maxHeldPublicLongPolls)",
  payment: "public long-polls on this payment (maxHeldLongPollsPerPayment)"
} as const

export const paymentFailures: FailureReplies<
  | "PaymentNotFound"
  | "InvalidState"
  | "PaymentExpired"
  | "LongPollsExhausted"
  | "MerchantInactive"
  | "RefundExists"
> = {
  PaymentNotFound: (e) => replyOf(ApiErrors.PaymentNotFound, `No payment ${e.paymentId}`),
  // The reference answers 400 to a cancel that cannot happen; other refusals are 409 (WIRE.md).
  InvalidState: (e) =>
    replyOf(e.kind === "cancel" ? ApiErrors.CancelRefused : ApiErrors.InvalidState, e.message),
  PaymentExpired: (e) => replyOf(ApiErrors.PaymentExpired, `Payment ${e.paymentId} has expired`),
  LongPollsExhausted: (e) => ({
    ...replyOf(
      ApiErrors.TooManyLongPolls,
      `The server already holds ${e.held} ${HELD_KINDS[e.cap]}; retry in ${LONG_POLL_RETRY_AFTER_SECONDS} seconds, or ask without maxPollMs`
    ),
    headers: { "retry-after": String(LONG_POLL_RETRY_AFTER_SECONDS) }
  }),
  MerchantInactive: (e) =>
    replyOf(
      ApiErrors.MerchantInactive,
      `Merchant ${e.merchantId} is ${e.status} and cannot accept payments: only an active merchant can`
    ),
  RefundExists: (e) =>
    replyOf(ApiErrors.RefundExists, `Payment ${e.paymentId} already has a refund (${e.refundId})`)
}
