/**
 * @pay/checkout: the engine's browser pages, the buyer's checkout page at a
 * payment's link and the wallet gateway's data-collection pages. A package of
 * its own, so the core holds no UI and embedders who do not want the pages do
 * not install them; the engine mounts them through its `pages` option.
 */
export { checkoutRoutes } from "./checkout/CheckoutRoutes.js"
export type { CheckoutAction, CheckoutLimit } from "./checkout/CheckoutWallet.js"
export { collectDataRoutes } from "./collect/CollectDataRoutes.js"
export { checkoutPages } from "./Pages.js"
