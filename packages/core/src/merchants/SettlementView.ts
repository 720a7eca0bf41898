/**
 * A crypto settlement as the API shows it: in its routes' answers, in a
 * merchant's profile, and in the events about it.
 */

import type { CryptoSettlement } from "./Settlement.js"
import type { CryptoSettlementView } from "./SettlementApi.js"

export const settlementView = (s: CryptoSettlement): typeof CryptoSettlementView.Type => ({
  id: s.id,
  configId: s.id,
  asset: s.asset,
  destination: s.destination
})
