/**
 * A stored payment option read back, for the SQL stores: the columns SQLite
 * and PostgreSQL return alike (text, the authorization's uint256 numbers as
 * decimal text) are mapped here, once. Times (SQLite: ms integers;
 * PostgreSQL: timestamptz, a Date) and flags (SQLite: 0 or 1; PostgreSQL:
 * boolean) come back differently, so each store converts them and passes them in.
 */
import type { TokenAuthorization } from "../chain/Permission.js"
import type { PaymentId } from "../payments/Payment.js"
import type { OptionId, PaymentOption } from "../payments/PaymentOption.js"
import type { PriceQuote } from "../pricing/Pricing.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"

/** The columns of a payment option, as both drivers return them. */
export interface PaymentOptionColumns {
  readonly id: string
  readonly payment_id: string
  readonly account: string
  readonly asset: string
  /** Decimal text, as are `valid_after` and `valid_before`: exact up to 2^256 - 1. */
  readonly value: string
  readonly auth_from: string
  readonly auth_to: string
  readonly valid_after: string
  readonly valid_before: string
  readonly nonce: string
  readonly client_id: string | null
  readonly method: string
  /** Decimal amounts, comma-separated, in order; empty for none. */
  readonly approvals: string
  /** `rateToText`'s JSON; null for a price asked in the token. */
  readonly rate: string | null
}

/** The columns both stores write alike: the method, the approvals and the rate as text. */
export const paymentOptionTextColumns = (o: PaymentOption) => ({
  method: o.method,
  approvals: o.approvals.map(String).join(","),
  rate: o.rate === null ? null : rateToText(o.rate)
})

/** A frozen rate as stored: its bigints as decimal strings, its times in ms. */
const rateToText = (rate: PriceQuote): string =>
  JSON.stringify({
    numerator: rate.numerator.toString(),
    denominator: rate.denominator.toString(),
    readings: rate.readings.map((r) => ({
      pair: r.pair,
      feed: r.feed,
      roundId: r.roundId.toString(),
      answer: r.answer.toString(),
      decimals: r.decimals,
      updatedAt: r.updatedAt.getTime()
    }))
  })

const rateFromText = (text: string): PriceQuote => {
  const r = JSON.parse(text) as {
    numerator: string
    denominator: string
    readings: ReadonlyArray<{
      pair: string
      feed: string
      roundId: string
      answer: string
      decimals: number
      updatedAt: number
    }>
  }
  return {
    numerator: BigInt(r.numerator),
    denominator: BigInt(r.denominator),
    readings: r.readings.map((x) => ({
      pair: x.pair,
      feed: x.feed,
      roundId: BigInt(x.roundId),
      answer: BigInt(x.answer),
      decimals: x.decimals,
      updatedAt: new Date(x.updatedAt)
    }))
  }
}

/** The values each driver returns in its own way, converted by its store. */
export interface PaymentOptionDriverValues {
  readonly expiresAt: Date
  readonly quoted: boolean
  readonly collectData: boolean
  readonly createdAt: Date
}

type Authorization = PaymentOption["authorization"]

export const paymentOptionFromColumns = (
  r: PaymentOptionColumns,
  d: PaymentOptionDriverValues
): PaymentOption => ({
  id: r.id as OptionId,
  paymentId: r.payment_id as PaymentId,
  account: r.account as Caip10,
  asset: r.asset as Caip19,
  method: r.method as TokenAuthorization,
  approvals: r.approvals === "" ? [] : r.approvals.split(",").map((a) => BigInt(a)),
  rate: r.rate === null ? null : rateFromText(r.rate),
  authorization: {
    from: r.auth_from as Authorization["from"],
    to: r.auth_to as Authorization["to"],
    value: BigInt(r.value),
    validAfter: BigInt(r.valid_after),
    validBefore: BigInt(r.valid_before),
    nonce: r.nonce as Authorization["nonce"]
  },
  expiresAt: d.expiresAt,
  quoted: d.quoted,
  collectData: d.collectData,
  clientId: r.client_id,
  createdAt: d.createdAt
})
