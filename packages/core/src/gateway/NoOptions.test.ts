/**
 * Why a payment offers no option: each reason where it holds, first one first, and its words.
 */
import { Either } from "effect"
import type { Address } from "viem"
import { describe, expect, it } from "vitest"
import type { ChainNetwork } from "../chain/Chain.js"
import { PERMIT2_ADDRESS } from "../chain/Permission.js"
import type { Payment } from "../payments/Payment.js"
import { lookup, parseRate } from "../pricing/Pricing.js"
import type { Amount } from "../shared/Amount.js"
import type { Caip2, Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { defaultNetworks, defaultTokens, makeTokenRegistry } from "../shared/TokenRegistry.js"
import { type NoOptionsInput, noOptionsReason, noOptionsText, noOptionsView } from "./NoOptions.js"
import { payableTokens } from "./Offers.js"

const SANDBOX_USDC = "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116" as Caip19
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42" as Caip19
const BUYER_SANDBOX = "eip155:31337:0x00000000000000000000000000000000000000b1" as Caip10
const BUYER_BASE = "eip155:8453:0x00000000000000000000000000000000000000b2" as Caip10

const sandbox: ChainNetwork = {
  chainId: "eip155:31337" as Caip2,
  reference: "31337",
  name: "Pay sandbox",
  iconUrl: null,
  collector: "0x00000000000000000000000000000000000000C0" as Address,
  confirmations: 1,
  pollIntervalMs: 1000,
  stuckAfterMs: 60_000,
  etaSeconds: 2,
  permit2: PERMIT2_ADDRESS,
  tokens: [
    {
      asset: SANDBOX_USDC,
      address: "0x1cd2272Cf2400da5cB86ccc008e3bE381C167116" as Address,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      iconUrl: null,
      priceCurrency: "USD",
      authorization: "eip3009"
    }
  ]
}
const registry = makeTokenRegistry(defaultNetworks, defaultTokens)

const payment = (amount: Amount): Payment =>
  ({ amount, expiresAt: new Date(Date.UTC(2026, 10, 22, 12, 5)) }) as unknown as Payment
const fiat = (code: string, value: bigint): Amount => ({
  unit: { kind: "fiat", currency: findCurrency(code)! },
  value
})
const rates = { "EUR/USD": Either.getOrThrow(parseRate("1.08")) }

const input = (
  amount: Amount,
  settled: ReadonlyArray<Caip19>,
  more: Partial<NoOptionsInput> = {}
): NoOptionsInput => ({
  payment: payment(amount),
  networks: [sandbox],
  settledAssets: new Set(settled),
  rate: (from, to) => lookup(rates, from, to),
  registry,
  ...more
})

const reasonOf = (...args: Parameters<typeof input>) => {
  const reason = noOptionsReason(input(...args))
  return { code: reason.code, message: noOptionsText(reason) }
}

describe("payableTokens", () => {
  it("names the settled tokens of the networks with a price, with the exact amount", () => {
    expect(
      payableTokens(input(fiat("EUR", 450n), [SANDBOX_USDC, USDC_BASE])).map((p) => [
        p.token.asset,
        p.value,
        p.quoted
      ])
    ).toEqual([[SANDBOX_USDC, 4_860_000n, true]])
    expect(payableTokens(input(fiat("JPY", 450n), [SANDBOX_USDC]))).toEqual([])
  })
})

describe("noOptionsReason", () => {
  it("no settlement at all", () => {
    expect(reasonOf(fiat("USD", 450n), [])).toEqual({
      code: "no_settlement",
      message:
        "This merchant has not set up how it is paid in crypto, so there is no way to pay it yet."
    })
  })

  it("settlements only on a network the engine does not run (Base on the sandbox)", () => {
    expect(
      reasonOf(fiat("USD", 450n), [USDC_BASE, EURC_BASE], { accounts: [BUYER_SANDBOX] })
    ).toEqual({
      code: "settlement_not_payable",
      message:
        "This merchant is paid only in USDC on Base or EURC on Base, which this payment service cannot take, so there is no way to pay it here."
    })
  })

  it("no rate from the payment's currency to the tokens it could be paid in", () => {
    expect(reasonOf(fiat("JPY", 450n), [SANDBOX_USDC, USDC_BASE])).toEqual({
      code: "no_price",
      message:
        "There is no exchange rate from JPY to USDC on Pay sandbox, what this merchant is paid in, so the amount cannot be converted."
    })
  })

  it("a payment asked in a token the merchant cannot be paid in here", () => {
    const asked: Amount = { unit: { kind: "token", asset: USDC_BASE }, value: 1_000_000n }
    expect(reasonOf(asked, [SANDBOX_USDC, USDC_BASE])).toEqual({
      code: "asset_not_payable",
      message:
        "The payment asks for USDC on Base, which this merchant cannot be paid in here; it is paid in USDC on Pay sandbox."
    })
  })

  it("accounts on no network of the payable tokens", () => {
    expect(reasonOf(fiat("USD", 450n), [SANDBOX_USDC], { accounts: [BUYER_BASE] })).toEqual({
      code: "accounts_not_payable",
      message:
        "None of the wallet's accounts is on a network this payment can be paid on: it can be paid in USDC on Pay sandbox."
    })
  })

  it("options made but their network did not answer", () => {
    expect(
      reasonOf(fiat("USD", 450n), [SANDBOX_USDC], {
        accounts: [BUYER_SANDBOX],
        unanswered: ["eip155:31337" as Caip2, "eip155:31337" as Caip2]
      })
    ).toEqual({
      code: "network_unavailable",
      message: "The network did not answer (Pay sandbox). Try again in a moment."
    })
  })

  it("the wallet's view: the code and the English words", () => {
    expect(noOptionsView(noOptionsReason(input(fiat("USD", 450n), [])))).toEqual({
      code: "no_settlement",
      message:
        "This merchant has not set up how it is paid in crypto, so there is no way to pay it yet."
    })
  })
})
