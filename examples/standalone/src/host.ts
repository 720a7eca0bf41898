/**
 * What the standalone server takes from the runtime it runs on: the SQLite
 * driver and the HTTP server. Everything else (config, engine, sandbox chain,
 * PostgreSQL) is the same code on Node and Bun. `host-node.ts` and
 * `host-bun.ts` give them; a host module is imported only on its own runtime
 * (the Bun one loads bun:sqlite).
 */
import type { PaymentEngineService } from "@pay/core"
import type { SqliteFileStorage, SqliteReadWorkerOptions } from "@pay/storage-sqlite"
import type { Effect, Scope } from "effect"

export interface ServeSettings {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** The engine's long-poll cap: connections may idle past it. */
  readonly maxLongPollMs: number
  /** Connections open at once (node:http's `maxConnections`; Bun.serve has no such setting). */
  readonly maxConnections?: number
}

export interface ServingServer {
  /** `http://host:port`, with IPv6 hosts bracketed. */
  readonly url: string
  readonly port: number
}

export interface StandaloneHost {
  /** The runtime and its version, for the start banner: `Node v20.20.2`, `Bun 1.4.5`. */
  readonly runtime: string
  readonly sqlite: SqliteFileStorage
  /** The program of a worker thread for the SQLite listings, where this build ships one. */
  readonly sqliteReadWorker?: SqliteReadWorkerOptions | undefined
  /** Serves the engine until the scope closes, then stops gracefully. */
  readonly serve: (
    engine: PaymentEngineService,
    settings: ServeSettings
  ) => Effect.Effect<ServingServer, Error, Scope.Scope>
}
