/**
 * The standalone server's host on Bun: bun:sqlite and Bun.serve (see host.ts).
 * Imported only under Bun.
 */
import { serve } from "@pay/adapter-bun"
import * as SqliteOnBun from "@pay/storage-sqlite/bun"
import { Effect } from "effect"
import type { StandaloneHost } from "./host.js"

export const bunHost: StandaloneHost = {
  runtime: `Bun ${process.versions.bun}`,
  sqlite: SqliteOnBun,
  serve: (engine, { host, port, maxLongPollMs }) =>
    Effect.map(serve(engine, { hostname: host, port, maxLongPollMs }), ({ url, port }) => ({
      url,
      port
    }))
}
