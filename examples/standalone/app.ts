/**
 * The standalone server assembled: SQLite storage, the engine's services and
 * a node:http server. `main.ts` runs it; the end-to-end tests start it too.
 */
import { serve } from "@pay/adapter-node"
import { makePayEngine, Partners, PayConfig, PayServices } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect, Layer, Option } from "effect"
import type { StandaloneConfig } from "./config.js"

/** The engine's services on the SQLite file, with the engine's settings. */
export const engineLayer = (
  config: Pick<StandaloneConfig, "database" | "publicUrl" | "maxBodyBytes">
) =>
  Layer.mergeAll(
    PayServices.pipe(Layer.provideMerge(SqliteStorage.layer({ filename: config.database }))),
    Layer.succeed(PayConfig, { publicUrl: config.publicUrl, maxBodyBytes: config.maxBodyBytes })
  )

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
    const { handler, context } = yield* makePayEngine({
      storage: SqliteStorage.layer({ filename: config.database }),
      config: { publicUrl: config.publicUrl, maxBodyBytes: config.maxBodyBytes }
    })
    const bootstrapped = yield* bootstrapPartner(config.bootstrapApiKey).pipe(
      Effect.provide(context)
    )
    const server = yield* serve(handler, { host: config.host, port: config.port })
    return { server, bootstrapped }
  })
