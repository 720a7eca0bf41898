/**
 * Amounts as the checkout page writes them for people: fiat in the buyer's
 * language's currency format, tokens as their exact decimal with the trailing
 * zeros past two dropped ("10.50 USDC", "0.001 USDC", never a rounded value).
 */
import type { Payment } from "../payments/Payment.js"
import { formatMajor } from "../shared/Amount.js"
import type { TokenRegistryShape } from "../shared/TokenRegistry.js"
import type { Language } from "./CheckoutStrings.js"

/** An exact token amount: "10.50 USDC"; the raw value and asset for a token the registry does not know. */
export const tokenAmountText = (
  registry: TokenRegistryShape,
  asset: string,
  value: bigint
): string => {
  const token = registry.token(asset as Parameters<TokenRegistryShape["token"]>[0])
  if (token === undefined) return `${value} ${asset}`
  const exact = formatMajor(value, token.decimals)
  const dot = exact.indexOf(".")
  const trimmed = dot === -1 ? exact : exact.replace(/0+$/, "").padEnd(dot + 3, "0")
  return `${trimmed} ${token.symbol}`
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
