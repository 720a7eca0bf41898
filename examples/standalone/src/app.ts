/**
 * The standalone server assembled: the storage PAY_DATABASE names (a SQLite
 * file or PostgreSQL), the engine's services, the API reference page (`/docs`)
 * and a node:http server.
 * `main.ts` runs it; the CLI and the end-to-end tests use it too.
 */
import { serve } from "@pay/adapter-node"
import { apiReferenceRoutes } from "@pay/api-reference"
import {
  Chain,
  defaultNetworks,
  defaultTokens,
  makeEvmChain,
  makePayEngine,
  Partners,
  type PayStorage,
  Prices,
  payEngineLayer,
  type Route,
  TokenRegistry
} from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import * as PgStorage from "@pay/storage-postgres"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect, Either, Layer, Option } from "effect"
import { isPostgresUrl, type StandaloneConfig } from "./config.js"
import { readPayConfig } from "./payConfig.js"
import { sandboxChainSetup, sandboxRoutes } from "./sandbox.js"

type EngineSettings = Pick<StandaloneConfig, "database" | "publicUrl" | "maxBodyBytes"> &
  Partial<Pick<StandaloneConfig, "paymentLifetimeMs" | "maxLongPollMs">>

type StorageError =
  | Layer.Layer.Error<ReturnType<typeof SqliteStorage.layer>>
  | Layer.Layer.Error<ReturnType<typeof PgStorage.layer>>

/**
 * The one place that picks the store: PostgreSQL for a `postgres://` URL, else
 * the SQLite file. Either way pending migrations run before the first use. On
 * PostgreSQL a serving engine also carries payment status changes between
 * instances (LISTEN/NOTIFY), on the same pool: one client layer value, built once.
 */
const engineOptions = ({ database, ...settings }: EngineSettings, serving = false) => {
  if (!isPostgresUrl(database)) {
    return { storage: SqliteStorage.layer({ filename: database }), config: settings }
  }
  const client = PgStorage.migratedClientLayer({ url: database })
  const storage: Layer.Layer<PayStorage, StorageError> = PgStorage.PgStores.pipe(
    Layer.provide(client)
  )
  return serving
    ? {
        storage,
        config: settings,
        events: PgStorage.PgPaymentEvents.layer().pipe(Layer.provide(client))
      }
    : { storage, config: settings }
}

/** Applies pending migrations to the database and names those it applied (`pay migrate`). */
export const migrateDatabase = (database: string) =>
  Effect.map(
    isPostgresUrl(database)
      ? Effect.provide(PgStorage.migrate, PgStorage.clientLayer({ url: database }))
      : SqliteStorage.migrateFile(database),
    (applied) => applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
  )

/** The engine's services on the database, without serving or background work (the CLI, tests). */
export const engineLayer = (config: EngineSettings) => payEngineLayer(engineOptions(config))

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
      apiKey: Option.getOrUndefined(apiKey)
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
        onLeft: (message) => Effect.fail(new Error(message)),
        onRight: (setup) =>
          Effect.succeed({ setup, routes: [] as ReadonlyArray<Route<never>>, sandbox: undefined })
      }),
    onNone: () =>
      Effect.map(Sandbox.make(), (sandbox) => ({
        setup: sandboxChainSetup(sandbox),
        routes: sandboxRoutes(sandbox, config.publicUrl),
        sandbox
      }))
  })

/** Starts the whole server; it stops, in order, when the scope closes. */
export const startStandalone = (config: StandaloneConfig) =>
  Effect.gen(function* () {
    const chain = yield* chainFor(config)
    const { setup } = chain
    const base = engineOptions(config, true)
    const { handler, context } = yield* makePayEngine({
      ...base,
      config: {
        ...base.config,
        gateway: Option.match(config.quoteLockMs, {
          onNone: () => setup.gateway,
          onSome: (quoteLockMs) => ({ ...setup.gateway, quoteLockMs })
        }),
        ...(setup.fees === undefined ? {} : { fees: setup.fees }),
        ...(setup.chainWork === undefined ? {} : { chainWork: setup.chainWork })
      },
      chain: Layer.effect(Chain, makeEvmChain(setup.networks)),
      tokens: TokenRegistry.layer(
        [...defaultNetworks, ...setup.registryNetworks],
        [...defaultTokens, ...setup.registryTokens]
      ),
      prices: Prices.fromTable(setup.rates),
      routes: [...apiReferenceRoutes(), ...chain.routes]
    })
    const bootstrapped = yield* bootstrapPartner(config.bootstrapApiKey).pipe(
      Effect.provide(context)
    )
    const server = yield* serve(handler, { host: config.host, port: config.port })
    // `context` lets in-process tests reach the services; `sandbox`, the sandbox chain.
    return { server, bootstrapped, context, sandbox: chain.sandbox }
  })
