/**
 * The codes of why a payment offers no option (NoOptions.ts says when each holds). Its own
 * module, with no imports, so the API definition can name them.
 */
export const NO_OPTIONS_CODES = [
  "no_settlement",
  "settlement_not_payable",
  "no_price",
  "asset_not_payable",
  "accounts_not_payable",
  "network_unavailable"
] as const
export type NoOptionsCode = (typeof NO_OPTIONS_CODES)[number]
