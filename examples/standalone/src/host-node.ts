/** The standalone server's host on Node: better-sqlite3 and node:http (see host.ts). */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { serve } from "@pay/adapter-node"
import * as SqliteOnNode from "@pay/storage-sqlite/node"
import { Effect } from "effect"
import type { StandaloneHost } from "./host.js"

/**
 * The SQLite read worker's program, which the bundle ships beside itself (examples/build.mjs).
 * Run from its sources (the in-process tests), the server has none and lists on its thread.
 */
const bundledReadWorker = new URL("./sqlite-read-worker.mjs", import.meta.url)

export const nodeHost: StandaloneHost = {
  runtime: `Node ${process.version}`,
  sqlite: SqliteOnNode,
  sqliteReadWorker: existsSync(fileURLToPath(bundledReadWorker))
    ? { script: bundledReadWorker }
    : undefined,
  serve: (engine, { host, port, maxLongPollMs, maxConnections }) =>
    Effect.map(
      serve(engine, {
        host,
        port,
        maxLongPollMs,
        ...(maxConnections === undefined ? {} : { maxConnections })
      }),
      ({ url, port }) => ({ url, port })
    )
}
