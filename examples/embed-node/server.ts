/**
 * Embedding the engine in a platform's own Node server: the platform keeps
 * its routes (here `/shop/...`) and hands everything else to the engine's
 * `(req, res)` handler. No Effect knowledge needed: `createPaymentEngine` returns
 * the handlers and a `close` for shutdown.
 *
 * Run: PORT=3000 npx tsx examples/embed-node/server.ts
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { toNodeHandler } from "@pay/adapter-node"
import { createPaymentEngine } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"

export const startPlatform = async (options: {
  readonly database: string
  readonly port: number
}) => {
  const engine = await createPaymentEngine({
    storage: SqliteStorage.layer({ filename: options.database }),
    publicUrl: `http://127.0.0.1:${options.port}`
  })
  const pay = toNodeHandler(engine)

  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/shop")) {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("The platform's own page\n")
      return
    }
    pay(req, res)
  })
  await new Promise<void>((resolve) => server.listen(options.port, "127.0.0.1", resolve))

  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await engine.close()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const platform = await startPlatform({
    database: process.env.PAY_DATABASE ?? "./data/embedded.sqlite",
    port: Number(process.env.PORT ?? 3000)
  })
  console.log(`Platform on http://127.0.0.1:${platform.port} (engine at /v1/..., /docs)`)
  const stop = () => void platform.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
