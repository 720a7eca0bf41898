/**
 * The engine assembled: the domain services over whatever storage layer is
 * given, and one request handler for every route. Adapters (node:http, Bun,
 * fetch) call the handler; nothing here knows which server or database runs.
 */
import { type Context, Effect, Layer } from "effect"
import { openApiDocument, PayApi } from "./Api.js"
import { errorReply } from "./ApiFailures.js"
import { walletAuthenticator } from "./apps/Authenticate.js"
import type { CurrentWalletApp } from "./apps/WalletAppAuth.js"
import { WalletApps } from "./apps/WalletApps.js"
import { Chain, ChainUnavailable, livemodeOf } from "./chain/Chain.js"
import { ChainWork } from "./chainwork/ChainWork.js"
import { ChainWorkConfig } from "./chainwork/ChainWorkConfig.js"
import type { EngineConfig, PaymentEngineOptions } from "./EngineOptions.js"
import type { EnginePages, PageServices } from "./EnginePages.js"
import type { EventStore } from "./events/Event.js"
import { eventHandlers } from "./events/Http.js"
import { outboxSignalLayer } from "./events/OutboxSignal.js"
import { FeesConfig } from "./fees/Fees.js"
import { Gateway } from "./gateway/Gateway.js"
import { GatewayConfig } from "./gateway/GatewayConfig.js"
import { gatewayHandlers } from "./gateway/Http.js"
import { makeReadinessRoute } from "./health/Readiness.js"
import type { StorageProbe } from "./health/StorageProbe.js"
import { makeEngineHandler } from "./http/Engine.js"
import { json, type Reply } from "./http/Exchange.js"
import { HttpConfig } from "./http/HttpConfig.js"
import type { RequestObserver } from "./http/RequestOutcome.js"
import { apiRoutes, type ImplementationContext, publicRoute, type Route } from "./http/Route.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import type { CurrentPartner } from "./identity/PartnerAuth.js"
import { ApiKeys } from "./keys/ApiKeys.js"
import { apiKeyHandlers } from "./keys/Http.js"
import { merchantHandlers } from "./merchants/Http.js"
import { LogoCapture, LogoRefused, type LogoStore } from "./merchants/Logo.js"
import { logoRoutes } from "./merchants/LogoRoutes.js"
import { Merchants } from "./merchants/Merchants.js"
import { settlementHandlers } from "./merchants/SettlementHttp.js"
import { Settlements } from "./merchants/Settlements.js"
import { requestMetrics } from "./metrics/EngineMetrics.js"
import { metricsRoute } from "./metrics/MetricsRoute.js"
import { requestLogObserver } from "./observability/Logging.js"
import { countingPaymentStore } from "./PaymentMetrics.js"
import { partnerAuthenticators } from "./partners/Authenticate.js"
import { Partners } from "./partners/Partners.js"
import { paymentHandlers } from "./payments/Http.js"
import { LocalPaymentEvents, type PaymentEvents } from "./payments/PaymentEvents.js"
import { Payments } from "./payments/Payments.js"
import { PaymentsConfig } from "./payments/PaymentsConfig.js"
import { Prices } from "./pricing/Pricing.js"
import { RateLimitsConfig } from "./ratelimit/RateLimitConfig.js"
import { RateLimits } from "./ratelimit/RateLimits.js"
import { purgeForever } from "./retention/Purge.js"
import { RetentionConfig } from "./retention/RetentionConfig.js"
import { signallingStores } from "./SignallingStores.js"
import { type EngineSecret, engineSecretLayer } from "./secrets/EngineSecret.js"
import { EngineMode } from "./shared/EngineMode.js"
import { defaultTokenRegistry, type TokenRegistry } from "./shared/TokenRegistry.js"
import { webhookEndpointHandlers } from "./webhooks/Http.js"
import { schemeOnlyUrlGuard } from "./webhooks/UrlGuard.js"
import { WebhookEndpoints } from "./webhooks/WebhookEndpoints.js"
import { fetchWebhookSender } from "./webhooks/WebhookSender.js"
import { WebhookWork } from "./webhooks/WebhookWork.js"
import { WebhookDeliveryConfig } from "./webhooks/WebhookWorkConfig.js"

/**
 * The domain services, each with the services it declares it depends on
 * (built once: layers are shared by reference). They need the storage ports,
 * each feature's config, a `TokenRegistry` and `PaymentEvents` (see
 * `payEngineLayer`).
 */
export const PayServices = Layer.mergeAll(
  Gateway.Default,
  ChainWork.Default,
  WebhookWork.Default,
  Partners.Default,
  WalletApps.Default,
  Settlements.Default,
  Payments.Default,
  WebhookEndpoints.Default,
  RateLimits.layer,
  Merchants.Default,
  ApiKeys.Default
)

const none = (chainId: string) =>
  new ChainUnavailable({ chainId, message: "this engine has no networks configured" })

/** An engine without networks: the gateway offers no options and submits nothing. */
export const noChain = Layer.succeed(
  Chain,
  Chain.of({
    networks: [],
    tokenDomain: (asset) => none(asset),
    balanceOf: (asset) => none(asset),
    allowance: (asset) => none(asset),
    receiveCall: (asset) => none(asset),
    verifyAuthorization: (asset) => none(asset),
    simulateReceive: (asset) => none(asset),
    codeAt: (chainId) => none(chainId),
    deploymentCall: (chainId) => none(chainId),
    transferCall: (asset) => none(asset),
    head: (chainId) => none(chainId),
    collectorNonce: (chainId) => none(chainId),
    fees: (chainId) => none(chainId),
    sign: (chainId) => none(chainId),
    broadcast: (chainId) => none(chainId),
    transactionState: (chainId) => none(chainId),
    transaction: (chainId) => none(chainId),
    authorizationUsed: (asset) => none(asset)
  })
)

/**
 * An engine without a logo fetcher (an embedder that did not install @pay/logos):
 * no image is fetched, so every `iconUrl` is refused, and the refusal names the fix.
 */
const noLogoCapture = Layer.succeed(
  LogoCapture,
  LogoCapture.of({
    capture: () =>
      new LogoRefused({
        code: "icon_unreachable",
        message:
          "this engine fetches no logos: it was started without a logo fetcher (the `logos` option, logoCaptureLayer() of @pay/logos)"
      })
  })
)

/** How the engine reports on itself (the `metrics` option; the request observers). */
export interface PayHandlerOperations {
  /** `/metrics` served. Default true. */
  readonly metrics?: boolean
  /** Told of every answered request, after the request metrics. */
  readonly observers?: ReadonlyArray<RequestObserver>
}

/**
 * `/health` (alive), `/ready` (the database, its migrations and each network
 * answer), `/metrics` unless turned off, and `/openapi.json` with the base path
 * the engine is served under as its server.
 */
const systemRoutes = (
  basePath: string,
  metrics: boolean,
  readinessRoute: Route<PayRouteServices>
) => {
  let document: Reply | undefined
  const openApiReply = () => {
    document ??= json(200, {
      ...openApiDocument(),
      servers: [{ url: basePath === "" ? "/" : basePath }]
    })
    return document
  }
  return [
    publicRoute("GET", "/health", () => Effect.succeed(json(200, { status: "ok" }))),
    readinessRoute,
    ...(metrics ? [metricsRoute] : []),
    publicRoute("GET", "/openapi.json", () => Effect.sync(openApiReply))
  ]
}

/** Who a request comes from, as the routes' middlewares provide it. */
type Caller = CurrentPartner | CurrentWalletApp

export type PayRouteServices =
  | ApiKeys
  | EngineSecret
  | EventStore
  | WebhookEndpoints
  | WebhookWork
  | LogoStore
  | Gateway
  | Chain
  | Merchants
  | Settlements
  | Payments
  | IdempotencyStore
  | TokenRegistry
  | HttpConfig
  | EngineMode
  | PaymentEvents
  | StorageProbe

/** Every route of the engine's own, with its services resolved: the system's, then the API definition's. */
export const routes = (basePath: string, metrics = true) =>
  Effect.gen(function* () {
    const implementations = yield* Effect.all([
      merchantHandlers,
      settlementHandlers,
      paymentHandlers,
      gatewayHandlers,
      eventHandlers,
      webhookEndpointHandlers,
      apiKeyHandlers
    ])
    // The caller each route's middleware authenticates is provided by the engine's handler.
    const api = apiRoutes(PayApi, implementations) as ReadonlyArray<
      Route<Exclude<ImplementationContext<(typeof implementations)[number]>, Caller>>
    >
    const all: ReadonlyArray<Route<PayRouteServices>> = [
      ...systemRoutes(basePath, metrics, yield* makeReadinessRoute),
      ...(yield* logoRoutes),
      ...api
    ]
    return all
  })

const noPages: EnginePages = Effect.succeed([])

/**
 * The request handler of the whole engine, with `extra` routes beside its own,
 * all under `basePath` (requests outside it are 404): its own routes, then the
 * `pages` made from its services (`@pay/checkout`'s, whose `/:id` routes answer
 * only payment links and only what they accept), then `extra`.
 */
export const makePayHandler = (
  extra: ReadonlyArray<Route<never>> = [],
  basePath = "",
  operations: PayHandlerOperations = {},
  pages: EnginePages = noPages
) =>
  Effect.gen(function* () {
    const config = yield* HttpConfig
    const metrics = operations.metrics ?? true
    // The request line goes to the logger (and level) this handler is made under.
    const { fiberRefs } = yield* Effect.runtime<never>()
    const all: ReadonlyArray<Route<PayRouteServices | PageServices>> = [
      ...(yield* routes(basePath, metrics)),
      ...(yield* pages),
      ...extra
    ]
    return yield* makeEngineHandler(all, {
      maxBodyBytes: config.maxBodyBytes,
      authenticators: [...(yield* partnerAuthenticators), yield* walletAuthenticator],
      errorReply,
      basePath,
      observers: [requestLogObserver(fiberRefs), requestMetrics, ...(operations.observers ?? [])]
    })
  })

/** The parts an engine's services are made of: its layers and its checked settings. */
export type PayEngineParts<E> = Pick<
  PaymentEngineOptions<E>,
  | "storage"
  | "tokens"
  | "events"
  | "chain"
  | "prices"
  | "logos"
  | "secret"
  | "previousSecrets"
  | "webhookUrls"
  | "webhookSender"
> & { readonly config: EngineConfig }

/** Each feature's settings under its own tag. */
export const featureConfigs = (config: EngineConfig) =>
  Layer.mergeAll(
    Layer.succeed(HttpConfig, config.http),
    Layer.succeed(PaymentsConfig, config.payments),
    Layer.succeed(GatewayConfig, config.gateway),
    Layer.succeed(FeesConfig, config.fees),
    Layer.succeed(ChainWorkConfig, config.chainWork),
    Layer.succeed(WebhookDeliveryConfig, config.webhookDelivery),
    Layer.succeed(RateLimitsConfig, config.rateLimits),
    Layer.succeed(RetentionConfig, config.retention)
  )

/**
 * The settings with the engine's mode decided, once, from the chain's networks
 * (unless the settings already say it), beside the chain itself.
 */
const configAndChain = <E>(config: EngineConfig, chain: Layer.Layer<Chain, E>) =>
  Layer.merge(
    featureConfigs(config),
    Layer.effect(
      EngineMode,
      Effect.map(Chain, ({ networks }) => ({ livemode: config.livemode ?? livemodeOf(networks) }))
    )
  ).pipe(Layer.provideMerge(chain))

/** The services of an engine and everything they stand on, without the background work. */
export const payEngineLayer = <E>(options: PayEngineParts<E>) =>
  PayServices.pipe(
    Layer.provideMerge(engineSecretLayer(options.secret, options.previousSecrets)),
    Layer.provideMerge(
      Layer.mergeAll(
        // Writes that make events wake this process's webhook delivery at once.
        // Payments counted by the status they enter (metrics), where the status is written.
        Layer.provide(
          signallingStores,
          Layer.merge(Layer.provide(countingPaymentStore, options.storage), outboxSignalLayer)
        ),
        configAndChain(options.config, options.chain ?? noChain),
        options.tokens ?? defaultTokenRegistry,
        options.events ?? LocalPaymentEvents,
        options.prices ?? Prices.fromTable({}),
        options.logos ?? noLogoCapture,
        options.webhookUrls ?? schemeOnlyUrlGuard,
        options.webhookSender ?? fetchWebhookSender
      )
    )
  )

/** What the engine's services stand on and provide. */
export type PayEngineContext = Layer.Layer.Success<ReturnType<typeof payEngineLayer>>

/**
 * The engine's background work, forked in the current scope: the purge of
 * what is past its retention (retention/Purge.ts: one instance a time), the
 * expiry sweep, the durable chain work
 * (submitting, watching and settling: claimed jobs, taken over when an
 * instance dies) and webhook delivery (claimed the same way).
 */
export const forkBackgroundWork = (context: Context.Context<PayEngineContext>) =>
  Effect.zipRight(
    // Chains on a new run (the sandbox) start afresh before any job of theirs is claimed.
    Effect.provide(
      ChainWork.use((w) => w.startFresh),
      context
    ),
    Effect.all(
      [
        Effect.forkScoped(Effect.provide(purgeForever(), context)),
        Effect.forkScoped(
          Effect.provide(
            Payments.use((p) => p.sweepForever),
            context
          )
        ),
        Effect.forkScoped(
          Effect.provide(
            ChainWork.use((w) => w.runForever),
            context
          )
        ),
        Effect.forkScoped(
          Effect.provide(
            WebhookWork.use((w) => w.runForever),
            context
          )
        )
      ],
      { discard: true }
    )
  )
