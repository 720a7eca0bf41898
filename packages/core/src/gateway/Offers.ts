/**
 * Which options a payment offers to a set of buyer accounts, as a pure
 * function: for each account, each token the engine accepts on that
 * account's chain and the merchant settles in, one option at the locked
 * price. Unsupported chains and tokens without a price are left out, not
 * errors (SPEC.md 4.4).
 */
import type { Address, Hex } from "viem"
import { type ChainNetwork, type ChainToken, networkOf } from "../chain/Chain.js"
import type { ReceiveAuthorization } from "../chain/Eip3009.js"
import type { Payment } from "../payments/Payment.js"
import type { OptionId, PaymentOption } from "../payments/PaymentOption.js"
import { convert, type PriceQuote } from "../pricing/Pricing.js"
import { addressOfCaip10, type Caip10, type Caip19, chainOfCaip10 } from "../shared/Caip.js"

export interface OfferInput {
  readonly payment: Payment
  readonly accounts: ReadonlyArray<Caip10>
  readonly networks: ReadonlyArray<ChainNetwork>
  /** Assets the merchant has a live crypto settlement for. */
  readonly settledAssets: ReadonlySet<string>
  /** `1 from = rate to`, or undefined when the engine has no price. */
  readonly rate: (from: string, to: string) => PriceQuote | undefined
  readonly now: Date
  readonly quoteLockMs: number
  readonly collectData: boolean
  /** The requesting wallet's `Client-Id`, kept with each option. */
  readonly clientId: string | null
  readonly newOptionId: () => OptionId
  /** 32 random bytes as hex: each authorization's nonce. */
  readonly newNonce: () => Hex
}

const addressOf = (account: Caip10) => addressOfCaip10(account) as Address

const seconds = (date: Date): bigint => BigInt(Math.floor(date.getTime() / 1000))

/**
 * The instant down to its whole second. An option expires on a whole second: the one wallets are
 * shown (`expiresAt` in Unix seconds) and the authorization's `validBefore`, after which the
 * token refuses the transfer. Were the engine's own deadline up to a second later, a confirm in
 * between would pass its checks and then fail the payment on chain, instead of a 409.
 */
const wholeSecond = (date: Date): Date => new Date(Math.floor(date.getTime() / 1000) * 1000)

/** The token amount that pays `payment`, and the rate used, if any; undefined if none can. */
const priceIn = (
  payment: Payment,
  token: { readonly asset: Caip19; readonly decimals: number; readonly priceCurrency: string },
  rate: OfferInput["rate"]
):
  | { readonly value: bigint; readonly quoted: boolean; readonly rate: PriceQuote | null }
  | undefined => {
  const unit = payment.amount.unit
  if (unit.kind === "token") {
    return unit.asset === token.asset
      ? { value: payment.amount.value, quoted: false, rate: null }
      : undefined
  }
  const r = rate(unit.currency.code, token.priceCurrency)
  if (r === undefined) return undefined
  return {
    value: convert(payment.amount.value, unit.currency.decimals, r, token.decimals),
    quoted: true,
    rate: r
  }
}

/** A token the payment can be paid in, whatever the buyer's account: its network, its amount. */
export interface PayableToken {
  readonly network: ChainNetwork
  readonly token: ChainToken
  /** In the token's minor units, at the current price for a fiat payment. */
  readonly value: bigint
  readonly quoted: boolean
  /** The rate `value` was converted at; null for a payment asked in the token. */
  readonly rate: PriceQuote | null
}

/**
 * Every token of the networks that the merchant settles in and that has a price for the
 * payment, in the networks' order: what any account on those networks is offered (and what the
 * checkout page names before a wallet is opened).
 */
export const payableTokens = (
  input: Pick<OfferInput, "payment" | "networks" | "settledAssets" | "rate">
): ReadonlyArray<PayableToken> =>
  input.networks.flatMap((network) =>
    network.tokens.flatMap((token): ReadonlyArray<PayableToken> => {
      if (!input.settledAssets.has(token.asset)) return []
      const price = priceIn(input.payment, token, input.rate)
      return price === undefined || price.value <= 0n ? [] : [{ network, token, ...price }]
    })
  )

export const offers = (input: OfferInput): ReadonlyArray<PaymentOption> => {
  const { payment, now } = input
  const payable = payableTokens(input)
  const out: Array<PaymentOption> = []
  const seen = new Set<string>()
  for (const account of input.accounts) {
    // The same account sent twice is offered once.
    const key = account.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    const network = networkOf(input.networks, chainOfCaip10(account))
    if (network === undefined) continue
    for (const price of payable) {
      if (price.network.chainId !== network.chainId) continue
      const { token } = price
      const lockedUntil = new Date(
        Math.min(now.getTime() + input.quoteLockMs, payment.expiresAt.getTime())
      )
      const expiresAt = wholeSecond(price.quoted ? lockedUntil : payment.expiresAt)
      const authorization: ReceiveAuthorization = {
        from: addressOf(account),
        to: network.collector,
        value: price.value,
        validAfter: 0n,
        validBefore: seconds(expiresAt),
        nonce: input.newNonce()
      }
      out.push({
        id: input.newOptionId(),
        paymentId: payment.id,
        account,
        asset: token.asset,
        method: token.authorization,
        authorization,
        // Read from the chain by the gateway: whether the buyer's allowance covers it.
        approvals: [],
        rate: price.rate,
        expiresAt,
        quoted: price.quoted,
        collectData: input.collectData,
        clientId: input.clientId,
        createdAt: now
      })
    }
  }
  return out
}
