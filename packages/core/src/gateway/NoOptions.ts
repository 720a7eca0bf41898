/**
 * Why a payment offers no option, in words: the wallet gets it beside an empty `options`
 * (`noOptionsReason`, an optional field the reference's response allows), the checkout page in
 * the buyer's language. Pure: the reasons are found in order, the first that holds wins:
 *
 * 1. `no_settlement`: the merchant has no crypto settlement at all.
 * 2. `settlement_not_payable`: none of its settlements is in a token of a network the engine
 *    runs (a Base settlement on an engine that runs only the sandbox chain).
 * 3. `no_price` (a fiat payment): no rate from the payment's currency to any of those tokens;
 *    `asset_not_payable` (a payment asked in a token): not one of those tokens.
 * 4. `accounts_not_payable`: none of the wallet's accounts is on a network of those tokens.
 * 5. `network_unavailable`: options were made, but their network did not answer.
 */
import type { ChainNetwork } from "../chain/Chain.js"
import {
  type AssetName,
  assetName,
  assetText,
  listText,
  payabilityOf
} from "../merchants/SettlementPayability.js"
import { type Caip2, type Caip10, type Caip19, chainOfCaip10 } from "../shared/Caip.js"
import type { TokenRegistryShape } from "../shared/TokenRegistry.js"
import type { NoOptionsCode } from "./NoOptionsCode.js"
import { type OfferInput, payableTokens } from "./Offers.js"

export { NO_OPTIONS_CODES, type NoOptionsCode } from "./NoOptionsCode.js"

export type NoOptionsReason =
  | { readonly code: "no_settlement" }
  /** `settled`: every asset the merchant settles in, none of which the networks pay. */
  | { readonly code: "settlement_not_payable"; readonly settled: ReadonlyArray<AssetName> }
  /** `payable`: the merchant's assets the networks pay, none of which has a rate. */
  | {
      readonly code: "no_price"
      readonly currency: string
      readonly payable: ReadonlyArray<AssetName>
    }
  | {
      readonly code: "asset_not_payable"
      readonly asked: AssetName
      readonly payable: ReadonlyArray<AssetName>
    }
  | { readonly code: "accounts_not_payable"; readonly payable: ReadonlyArray<AssetName> }
  /** `networks`: the names of the networks that did not answer. */
  | { readonly code: "network_unavailable"; readonly networks: ReadonlyArray<string> }

export interface NoOptionsInput
  extends Pick<OfferInput, "payment" | "networks" | "settledAssets" | "rate"> {
  readonly registry: TokenRegistryShape
  /** The wallet's accounts; absent where no wallet asked yet (the checkout page at load). */
  readonly accounts?: ReadonlyArray<Caip10>
  /** The chains of options that were made but left out because their network did not answer. */
  readonly unanswered?: ReadonlyArray<Caip2>
}

const unique = <A>(items: Iterable<A>): Array<A> => [...new Set(items)]

/** Why `input` yields no option (call it when it yielded none). */
export const noOptionsReason = (input: NoOptionsInput): NoOptionsReason => {
  const { networks, registry } = input
  const name = (asset: Caip19) => assetName(networks, registry, asset)
  const settled = [...input.settledAssets] as Array<Caip19>
  if (settled.length === 0) return { code: "no_settlement" }
  const payableSettled = settled.filter((a) => payabilityOf(networks, a) === "payable")
  if (payableSettled.length === 0) {
    return { code: "settlement_not_payable", settled: settled.map(name) }
  }
  const priced = payableTokens(input)
  if (priced.length === 0) {
    const unit = input.payment.amount.unit
    return unit.kind === "fiat"
      ? { code: "no_price", currency: unit.currency.code, payable: payableSettled.map(name) }
      : { code: "asset_not_payable", asked: name(unit.asset), payable: payableSettled.map(name) }
  }
  const chains = new Set((input.accounts ?? []).map(chainOfCaip10))
  const unanswered = unique(input.unanswered ?? [])
  if (input.accounts !== undefined && !priced.some((p) => chains.has(p.network.chainId))) {
    return {
      code: "accounts_not_payable",
      payable: unique(priced.map((p) => p.token.asset)).map(name)
    }
  }
  // Options were made for the accounts: only their network failing leaves none.
  const silent =
    unanswered.length > 0
      ? unanswered
      : unique(priced.map((p) => p.network.chainId).filter((c) => chains.has(c)))
  return {
    code: "network_unavailable",
    networks: silent.map(
      (chainId) => networks.find((n: ChainNetwork) => n.chainId === chainId)?.name ?? chainId
    )
  }
}

/**
 * The words of each reason in one language: `{assets}` (a list of assets), `{currency}`,
 * `{asked}` (the payment's token) and `{networks}` are replaced.
 */
export interface NoOptionsWords {
  readonly language: string
  /** How an asset is named: `{token}` and `{network}` are replaced ("USDC on Base"). */
  readonly asset: string
  readonly reasons: Readonly<Record<NoOptionsCode, string>>
}

/** The English words: the wallet's `noOptionsReason.message`, and the checkout page's in English. */
export const NO_OPTIONS_EN: NoOptionsWords = {
  language: "en",
  asset: "{token} on {network}",
  reasons: {
    no_settlement:
      "This merchant has not set up how it is paid in crypto, so there is no way to pay it yet.",
    settlement_not_payable:
      "This merchant is paid only in {assets}, which this payment service cannot take, so there is no way to pay it here.",
    no_price:
      "There is no exchange rate from {currency} to {assets}, what this merchant is paid in, so the amount cannot be converted.",
    asset_not_payable:
      "The payment asks for {asked}, which this merchant cannot be paid in here; it is paid in {assets}.",
    accounts_not_payable:
      "None of the wallet's accounts is on a network this payment can be paid on: it can be paid in {assets}.",
    network_unavailable: "The network did not answer ({networks}). Try again in a moment."
  }
}

/** The reason in `words`' language. */
export const noOptionsText = (
  reason: NoOptionsReason,
  words: NoOptionsWords = NO_OPTIONS_EN
): string => {
  const assets = (names: ReadonlyArray<AssetName>) =>
    listText(
      names.map((n) => assetText(n, words.asset)),
      words.language,
      "disjunction"
    )
  const values: Record<string, string> = {
    assets:
      reason.code === "settlement_not_payable"
        ? assets(reason.settled)
        : "payable" in reason
          ? assets(reason.payable)
          : "",
    currency: reason.code === "no_price" ? reason.currency : "",
    asked: reason.code === "asset_not_payable" ? assetText(reason.asked, words.asset) : "",
    networks:
      reason.code === "network_unavailable"
        ? listText(reason.networks, words.language, "conjunction")
        : ""
  }
  return words.reasons[reason.code].replace(
    /\{(assets|currency|asked|networks)\}/g,
    (_, key) => values[key] ?? ""
  )
}

/** The reason as the wallet gets it: the code and the English words. */
export const noOptionsView = (reason: NoOptionsReason) => ({
  code: reason.code,
  message: noOptionsText(reason)
})
