/**
 * Crypto settlement destinations: where a merchant's funds in one asset go.
 * Each pairs a CAIP-19 asset with a CAIP-10 account on the same chain, and a
 * merchant has at most one per asset.
 */
import { Schema } from "effect"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { prefixedId } from "../shared/Ids.js"
import { MerchantId } from "./Merchant.js"

export const CryptoSettlementId = prefixedId("crypto", "CryptoSettlementId")
export type CryptoSettlementId = typeof CryptoSettlementId.Type

export interface CryptoSettlement {
  readonly id: CryptoSettlementId
  readonly merchantId: MerchantId
  readonly asset: Caip19
  readonly destination: Caip10
  readonly createdAt: Date
  readonly updatedAt: Date
}

export class SettlementAssetConflict extends Schema.TaggedError<SettlementAssetConflict>()(
  "SettlementAssetConflict",
  { asset: Schema.String, merchantId: MerchantId }
) {}

export class SettlementNotFound extends Schema.TaggedError<SettlementNotFound>()(
  "SettlementNotFound",
  { settlementId: Schema.String }
) {}
