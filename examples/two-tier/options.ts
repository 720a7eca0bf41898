/**
 * What both tiers start from: their settings, read from the environment, and
 * the engine options built from them. Web and worker processes build their
 * options here and nowhere else, so they cannot drift apart: the same
 * PostgreSQL stores, the same event channel (LISTEN/NOTIFY) and the same
 * networks file, which is what lets a payment confirmed on a web process be
 * collected by a worker and its long-poll woken back on any web process.
 */
import { type ChainSetup, chainEngineOptions } from "@pay/chain-evm"
import type { PaymentEngineOptions } from "@pay/core"
import { PaymentEngineOptionsError } from "@pay/core"
import * as PgStorage from "@pay/storage-postgres"
import { Either, Layer } from "effect"
import { readPayConfig } from "../standalone/src/payConfig.js"

export type Tier = "web" | "worker"

export interface TierSettings {
  /** The `postgres://` URL every process of the deployment shares. */
  readonly database: string
  /** The networks file (`PAY_CONFIG`). */
  readonly payConfigPath: string
  readonly host: string
  /** 0: any free port. */
  readonly port: number
  /** PAY_PUBLIC_URL; absent, a web process names itself once it knows its port. */
  readonly publicUrl: string | undefined
}

/**
 * The settings in `env`, or the one line that says what is wrong. HOST and
 * PORT are read only for the web tier (a worker serves nothing).
 */
const readSettings = (
  tier: Tier,
  env: NodeJS.ProcessEnv = process.env
): Either.Either<TierSettings, string> => {
  const database = env.PAY_DATABASE ?? ""
  if (!/^postgres(ql)?:\/\//i.test(database) || !URL.canParse(database)) {
    return Either.left(
      "PAY_DATABASE must be a postgres:// (postgresql://) URL: the database every tier shares"
    )
  }
  const payConfigPath = env.PAY_CONFIG ?? ""
  if (payConfigPath === "") {
    return Either.left("PAY_CONFIG must name the networks file (see examples/two-tier/README.md)")
  }
  const host = env.HOST || "127.0.0.1"
  const portText = tier === "web" ? (env.PORT ?? "8080") : "0"
  const port = Number(portText)
  if (portText === "" || !Number.isInteger(port) || port < 0 || port > 65_535) {
    return Either.left(
      `PORT must be a port number from 0 to 65535, not ${JSON.stringify(portText)}`
    )
  }
  const publicUrl = env.PAY_PUBLIC_URL || undefined
  return Either.right({ database, payConfigPath, host, port, publicUrl })
}

/** `http://HOST:PORT`, with an IPv6 host in brackets. */
export const urlOf = (host: string, port: number) =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/**
 * A worker hands out no links, but the engine's options require a public URL:
 * it gets PAY_PUBLIC_URL when set (so both tiers may share one environment
 * file), else this placeholder.
 */
const WORKER_PUBLIC_URL = "http://127.0.0.1"

export interface LoadedTier {
  readonly tier: Tier
  readonly settings: TierSettings
  readonly setup: ChainSetup
}

/** The settings and the networks file, checked before anything opens or listens. */
export const loadTier = (
  tier: Tier,
  env: NodeJS.ProcessEnv = process.env
): Either.Either<LoadedTier, string> =>
  Either.flatMap(readSettings(tier, env), (settings) =>
    Either.map(readPayConfig(settings.payConfigPath, env), (setup) => ({ tier, settings, setup }))
  )

/**
 * The engine options of one process: the networks file's chain, tokens,
 * rates, gateway and job settings, and the PostgreSQL stores and events on
 * one client (one pool, migrated before first use; processes starting
 * together take turns at the migrations under a lock).
 */
export const engineOptions = (
  { tier, settings, setup }: LoadedTier,
  publicUrl: string = settings.publicUrl ?? WORKER_PUBLIC_URL
) => {
  // `pay-web` / `pay-worker` in pg_stat_activity, to tell the tiers' connections apart.
  const client = PgStorage.migratedClientLayer({
    url: settings.database,
    applicationName: `pay-${tier}`
  })
  return {
    ...chainEngineOptions(setup),
    publicUrl,
    storage: PgStorage.PgStores.pipe(Layer.provide(client)),
    events: PgStorage.PgPaymentEvents.layer().pipe(Layer.provide(client))
  } satisfies PaymentEngineOptions<unknown>
}

/**
 * A start failure as one line: an options error lists every wrong option
 * (one per line in its own message), anything else gives its message.
 */
const describeFailure = (error: unknown): string => {
  if (error instanceof PaymentEngineOptionsError) {
    return `invalid options: ${error.issues.map((i) => `${i.option} ${i.message}`).join("; ")}`
  }
  return error instanceof Error ? error.message : String(error)
}

/** Says why the process cannot run, in one line (whatever the message's own lines), and exits 1. */
export const exitWith = (tier: Tier, error: unknown): never => {
  const line = typeof error === "string" ? error : describeFailure(error)
  process.stderr.write(`${tier}: ${line.replace(/\s*\n\s*/g, " ")}\n`)
  process.exit(1)
}
