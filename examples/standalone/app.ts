/**
 * The standalone server assembled: SQLite storage, the engine's services and
 * a node:http server. `main.ts` runs it; the end-to-end tests start it too.
 */
import { serve } from "@pay/adapter-node"
import { makePayEngine, Partners, payEngineLayer } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect, Option } from "effect"
import type { StandaloneConfig } from "./config.js"

type EngineSettings = Pick<StandaloneConfig, "database" | "publicUrl" | "maxBodyBytes"> &
  Partial<Pick<StandaloneConfig, "paymentLifetimeMs" | "maxLongPollMs">>

const engineOptions = ({ database, ...settings }: EngineSettings) => ({
  storage: SqliteStorage.layer({ filename: database }),
  config: settings
})

/** The engine's services on the SQLite file, without serving or background work (the CLI, tests). */
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

/** Starts the whole server; it stops, in order, when the scope closes. */
export const startStandalone = (config: StandaloneConfig) =>
  Effect.gen(function* () {
    const { handler, context } = yield* makePayEngine(engineOptions(config))
    const bootstrapped = yield* bootstrapPartner(config.bootstrapApiKey).pipe(
      Effect.provide(context)
    )
    const server = yield* serve(handler, { host: config.host, port: config.port })
    // `context` lets in-process tests drive what no route does yet (the chain's transitions).
    return { server, bootstrapped, context }
  })
