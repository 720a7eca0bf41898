/**
 * The engine assembled: the domain services over whatever storage layer is
 * given, and one request handler for every route. Adapters (node:http, Bun,
 * fetch) call the handler; nothing here knows which server or database runs.
 */
import { Effect, Layer } from "effect"
import { openApiDocument } from "./Api.js"
import { PayConfig } from "./Config.js"
import { renderApiReferencePage } from "./docs/ApiReferencePage.js"
import { makeEngineHandler } from "./http/Engine.js"
import { json } from "./http/Exchange.js"
import { publicRoute, type Route } from "./http/Route.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import { merchantRoutes } from "./merchants/Http.js"
import { Merchants } from "./merchants/Merchants.js"
import { Partners } from "./partners/Partners.js"
import { settlementRoutes } from "./settlements/Http.js"
import { Settlements } from "./settlements/Settlements.js"

/** The domain services; they need the storage ports (MerchantStore, ...). */
export const PayServices = Layer.mergeAll(Partners.Default, Settlements.Default).pipe(
  Layer.provideMerge(Merchants.Default)
)

const systemRoutes = [
  publicRoute("GET", "/health", () => Effect.succeed(json(200, { status: "ok" }))),
  publicRoute("GET", "/openapi.json", () => Effect.succeed(json(200, openApiDocument()))),
  publicRoute("GET", "/docs", () =>
    Effect.succeed({
      status: 200,
      body: renderApiReferencePage(openApiDocument(), { title: "Pay engine API reference" }),
      contentType: "text/html"
    })
  )
]

export type PayRouteServices = Merchants | Settlements | IdempotencyStore

export const routes: ReadonlyArray<Route<PayRouteServices>> = [
  ...systemRoutes,
  ...merchantRoutes,
  ...settlementRoutes
]

/** The request handler of the whole engine. */
export const makePayHandler = Effect.gen(function* () {
  const config = yield* PayConfig
  return yield* makeEngineHandler(routes, { maxBodyBytes: config.maxBodyBytes })
})
