/**
 * Amounts as the checkout page writes them for people: fiat in the buyer's
 * language's currency format, tokens as their exact decimal with the trailing
 * zeros past two dropped ("10.50 USDC", "0.001 USDC", never a rounded value).
 */
import {
  formatMajor,
  listText,
  type PayableToken,
  type Payment,
  type TokenRegistryShape
} from "@pay/core"
import type { CheckoutStrings, Language } from "./CheckoutStrings.js"

/** An exact amount of a token with `decimals`: "10.50 USDC", "0.001 USDC", "7 WEIRD" (no decimals). */
export const tokenText = (
  value: bigint,
  token: { readonly decimals: number; readonly symbol: string }
) => {
  const exact = formatMajor(value, token.decimals)
  const dot = exact.indexOf(".")
  const trimmed = dot === -1 ? exact : exact.replace(/0+$/, "").padEnd(dot + 3, "0")
  return `${trimmed} ${token.symbol}`
}

/** An exact token amount: "10.50 USDC"; the raw value and asset for a token the registry does not know. */
export const tokenAmountText = (
  registry: TokenRegistryShape,
  asset: string,
  value: bigint
): string => {
  const token = registry.token(asset as Parameters<TokenRegistryShape["token"]>[0])
  return token === undefined ? `${value} ${asset}` : tokenText(value, token)
}

/** The amount asked for, in the buyer's language ("$1,234.50", "1234,50 US$"). */
export const formatAmount = (
  payment: Pick<Payment, "amount">,
  registry: TokenRegistryShape,
  language: Language
): string => {
  const { unit, value } = payment.amount
  if (unit.kind !== "fiat") return tokenAmountText(registry, unit.asset, value)
  const { code, decimals } = unit.currency
  const major = formatMajor(value, decimals)
  try {
    return new Intl.NumberFormat(language, {
      style: "currency",
      currency: code,
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals
      // An exact decimal string: formatted without a detour through a float where supported.
    }).format(major as unknown as number)
  } catch {
    return `${major} ${code}`
  }
}

/** One token the buyer can pay in, on its network: "4.50 USDC on Pay sandbox". */
export const tokenOnNetworkText = (
  strings: Pick<CheckoutStrings, "onNetwork">,
  amount: string,
  network: string
): string => strings.onNetwork.replace("{token}", amount).replace("{network}", network)

/**
 * What the buyer will pay, before any wallet is opened: "You pay 4.50 USDC on Pay sandbox", or
 * each way joined with "or"; null when there is none. A fiat payment's token amount is at the
 * current price (a wallet's option locks it).
 */
export const youPayText = (
  tokens: ReadonlyArray<Pick<PayableToken, "network" | "token" | "value">>,
  strings: Pick<CheckoutStrings, "onNetwork" | "youPay">,
  language: Language
): string | null =>
  tokens.length === 0
    ? null
    : strings.youPay.replace(
        "{amount}",
        listText(
          tokens.map((t) =>
            tokenOnNetworkText(strings, tokenText(t.value, t.token), t.network.name)
          ),
          language,
          "disjunction"
        )
      )
