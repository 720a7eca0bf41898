/**
 * Pages an engine serves beside its API, given to it through the `pages` option:
 * routes made once, when the engine starts, from the engine's own services.
 * `@pay/checkout`'s `checkoutPages` is one (the buyer's page at a payment's link
 * and the data-collection pages); the core imports no page of its own.
 */
import type { Effect } from "effect"
import type { Chain } from "./chain/Chain.js"
import type { Gateway } from "./gateway/Gateway.js"
import type { HttpConfig } from "./http/HttpConfig.js"
import type { Route } from "./http/Route.js"
import type { Merchants } from "./merchants/Merchants.js"
import type { Settlements } from "./merchants/Settlements.js"
import type { PaymentEvents } from "./payments/PaymentEvents.js"
import type { Payments } from "./payments/Payments.js"
import type { RateLimits } from "./ratelimit/RateLimits.js"
import type { EngineMode } from "./shared/EngineMode.js"
import type { TokenRegistry } from "./shared/TokenRegistry.js"

/** The engine's services a page may use, to make its routes and to answer with them. */
export type PageServices =
  | Gateway
  | Payments
  | Merchants
  | Settlements
  | RateLimits
  | HttpConfig
  | EngineMode
  | Chain
  | TokenRegistry
  | PaymentEvents

/**
 * The `pages` option: an Effect the engine runs once at start with its services
 * provided, whose routes it serves after its API's (and before the `routes`
 * option's). Combine several with `Effect.map(Effect.all([a, b]), (r) => r.flat())`.
 */
export type EnginePages = Effect.Effect<ReadonlyArray<Route<PageServices>>, never, PageServices>
