/** The standalone server's host on Node: better-sqlite3 and node:http (see host.ts). */
import { serve } from "@pay/adapter-node"
import * as SqliteOnNode from "@pay/storage-sqlite/node"
import { Effect } from "effect"
import type { StandaloneHost } from "./host.js"

export const nodeHost: StandaloneHost = {
  runtime: `Node ${process.version}`,
  sqlite: SqliteOnNode,
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
