/**
 * The pages as the engine mounts them (its `pages` option): the data-collection
 * pages, then the checkout, made from the engine's services when it starts.
 */
import { admitPayment, type EnginePages, Gateway, RateLimits } from "@pay/core"
import { Effect } from "effect"
import { checkoutRoutes } from "./checkout/CheckoutRoutes.js"
import { collectDataRoutes } from "./collect/CollectDataRoutes.js"

/**
 * `createPaymentEngine({ …, pages: checkoutPages })`: the buyer's page at
 * `{publicUrl}/pay_<id>` (with `/checkout.js` and the page's status and wallet
 * calls) and the data-collection pages at `{publicUrl}/collect/…`.
 */
export const checkoutPages: EnginePages = Effect.gen(function* () {
  const gateway = yield* Gateway
  const limits = yield* RateLimits
  return [
    ...collectDataRoutes(gateway),
    // Last: its `/:id` routes answer only payment links, and only what they accept. Every
    // request under a link counts against the payment's limit, as the gateway's do.
    ...(yield* checkoutRoutes((paymentId) => admitPayment(limits, paymentId)))
  ]
})
