/**
 * The merchants' and their settlements' errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { LogoRefused } from "./Logo.js"
import type { MerchantNotFound } from "./Merchant.js"
import type { SettlementAssetConflict, SettlementNotFound } from "./Settlement.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly MerchantNotFound: MerchantNotFound
    readonly LogoRefused: LogoRefused
    readonly SettlementNotFound: SettlementNotFound
    readonly SettlementAssetConflict: SettlementAssetConflict
  }
}

export const merchantFailures: FailureReplies<
  "MerchantNotFound" | "LogoRefused" | "SettlementNotFound" | "SettlementAssetConflict"
> = {
  MerchantNotFound: (e) => replyOf(ApiErrors.NotFound, `No merchant ${e.merchantId}`),
  LogoRefused: (e) =>
    replyOf(ApiErrors.ParamsValidation, `iconUrl: ${e.message}`, [
      { field: "iconUrl", code: e.code, message: e.message }
    ]),
  SettlementNotFound: (e) => replyOf(ApiErrors.NotFound, `No crypto settlement ${e.settlementId}`),
  SettlementAssetConflict: (e) =>
    replyOf(
      ApiErrors.SettlementAssetConflict,
      `Merchant ${e.merchantId} already has a settlement for ${e.asset}`
    )
}
