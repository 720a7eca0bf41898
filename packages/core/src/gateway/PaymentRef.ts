/**
 * The `{id}` of a gateway path (WIRE.md section 1): usually the bare `pay_…`
 * id, but a wallet that does not recognise a buyer link's host sends the whole
 * link, percent-encoded twice. The router has decoded the segment once; this
 * decodes what is left and takes the id from the link's `pid` query parameter
 * or its last path segment.
 */
import { Schema } from "effect"
import { PaymentId } from "../payments/Payment.js"

const isPaymentId = Schema.is(PaymentId)

const decodeFully = (value: string): string | undefined => {
  let current = value
  // Twice-encoded at most, as SDKs send; a third level is not a link anyone sent.
  for (let i = 0; i < 2 && /%[0-9A-Fa-f]{2}/.test(current); i++) {
    try {
      current = decodeURIComponent(current)
    } catch {
      return undefined
    }
  }
  return current
}

/** The payment id a gateway path segment names, or undefined when it names none. */
export const paymentIdOfSegment = (segment: string): PaymentId | undefined => {
  if (isPaymentId(segment)) return segment
  const decoded = decodeFully(segment)
  if (decoded === undefined) return undefined
  if (isPaymentId(decoded)) return decoded
  if (!URL.canParse(decoded)) return undefined
  const url = new URL(decoded)
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  const pid = url.searchParams.get("pid")
  if (pid !== null) return isPaymentId(pid) ? pid : undefined
  const last = url.pathname
    .split("/")
    .filter((part) => part !== "")
    .at(-1)
  return last !== undefined && isPaymentId(last) ? last : undefined
}
