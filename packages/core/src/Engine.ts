/**
 * The engine assembled: the domain services over whatever storage layer is
 * given, and one request handler for every route. Adapters (node:http, Bun,
 * fetch) call the handler; nothing here knows which server or database runs.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { openApiDocument } from "./Api.js"
import { PayConfig, type PayConfigShape } from "./Config.js"
import { renderApiReferencePage } from "./docs/ApiReferencePage.js"
import { type EngineHandler, makeEngineHandler } from "./http/Engine.js"
import { json } from "./http/Exchange.js"
import { publicRoute, type Route } from "./http/Route.js"
import { purgeExpiredKeysForever } from "./idempotency/Idempotency.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import { merchantRoutes } from "./merchants/Http.js"
import type { MerchantStore } from "./merchants/MerchantStore.js"
import { Merchants } from "./merchants/Merchants.js"
import type { PartnerStore } from "./partners/PartnerStore.js"
import { Partners } from "./partners/Partners.js"
import { settlementRoutes } from "./settlements/Http.js"
import type { SettlementStore } from "./settlements/SettlementStore.js"
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

/** What the engine needs from the one who runs it. */
export interface PayEngineOptions<E> {
  /** Every storage port: `@pay/storage-sqlite/node`'s `layer(...)`, or `MemoryStorage` in tests. */
  readonly storage: Layer.Layer<
    PartnerStore | MerchantStore | SettlementStore | IdempotencyStore,
    E
  >
  readonly config: PayConfigShape
}

/** The engine in a scope: its request handler and the services behind it. */
export const makePayEngine = <E>(options: PayEngineOptions<E>) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Layer.mergeAll(
        PayServices.pipe(Layer.provideMerge(options.storage)),
        Layer.succeed(PayConfig, options.config)
      )
    )
    const handler = yield* Effect.provide(makePayHandler, context)
    yield* Effect.forkScoped(Effect.provide(purgeExpiredKeysForever, context))
    return { handler, context }
  })

/**
 * For platforms that do not use Effect: starts the engine and returns its
 * handler and a `close` that releases everything (the database included).
 */
export const createPayEngine = async <E>(
  options: PayEngineOptions<E>
): Promise<{ readonly handler: EngineHandler; readonly close: () => Promise<void> }> => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const { handler } = await Effect.runPromise(Scope.extend(makePayEngine(options), scope))
    return { handler, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
