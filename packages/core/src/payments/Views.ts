/**
 * Payments as the wire shows them: the partner view, the full details, the
 * status object, the legacy snake_case item and the statistics.
 */
import { type Merchant, merchantIconUrl } from "../merchants/Merchant.js"
import { type Amount, amountDisplay, formatUnit, toMajorUnits } from "../shared/Amount.js"
import { type Caip19, chainOfCaip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { toUnixSeconds } from "../shared/Time.js"
import { networkOfToken, type TokenRegistryShape } from "../shared/TokenRegistry.js"
import type {
  CancelResponse,
  LegacyPaymentView,
  PaymentDetails,
  PaymentView,
  StatusResponse
} from "./Api.js"
import { isFinal, type Payment, type PaymentStatusRecord, paymentLivemode } from "./Payment.js"
import { effectiveStatus } from "./PaymentStateMachine.js"
import type { PaymentStats } from "./PaymentStore.js"

/** The hint for pollers while a payment is not final. */
export const POLL_IN_MS = 1000

export interface ViewContext {
  readonly registry: TokenRegistryShape
  readonly publicUrl: string
  readonly now: Date
  /** The engine's mode: what a payment stored before modes were recorded shows. */
  readonly livemode: boolean
}

export const amountView = (amount: Amount, registry: TokenRegistryShape) => ({
  unit: formatUnit(amount.unit),
  value: amount.value.toString(),
  display: amountDisplay(amount.unit, registry) ?? null
})

export const gatewayUrl = (publicUrl: string, payment: Payment) => `${publicUrl}/${payment.id}`

/** A refund as `POST /v1/refunds` answers it (and `refund.requested` carries it). */
export const refundView = (
  refund: NonNullable<Payment["refund"]>,
  p: Payment,
  { registry, livemode }: Pick<ViewContext, "registry" | "livemode">
) => ({
  refundId: refund.id,
  paymentId: p.id,
  amount: amountView(p.amount, registry),
  status: "requested" as const,
  createdAt: refund.createdAt.toISOString(),
  livemode: paymentLivemode(p, livemode)
})

const tokenAmountOf = (p: Pick<Payment, "tokenAmount">): Amount | undefined =>
  p.tokenAmount === null
    ? undefined
    : { unit: { kind: "token", asset: p.tokenAmount.asset }, value: p.tokenAmount.value }

const infoOf = (p: PaymentStatusRecord, registry: TokenRegistryShape) => {
  const token = tokenAmountOf(p)
  return p.status === "succeeded" && token !== undefined && p.txId !== null
    ? { optionAmount: amountView(token, registry), txId: p.txId }
    : null
}

export const statusView = (
  p: PaymentStatusRecord,
  { registry, now }: Pick<ViewContext, "registry" | "now">
): typeof StatusResponse.Encoded => {
  const status = effectiveStatus(p, now)
  const final = isFinal(status)
  return {
    status,
    isFinal: final,
    ...(final ? {} : { pollInMs: POLL_IN_MS }),
    ...(status === "failed" && p.failureCode !== null ? { failureCode: p.failureCode } : {}),
    info: status === "succeeded" ? infoOf(p, registry) : null
  }
}

export const paymentView = (
  p: Payment,
  merchant: Merchant | undefined,
  { registry, publicUrl, now, livemode }: ViewContext
): typeof PaymentView.Encoded => {
  const status = effectiveStatus(p, now)
  const token = tokenAmountOf(p)
  return {
    paymentId: p.id,
    merchant: {
      id: p.merchantId,
      name: merchant?.name ?? "",
      iconUrl: merchantIconUrl(publicUrl, merchant)
    },
    referenceId: p.referenceId,
    status,
    isTerminal: isFinal(status),
    ...(p.amount.unit.kind === "fiat" ? { fiatAmount: amountView(p.amount, registry) } : {}),
    ...(token ? { tokenAmount: amountView(token, registry) } : {}),
    ...(p.buyer
      ? {
          buyer: {
            accountCaip10: p.buyer.account,
            ...(p.buyer.providerName === null ? {} : { accountProviderName: p.buyer.providerName }),
            ...(p.buyer.providerIcon === null ? {} : { accountProviderIcon: p.buyer.providerIcon })
          }
        }
      : {}),
    ...(p.transaction
      ? {
          transaction: {
            networkId: p.transaction.networkId,
            hash: p.transaction.hash,
            ...(p.transaction.nonce === null ? {} : { nonce: p.transaction.nonce })
          }
        }
      : {}),
    ...settlementFields(p, registry),
    createdAt: p.createdAt.toISOString(),
    lastUpdatedAt: p.updatedAt.toISOString(),
    ...(p.settlement?.settledAt ? { settledAt: p.settlement.settledAt.toISOString() } : {}),
    livemode: paymentLivemode(p, livemode)
  }
}

/** `settlement` and `fees`, in the token paid, once the payment succeeded. */
const settlementFields = (p: Payment, registry: TokenRegistryShape) => {
  if (p.tokenAmount === null) return {}
  const inToken = (value: bigint) =>
    amountView({ unit: { kind: "token", asset: p.tokenAmount!.asset }, value }, registry)
  return {
    ...(p.settlement
      ? {
          settlement: {
            settled: p.settlement.status === "settled",
            amount: inToken(p.settlement.amount),
            ...(p.settlement.txHash === null ? {} : { txHash: p.settlement.txHash }),
            status: p.settlement.status
          }
        }
      : {}),
    ...(p.fees
      ? {
          fees: {
            total: inToken(p.fees.total),
            fixed: inToken(p.fees.fixed),
            percentage: p.fees.percentage,
            ...(p.fees.network === undefined ? {} : { network: inToken(p.fees.network) })
          }
        }
      : {})
  }
}

export const paymentDetails = (
  p: Payment,
  merchant: Merchant | undefined,
  context: ViewContext
): typeof PaymentDetails.Encoded => {
  const status = effectiveStatus(p, context.now)
  return {
    ...paymentView(p, merchant, context),
    amount: amountView(p.amount, context.registry),
    isFinal: isFinal(status),
    expiresAt: toUnixSeconds(p.expiresAt),
    gatewayUrl: gatewayUrl(context.publicUrl, p),
    ...(status === "failed" && p.failureCode !== null ? { failureCode: p.failureCode } : {}),
    ...(status === "cancelled" && p.cancelledReason !== null
      ? { cancelledReason: p.cancelledReason }
      : {}),
    info: status === "succeeded" ? infoOf(p, context.registry) : null,
    checkout: p.checkout,
    refund: p.refund && { refundId: p.refund.id, createdAt: p.refund.createdAt.toISOString() }
  }
}

export const cancelView = (
  p: Payment,
  { livemode }: Pick<ViewContext, "livemode">
): typeof CancelResponse.Encoded => ({
  paymentId: p.id,
  status: p.status,
  cancelledReason: p.cancelledReason ?? "cancelled_by_merchant",
  cancelledAt: (p.finalAt ?? p.updatedAt).toISOString(),
  livemode: paymentLivemode(p, livemode)
})

/** The legacy list never shows `cancelled`: its clients do not know that state. */
export const legacyView = (
  p: Payment,
  { registry, now, livemode }: Pick<ViewContext, "registry" | "now" | "livemode">
): typeof LegacyPaymentView.Encoded => {
  const status = effectiveStatus(p, now)
  const token = p.tokenAmount === null ? undefined : registry.token(p.tokenAmount.asset)
  const network = token && networkOfToken(registry, token)
  const fiat = p.amount.unit.kind === "fiat" ? p.amount.unit.currency : undefined
  return {
    payment_id: p.id,
    merchant_id: p.merchantId,
    reference_id: p.referenceId,
    status: status as Exclude<typeof status, "cancelled">,
    is_terminal: isFinal(status),
    wallet_name: p.buyer?.providerName ?? "",
    token_symbol: token?.symbol ?? null,
    token_decimals: token?.decimals ?? 0,
    token_logo: token?.iconUrl ?? null,
    chain_logo: network?.iconUrl ?? null,
    wallet_logo: p.buyer?.providerIcon ?? null,
    chain_id: p.tokenAmount ? chainOfCaip19(p.tokenAmount.asset) : null,
    buyer_caip10: p.buyer?.account ?? null,
    token_caip19: p.tokenAmount?.asset ?? null,
    tx_hash: p.transaction?.hash ?? null,
    nonce: p.transaction?.nonce ?? null,
    token_amount: p.tokenAmount?.value.toString() ?? null,
    // Fiat amounts are at most 10^15 minor units: exact as a JSON number.
    fiat_amount: fiat ? Number(p.amount.value) : null,
    fiat_currency: fiat?.code ?? null,
    created_at: p.createdAt.toISOString(),
    last_updated_at: p.updatedAt.toISOString(),
    settled_at: p.settlement?.settledAt?.toISOString() ?? null,
    settlement_status: p.settlement?.status ?? null,
    settlement_tx_hash: p.settlement?.txHash ?? null,
    livemode: paymentLivemode(p, livemode)
  }
}

/** A revenue unit's currency label (ISO code, or token symbol) and decimals. */
const currencyOf = (unit: string, registry: TokenRegistryShape) => {
  if (unit.startsWith("iso4217/")) {
    const code = unit.slice("iso4217/".length)
    return { currency: code, decimals: findCurrency(code)?.decimals ?? 0 }
  }
  const asset = unit.slice("caip19/".length) as Caip19
  const token = registry.token(asset)
  return { currency: token?.symbol ?? asset, decimals: token?.decimals ?? 0 }
}

/**
 * One line per currency: USDC paid on several chains is one USDC line. Totals are
 * added exactly at the largest number of decimals among them, then made a JSON number.
 */
export const statsView = (stats: PaymentStats, registry: TokenRegistryShape) => {
  const lines = new Map<string, { total: bigint; decimals: number }>()
  for (const { unit, total } of stats.revenue) {
    const { currency, decimals } = currencyOf(unit, registry)
    const line = lines.get(currency) ?? { total: 0n, decimals }
    const scale = Math.max(line.decimals, decimals)
    lines.set(currency, {
      total:
        line.total * 10n ** BigInt(scale - line.decimals) + total * 10n ** BigInt(scale - decimals),
      decimals: scale
    })
  }
  return {
    totalRevenue: [...lines].map(([currency, { total, decimals }]) => ({
      amount: toMajorUnits(total, decimals),
      currency
    })),
    totalTransactions: stats.transactions,
    totalCustomers: stats.customers
  }
}

/** The legacy list reports one currency: the one with the largest total (no conversion). */
export const legacyStatsView = (stats: PaymentStats, registry: TokenRegistryShape) => {
  const lines = statsView(stats, registry).totalRevenue
  const top = lines.reduce<(typeof lines)[number] | undefined>(
    (best, line) => (best === undefined || line.amount > best.amount ? line : best),
    undefined
  )
  return {
    total_customers: stats.customers,
    total_revenue: top ?? { amount: 0, currency: "USD" },
    total_transactions: stats.transactions
  }
}
