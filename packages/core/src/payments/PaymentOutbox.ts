/**
 * A payment's event for the outbox: `payment.<what>` carrying what
 * `GET /v1/payments/{id}` answers for the payment as written.
 */
import type { EventType, PayEvent } from "../events/Event.js"
import { type EventStamp, eventOf } from "../events/NewEvent.js"
import type { Merchant } from "../merchants/Merchant.js"
import type { Payment } from "./Payment.js"
import { paymentDetails, type ViewContext } from "./Views.js"

export const paymentEvent = (
  stamp: EventStamp,
  type: EventType,
  payment: Payment,
  merchant: Merchant | undefined,
  context: ViewContext
): PayEvent =>
  eventOf(stamp, payment.partnerId, type, paymentDetails(payment, merchant, context), {
    paymentId: payment.id,
    merchantId: payment.merchantId
  })
