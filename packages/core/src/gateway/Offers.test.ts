import { Either } from "effect"
import type { Address, Hex } from "viem"
import { describe, expect, it } from "vitest"
import type { ChainNetwork } from "../chain/Chain.js"
import { PERMIT2_ADDRESS } from "../chain/Permission.js"
import type { PartnerId } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import type { OptionId } from "../payments/PaymentOption.js"
import { lookup, parseRate } from "../pricing/Pricing.js"
import type { Amount } from "../shared/Amount.js"
import type { Caip2, Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { offers } from "./Offers.js"

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const COLLECTOR = "0x00000000000000000000000000000000000000C0" as Address
const usdcA = "eip155:31337/erc20:0x0000000000000000000000000000000000000A01" as Caip19
const eurcA = "eip155:31337/erc20:0x0000000000000000000000000000000000000A02" as Caip19
const usdcB = "eip155:8453/erc20:0x0000000000000000000000000000000000000B01" as Caip19

const network = (chainId: string, tokens: ChainNetwork["tokens"]): ChainNetwork => ({
  chainId: chainId as Caip2,
  reference: chainId.split(":")[1]!,
  name: chainId,
  iconUrl: null,
  collector: COLLECTOR,
  confirmations: 1,
  pollIntervalMs: 1000,
  stuckAfterMs: 60_000,
  etaSeconds: 5,
  permit2: PERMIT2_ADDRESS,
  tokens
})
const token = (asset: Caip19, symbol: string, priceCurrency: string, decimals = 6) => ({
  asset,
  address: asset.slice(asset.lastIndexOf(":") + 1) as Address,
  symbol,
  name: symbol,
  decimals,
  iconUrl: null,
  priceCurrency,
  authorization: "eip3009" as const
})
const networks = [
  network("eip155:31337", [token(usdcA, "USDC", "USD"), token(eurcA, "EURC", "EUR")]),
  network("eip155:8453", [token(usdcB, "USDC", "USD")])
]

const payment = (amount: Amount, expiresInMs = 15 * 60_000): Payment => ({
  id: "pay_00000000000000000001" as PaymentId,
  partnerId: "ptnr_00000000000000000000" as PartnerId,
  merchantId: "mrch_00000000000000000000" as MerchantId,
  referenceId: "order-1",
  amount,
  status: "requires_action",
  failureCode: null,
  cancelledReason: null,
  expiresAt: new Date(NOW + expiresInMs),
  createdAt: new Date(NOW),
  updatedAt: new Date(NOW),
  finalAt: null,
  checkout: null,
  tokenAmount: null,
  buyer: null,
  transaction: null,
  txId: null,
  refund: null,
  fees: null,
  settlement: null,
  livemode: true
})
const usd = (value: bigint): Amount => ({
  unit: { kind: "fiat", currency: findCurrency("USD")! },
  value
})

const rates = { "EUR/USD": Either.getOrThrow(parseRate("1.08")) }

const run = (
  p: Payment,
  accounts: ReadonlyArray<string>,
  settled: ReadonlyArray<Caip19>,
  at: { readonly now?: number; readonly quoteLockMs?: number } = {}
) => {
  let ids = 0
  return offers({
    payment: p,
    accounts: accounts as ReadonlyArray<Caip10>,
    networks,
    settledAssets: new Set(settled),
    rate: (from, to) => lookup(rates, from, to),
    now: new Date(at.now ?? NOW),
    quoteLockMs: at.quoteLockMs ?? 120_000,
    collectData: false,
    clientId: "client-1",
    newOptionId: () => `opt_${String(++ids).padStart(20, "0")}` as OptionId,
    newNonce: () => `0x${String(ids).padStart(64, "0")}` as Hex
  })
}

const buyerA = "eip155:31337:0x00000000000000000000000000000000000000b1"
const buyerB = "eip155:8453:0x00000000000000000000000000000000000000b2"

describe("offers", () => {
  it("offers each settled token on each account's chain, at the locked price", () => {
    const offered = run(
      payment(usd(1050n)),
      [buyerA, buyerB, "eip155:1:0x00000000000000000000000000000000000000b3", buyerA],
      [usdcA, eurcA, usdcB]
    )
    expect(offered.map((o) => [o.account, o.asset, o.authorization.value])).toEqual([
      [buyerA, usdcA, 10_500_000n],
      // $10.50 at 1 EUR = 1.08 USD: 9.722222… EURC, rounded up
      [buyerA, eurcA, 9_722_223n],
      [buyerB, usdcB, 10_500_000n]
    ])
    for (const o of offered) {
      expect(o.quoted).toBe(true)
      expect(o.expiresAt.getTime()).toBe(NOW + 120_000)
      expect(o.authorization).toMatchObject({
        to: COLLECTOR,
        validAfter: 0n,
        validBefore: BigInt((NOW + 120_000) / 1000)
      })
      expect(o.authorization.from.toLowerCase()).toBe(o.account.split(":")[2])
    }
    expect(new Set(offered.map((o) => o.authorization.nonce)).size).toBe(3)
  })

  it("leaves out tokens the merchant does not settle in, and currencies without a price", () => {
    expect(run(payment(usd(1050n)), [buyerA], [usdcB])).toEqual([])
    const yen: Amount = { unit: { kind: "fiat", currency: findCurrency("JPY")! }, value: 1000n }
    expect(run(payment(yen), [buyerA], [usdcA, eurcA])).toEqual([])
  })

  it("never locks a quote past the payment's own expiry", () => {
    const [option] = run(payment(usd(100n), 30_000), [buyerA], [usdcA])
    expect(option?.expiresAt.getTime()).toBe(NOW + 30_000)
  })

  it("ends a quote on the whole second its authorization's validBefore names, never later", () => {
    // Asked 400 ms into a second with a 1.5 s lock: locked until 1.9 s later, cut to 1 s later.
    const [option] = run(payment(usd(1050n)), [buyerA], [usdcA], {
      now: NOW + 400,
      quoteLockMs: 1_500
    })
    expect(option?.expiresAt.getTime()).toBe(NOW + 1_000)
    expect(option?.authorization.validBefore).toBe(BigInt((NOW + 1_000) / 1000))
  })

  it("ends an option on a whole second when the payment's own expiry is not one", () => {
    const asked: Amount = { unit: { kind: "token", asset: usdcA }, value: 2_000_000n }
    const [unquoted] = run(payment(asked, 60_750), [buyerA], [usdcA])
    expect(unquoted?.expiresAt.getTime()).toBe(NOW + 60_000)
    expect(unquoted?.authorization.validBefore).toBe(BigInt((NOW + 60_000) / 1000))
    const [quoted] = run(payment(usd(1050n), 30_750), [buyerA], [usdcA])
    expect(quoted?.expiresAt.getTime()).toBe(NOW + 30_000)
    expect(quoted?.authorization.validBefore).toBe(BigInt((NOW + 30_000) / 1000))
  })

  it("offers a token-denominated payment only in its own token, unquoted", () => {
    const asked: Amount = { unit: { kind: "token", asset: usdcB }, value: 2_000_000n }
    const offered = run(payment(asked), [buyerA, buyerB], [usdcA, usdcB])
    expect(offered.map((o) => [o.asset, o.authorization.value, o.quoted])).toEqual([
      [usdcB, 2_000_000n, false]
    ])
    expect(offered[0]?.expiresAt.getTime()).toBe(NOW + 15 * 60_000)
  })
})
