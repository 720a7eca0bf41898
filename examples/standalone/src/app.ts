/**
 * The standalone server assembled: the storage PAY_DATABASE names (a SQLite
 * file or PostgreSQL), the engine's services, the checkout and data-collection
 * pages (`@pay/checkout`), the API reference page (`/docs`) and an HTTP server, on the runtime's host (host.ts: Node or Bun).
 * `main.ts` and `main.bun.ts` run it; the CLI and the end-to-end tests use it too.
 */
import { apiReferenceRoutes } from "@pay/api-reference"
import { chainEngineOptions } from "@pay/chain-evm"
import { checkoutPages } from "@pay/checkout"
import {
  ChainWork,
  engineActor,
  engineConfig,
  type LogoCapture,
  makePaymentEngine,
  Partners,
  type PaymentEngineOptions,
  type PaymentEngineSettings,
  PaymentsConfig,
  type PayStorage,
  payEngineLayer,
  type Route
} from "@pay/core"
import { logoCaptureLayer, webhookSenderLayer, webhookUrlGuardLayer } from "@pay/logos"
import { sandboxChainSetup, sandboxRoutes } from "@pay/sandbox"
import * as Sandbox from "@pay/sandbox-chain"
import * as PgStorage from "@pay/storage-postgres"
import type { SqliteStorageError } from "@pay/storage-sqlite"
import { type Console, Context, Effect, Either, Layer, Option } from "effect"
import { isPostgresUrl, type StandaloneConfig, StartRefused, sandboxRefusal } from "./config.js"
import type { StandaloneHost } from "./host.js"
import { readPayConfig } from "./payConfig.js"

type EngineSettings = Pick<StandaloneConfig, "database" | "publicUrl"> &
  Partial<
    Pick<
      StandaloneConfig,
      | "maxBodyBytes"
      | "paymentLifetimeMs"
      | "maxLongPollMs"
      | "maxHeldLongPolls"
      | "maxHeldPublicLongPolls"
      | "maxHeldLongPollsPerPayment"
      | "expirySweepMs"
      | "basePath"
      | "fetchAllowPrivate"
      | "sqliteReadWorker"
      | "secret"
      | "previousSecrets"
      | "webhookRetryScheduleMs"
      | "webhookLeaseMs"
      | "webhookMaxEndpointsPerPartner"
      | "webhookInFlightPerPartner"
      | "retention"
      | "rateLimits"
      | "metrics"
      | "telemetry"
      | "logLevel"
      | "logFormat"
    >
  >

type StorageError = SqliteStorageError | Layer.Layer.Error<ReturnType<typeof PgStorage.layer>>

/**
 * The one place that picks the store: PostgreSQL for a `postgres://` URL, else
 * the SQLite file. Either way pending migrations run before the first use. On
 * PostgreSQL a serving engine also carries payment status changes between
 * instances (LISTEN/NOTIFY), on the same pool: one client layer value, built once.
 */
const engineOptions = (
  host: StandaloneHost,
  { database, ...given }: EngineSettings,
  serving = false
): PaymentEngineOptions<StorageError> => {
  const settings = {
    publicUrl: given.publicUrl,
    // The engine's settings not given stay out: its schema applies their defaults.
    ...(given.maxBodyBytes === undefined ? {} : { maxBodyBytes: given.maxBodyBytes }),
    ...(given.basePath === undefined ? {} : { basePath: given.basePath }),
    ...(given.paymentLifetimeMs === undefined
      ? {}
      : { paymentLifetimeMs: given.paymentLifetimeMs }),
    ...(given.maxLongPollMs === undefined ? {} : { maxLongPollMs: given.maxLongPollMs }),
    ...(given.maxHeldLongPolls === undefined ? {} : { maxHeldLongPolls: given.maxHeldLongPolls }),
    ...(given.maxHeldPublicLongPolls === undefined
      ? {}
      : { maxHeldPublicLongPolls: given.maxHeldPublicLongPolls }),
    ...(given.maxHeldLongPollsPerPayment === undefined
      ? {}
      : { maxHeldLongPollsPerPayment: given.maxHeldLongPollsPerPayment }),
    ...(given.expirySweepMs === undefined ? {} : { expirySweepMs: given.expirySweepMs }),
    ...(given.rateLimits === undefined ? {} : { rateLimits: given.rateLimits }),
    ...(given.retention === undefined ? {} : { retention: given.retention }),
    ...(given.metrics === undefined ? {} : { metrics: given.metrics }),
    ...(given.telemetry !== undefined && Option.isSome(given.telemetry)
      ? { telemetry: given.telemetry.value }
      : {}),
    logging: { level: given.logLevel ?? "info", format: given.logFormat ?? "json" },
    logos: logoCaptureLayer({ allowPrivate: given.fetchAllowPrivate === true }),
    webhookUrls: webhookUrlGuardLayer({ allowPrivate: given.fetchAllowPrivate === true }),
    webhookSender: webhookSenderLayer({ allowPrivate: given.fetchAllowPrivate === true }),
    webhookDelivery: {
      ...Option.match(given.webhookRetryScheduleMs ?? Option.none(), {
        onNone: () => ({}),
        onSome: (retryScheduleMs) => ({ retryScheduleMs })
      }),
      ...Option.match(given.webhookLeaseMs ?? Option.none(), {
        onNone: () => ({}),
        onSome: (leaseMs) => ({ leaseMs })
      }),
      ...(given.webhookMaxEndpointsPerPartner === undefined
        ? {}
        : { maxEndpointsPerPartner: given.webhookMaxEndpointsPerPartner }),
      ...(given.webhookInFlightPerPartner === undefined
        ? {}
        : { perPartner: given.webhookInFlightPerPartner })
    },
    ...(given.secret !== undefined && Option.isSome(given.secret)
      ? { secret: given.secret.value }
      : {}),
    ...(given.previousSecrets === undefined || given.previousSecrets.length === 0
      ? {}
      : { previousSecrets: given.previousSecrets })
  }
  if (!isPostgresUrl(database)) {
    const readWorker = given.sqliteReadWorker === false ? undefined : host.sqliteReadWorker
    return { ...settings, storage: host.sqlite.layer({ filename: database, readWorker }) }
  }
  const client = PgStorage.migratedClientLayer({ url: database })
  const storage: Layer.Layer<PayStorage, StorageError> = PgStorage.PgStores.pipe(
    Layer.provide(client)
  )
  return serving
    ? {
        ...settings,
        storage,
        events: PgStorage.PgPaymentEvents.layer().pipe(Layer.provide(client))
      }
    : { ...settings, storage }
}

/** Applies pending migrations to the database and names those it applied (`pay migrate`). */
export const migrateDatabase = (host: StandaloneHost, database: string) => {
  const applied: Effect.Effect<
    ReadonlyArray<readonly [number, string]>,
    Effect.Effect.Error<typeof PgStorage.migrate> | SqliteStorageError
  > = isPostgresUrl(database)
    ? Effect.provide(PgStorage.migrate, PgStorage.clientLayer({ url: database }))
    : host.sqlite.migrateFile(database)
  return Effect.map(applied, (migrations) =>
    migrations.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
  )
}

/** The engine's services on the database, without serving or background work (the CLI, tests). */
export const engineLayer = (host: StandaloneHost, settings: EngineSettings) => {
  const options = engineOptions(host, settings)
  return payEngineLayer({
    ...options,
    config: engineConfig({
      publicUrl: options.publicUrl,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes })
    })
  })
}

export interface Bootstrapped {
  readonly partnerId: string
  readonly apiKey: string
}

/** On an empty database, the first partner account and its key (shown once). */
export const bootstrapPartner = (apiKey: Option.Option<string>) =>
  Effect.gen(function* () {
    const partners = yield* Partners
    if ((yield* partners.list).length > 0) return Option.none<Bootstrapped>()
    const created = yield* partners.create({
      name: "Default partner",
      apiKey: Option.getOrUndefined(apiKey),
      keyName: "bootstrap",
      actor: engineActor
    })
    return Option.some<Bootstrapped>({ partnerId: created.partner.id, apiKey: created.apiKey })
  })

/**
 * The networks wallets pay on: the `PAY_CONFIG` file's, or else the sandbox
 * chain, started in this scope, with its routes.
 */
export const chainFor = (config: StandaloneConfig) =>
  Option.match(config.payConfigPath, {
    onSome: (path) =>
      Either.match(readPayConfig(path), {
        onLeft: (message) => Effect.fail(new StartRefused({ message })),
        onRight: (setup) =>
          Effect.succeed({ setup, routes: [] as ReadonlyArray<Route<never>>, sandbox: undefined })
      }),
    onNone: () => {
      const refusal = sandboxRefusal(config)
      if (refusal !== undefined) return Effect.fail(new StartRefused({ message: refusal }))
      return Effect.map(Sandbox.make(), (sandbox) => ({
        setup: sandboxChainSetup(sandbox),
        routes: sandboxRoutes(sandbox, config.publicUrl),
        sandbox
      }))
    }
  })

/** What in-process tests swap in: a logo fetcher that trusts a test CA. */
export interface StandaloneOverrides {
  readonly logos?: Layer.Layer<LogoCapture>
  /** Webhook delivery settings (tests: a short retry schedule). */
  readonly webhookDelivery?: PaymentEngineSettings["webhookDelivery"]
  /** False: serve only, no background work (a web tier's engine; tests: a third instance). */
  readonly workers?: boolean
  /**
   * Wraps the storage layer the database names. For tests only: the pause
   * points that force the order of a race (test/pause-points.ts). No setting
   * reaches it (not the environment, not PAY_CONFIG); unset, nothing is wrapped.
   */
  readonly wrapStorage?: <E>(storage: Layer.Layer<PayStorage, E>) => Layer.Layer<PayStorage, E>
  /** Where the engine's log lines go instead of stdout (tests: kept to be read). */
  readonly logConsole?: Console.Console
}

/** Starts the whole server; it stops, in order, when the scope closes. */
export const startStandalone = (
  host: StandaloneHost,
  config: StandaloneConfig,
  overrides: StandaloneOverrides = {}
) =>
  Effect.gen(function* () {
    const chain = yield* chainFor(config)
    const { setup } = chain
    const { wrapStorage, logConsole, ...parts } = overrides
    const options = engineOptions(host, config, true)
    const makeEngine = makePaymentEngine({
      ...options,
      ...(wrapStorage === undefined ? {} : { storage: wrapStorage(options.storage) }),
      ...parts,
      ...chainEngineOptions(setup),
      gateway: {
        ...setup.gateway,
        ...Option.match(config.quoteLockMs, {
          onNone: () => ({}),
          onSome: (quoteLockMs) => ({ quoteLockMs })
        }),
        ...(config.buyerDataRetentionMs === undefined
          ? {}
          : { buyerDataRetentionMs: config.buyerDataRetentionMs })
      },
      pages: checkoutPages,
      routes: [...apiReferenceRoutes({ basePath: config.basePath }), ...chain.routes]
    })
    const engine = yield* logConsole === undefined
      ? makeEngine
      : Effect.withConsole(makeEngine, logConsole)
    const { context } = engine
    const server = yield* host.serve(engine, {
      host: config.host,
      port: config.port,
      // The engine's own long-poll cap as it runs (PAY_MAX_LONG_POLL_MS, else its default).
      maxLongPollMs: Context.get(context, PaymentsConfig).maxLongPollMs,
      ...(config.maxConnections === undefined ? {} : { maxConnections: config.maxConnections })
    })
    // Only once the server listens: a start that fails before (a busy port) must not have
    // made the first partner, whose key is shown only with the start that made it.
    const bootstrapped = yield* bootstrapPartner(config.bootstrapApiKey).pipe(
      Effect.provide(context)
    )
    // Chains started afresh at this start (a new run of the sandbox), for the banner.
    const freshRuns = yield* Effect.provide(
      ChainWork.use((w) => w.freshRuns),
      context
    )
    // `context` lets in-process tests reach the services; `sandbox`, the sandbox chain.
    return { server, bootstrapped, context, sandbox: chain.sandbox, freshRuns }
  })
