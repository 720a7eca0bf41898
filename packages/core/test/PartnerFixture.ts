/**
 * The partner and merchant most unit tests start from: partner "P", merchant "M", created
 * through the engine's own services.
 */
import { Effect } from "effect"
import { Merchants } from "../src/merchants/Merchants.js"
import { Partners } from "../src/partners/Partners.js"

export const partnerWithMerchant = Effect.gen(function* () {
  const { partner, key } = yield* (yield* Partners).create({ name: "P" })
  const merchant = yield* (yield* Merchants).create(partner, {
    name: "M",
    email: "m@m.co",
    iconUrl: null
  })
  return { partner, key, merchant }
})
