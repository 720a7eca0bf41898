/**
 * A warning a settlement change answers with: the change is made, but something about it keeps
 * the merchant from being paid as the partner may expect (SettlementWarnings.ts finds them). Its
 * own module, with nothing heavier than types, so the API definition can name the codes.
 */
import type { Caip19 } from "../shared/Caip.js"

/** `asset_not_payable`: no network the engine runs has the settlement's token. */
export const SETTLEMENT_WARNING_CODES = ["asset_not_payable"] as const
export type SettlementWarningCode = (typeof SETTLEMENT_WARNING_CODES)[number]

export interface SettlementWarning {
  readonly code: SettlementWarningCode
  /** In words, for the partner's developer: what cannot be paid, why, and what the merchant can still be paid in. */
  readonly message: string
  readonly asset: Caip19
}
