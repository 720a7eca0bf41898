/**
 * The engine assembled: the domain services over whatever storage layer is
 * given, and one request handler for every route. Adapters (node:http, Bun,
 * fetch) call the handler; nothing here knows which server or database runs.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { openApiDocument, PayApi } from "./Api.js"
import { errorReply } from "./ApiFailures.js"
import { walletAuthenticator } from "./apps/Authenticate.js"
import type { CurrentWalletApp } from "./apps/WalletAppAuth.js"
import type { WalletAppStore } from "./apps/WalletAppStore.js"
import { WalletApps } from "./apps/WalletApps.js"
import { PayConfig, type PayConfigShape } from "./Config.js"
import { Chain, ChainUnavailable } from "./chain/Chain.js"
import type { ChainJobStore } from "./chainwork/ChainJobStore.js"
import { ChainWork } from "./chainwork/ChainWork.js"
import { collectDataRoutes } from "./gateway/CollectDataRoutes.js"
import { Gateway } from "./gateway/Gateway.js"
import { gatewayHandlers } from "./gateway/Http.js"
import type { GatewayStore } from "./gateway/PaymentOption.js"
import { type EngineHandler, makeEngineHandler } from "./http/Engine.js"
import { json } from "./http/Exchange.js"
import { apiRoutes, type ImplementationContext, publicRoute, type Route } from "./http/Route.js"
import { purgeExpiredKeysForever } from "./idempotency/Idempotency.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import { merchantHandlers } from "./merchants/Http.js"
import type { MerchantStore } from "./merchants/MerchantStore.js"
import { Merchants } from "./merchants/Merchants.js"
import { partnerAuthenticators } from "./partners/Authenticate.js"
import type { CurrentPartner } from "./partners/PartnerAuth.js"
import type { PartnerStore } from "./partners/PartnerStore.js"
import { Partners } from "./partners/Partners.js"
import { paymentHandlers } from "./payments/Http.js"
import { LocalPaymentEvents, type PaymentEvents } from "./payments/PaymentEvents.js"
import type { PaymentStore } from "./payments/PaymentStore.js"
import { Payments } from "./payments/Payments.js"
import { Prices } from "./pricing/Pricing.js"
import { settlementHandlers } from "./settlements/Http.js"
import type { SettlementStore } from "./settlements/SettlementStore.js"
import { Settlements } from "./settlements/Settlements.js"
import { defaultTokenRegistry, type TokenRegistry } from "./shared/TokenRegistry.js"

/**
 * The domain services. They need the storage ports, `PayConfig`, a
 * `TokenRegistry` and `PaymentEvents` (see `payEngineLayer`).
 */
export const PayServices = Gateway.Default.pipe(
  Layer.provideMerge(ChainWork.Default),
  Layer.provideMerge(
    Layer.mergeAll(Partners.Default, WalletApps.Default, Settlements.Default, Payments.Default)
  ),
  Layer.provideMerge(Merchants.Default)
)

const none = (chainId: string) =>
  new ChainUnavailable({ chainId, message: "this engine has no networks configured" })

/** An engine without networks: the gateway offers no options and submits nothing. */
const noChain = Layer.succeed(
  Chain,
  Chain.of({
    networks: [],
    tokenDomain: (asset) => none(asset),
    balanceOf: (asset) => none(asset),
    receiveCall: (asset) => none(asset),
    transferCall: (asset) => none(asset),
    head: (chainId) => none(chainId),
    collectorNonce: (chainId) => none(chainId),
    fees: (chainId) => none(chainId),
    sign: (chainId) => none(chainId),
    broadcast: (chainId) => none(chainId),
    transactionState: (chainId) => none(chainId)
  })
)

/**
 * The document never changes while the engine runs: made once, on first request. The page that
 * renders it (`/docs`) is `@pay/api-reference`, added by the servers that want it.
 */
const once = <A>(make: () => A) => {
  let value: A | undefined
  return () => {
    value ??= make()
    return value
  }
}
const openApiReply = once(() => json(200, openApiDocument()))

const systemRoutes = [
  publicRoute("GET", "/health", () => Effect.succeed(json(200, { status: "ok" }))),
  publicRoute("GET", "/openapi.json", () => Effect.sync(openApiReply))
]

/** Who a request comes from, as the routes' middlewares provide it. */
type Caller = CurrentPartner | CurrentWalletApp

export type PayRouteServices =
  | Gateway
  | Merchants
  | Settlements
  | Payments
  | IdempotencyStore
  | TokenRegistry
  | PayConfig

/** Every route of the engine, with its services resolved: the API definition's, then the pages. */
export const routes = Effect.gen(function* () {
  const implementations = yield* Effect.all([
    merchantHandlers,
    settlementHandlers,
    paymentHandlers,
    gatewayHandlers
  ])
  const gateway = yield* Gateway
  // The caller each route's middleware authenticates is provided by the engine's handler.
  const api = apiRoutes(PayApi, implementations) as ReadonlyArray<
    Route<Exclude<ImplementationContext<(typeof implementations)[number]>, Caller>>
  >
  const all: ReadonlyArray<Route<PayRouteServices>> = [
    ...systemRoutes,
    ...api,
    ...collectDataRoutes(gateway)
  ]
  return all
})

/** The request handler of the whole engine, with `extra` routes beside its own. */
export const makePayHandler = (extra: ReadonlyArray<Route<never>> = []) =>
  Effect.gen(function* () {
    const config = yield* PayConfig
    return yield* makeEngineHandler([...(yield* routes), ...extra], {
      maxBodyBytes: config.maxBodyBytes,
      authenticators: [...(yield* partnerAuthenticators), yield* walletAuthenticator],
      errorReply
    })
  })

export type PayStorage =
  | PartnerStore
  | MerchantStore
  | SettlementStore
  | IdempotencyStore
  | PaymentStore
  | GatewayStore
  | WalletAppStore
  | ChainJobStore

/** What the engine needs from the one who runs it. */
export interface PayEngineOptions<E> {
  /** Every storage port: `@pay/storage-sqlite/node`'s `layer(...)`, or `MemoryStorage` in tests. */
  readonly storage: Layer.Layer<PayStorage, E>
  readonly config: PayConfigShape
  /** Known tokens and networks; default: well-known stablecoins (`defaultTokenRegistry`). */
  readonly tokens?: Layer.Layer<TokenRegistry>
  /** Where payment status changes travel; default: within this process. */
  readonly events?: Layer.Layer<PaymentEvents, E>
  /** The networks wallets pay on (`makeEvmChain`); default: none, so no payment options. */
  readonly chain?: Layer.Layer<Chain, E>
  /** Fiat-to-token rates; default: each currency at 1:1 with itself only. */
  readonly prices?: Layer.Layer<Prices>
  /** More routes served beside the engine's own (the standalone server's sandbox routes). */
  readonly routes?: ReadonlyArray<Route<never>>
}

/** The services of an engine and everything they stand on, without the background work. */
export const payEngineLayer = <E>(options: PayEngineOptions<E>) =>
  PayServices.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        options.storage,
        Layer.succeed(PayConfig, options.config),
        options.tokens ?? defaultTokenRegistry,
        options.events ?? LocalPaymentEvents,
        options.chain ?? noChain,
        options.prices ?? Prices.fromTable({})
      )
    )
  )

/** The engine in a scope: its request handler, the services behind it, and its background work. */
export const makePayEngine = <E>(options: PayEngineOptions<E>) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(payEngineLayer(options))
    const handler = yield* Effect.provide(makePayHandler(options.routes ?? []), context)
    yield* Effect.forkScoped(Effect.provide(purgeExpiredKeysForever, context))
    yield* Effect.forkScoped(
      Effect.provide(
        Payments.use((p) => p.sweepForever),
        context
      )
    )
    // Submitting, watching and settling: claimed jobs, taken over when an instance dies.
    yield* Effect.forkScoped(
      Effect.provide(
        ChainWork.use((w) => w.runForever),
        context
      )
    )
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
