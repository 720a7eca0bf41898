/**
 * A merchant as the API shows it: in its routes' answers and in the events
 * about it (which carry the profile `GET /v1/merchants/{id}` answers).
 */

import type { MerchantView } from "./Api.js"
import { type Merchant, merchantIconUrl } from "./Merchant.js"
import type { CryptoSettlement } from "./Settlement.js"
import { settlementView } from "./SettlementView.js"

export const merchantView = (publicUrl: string, m: Merchant): typeof MerchantView.Type => ({
  id: m.id,
  name: m.name,
  email: m.email,
  status: m.status,
  iconUrl: merchantIconUrl(publicUrl, m),
  createdAt: m.createdAt.toISOString()
})

/** The merchant with its live settlements: `GET /v1/merchants/{id}`'s `merchant`. */
export const merchantProfileView = (
  publicUrl: string,
  m: Merchant,
  settlements: ReadonlyArray<CryptoSettlement>
) => ({
  ...merchantView(publicUrl, m),
  settlements: { crypto: settlements.map(settlementView), fiat: [] }
})
