/**
 * The web tier of a two-tier deployment: the API and the wallet gateway on
 * node:http, as many processes as you like behind a load balancer, none of
 * them doing background work (`workers: false`): a confirmed payment is left
 * to the worker tier (worker.ts). Status changes travel between the processes
 * over PostgreSQL LISTEN/NOTIFY, so a long-poll held here wakes when a worker
 * or another web process changes its payment.
 *
 * Environment: PAY_DATABASE (postgres://…), PAY_CONFIG (the networks file),
 * HOST (default 127.0.0.1), PORT (default 8080; 0: any free port),
 * PAY_PUBLIC_URL (default http://HOST:PORT). Prints `listening on <url>` once
 * it serves; SIGTERM or SIGINT closes the server, then the engine.
 * Run: see README.md.
 */
import { createServer, type RequestListener } from "node:http"
import type { AddressInfo } from "node:net"
import { toNodeHandler } from "@pay/adapter-node"
import { createPaymentEngine } from "@pay/core"
import { Either } from "effect"
import { engineOptions, exitWith, loadTier, urlOf } from "./options.js"

const tier = Either.getOrElse(loadTier("web"), (message) => exitWith("web", message))
const { host, port } = tier.settings

// Bound before the engine starts: with PORT=0 the port, and so the default
// public URL the engine's links are made of, is known only once bound. Until
// the engine is ready (a few hundred ms) a request is asked to come back.
let serve: RequestListener | undefined
const server = createServer((req, res) => {
  if (serve !== undefined) return serve(req, res)
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
  res.end('{"code":"service_unavailable","message":"The engine is starting"}')
})
await new Promise<void>((resolve, reject) => {
  server.once("error", reject)
  server.listen(port, host, resolve)
}).catch((error: Error) =>
  exitWith("web", `cannot listen on ${urlOf(host, port)}: ${error.message}`)
)
const url = urlOf(host, (server.address() as AddressInfo).port)

const engine = await createPaymentEngine({
  ...engineOptions(tier, tier.settings.publicUrl ?? url),
  workers: false
}).catch((error: unknown) => exitWith("web", error))
serve = toNodeHandler(engine)

/** In-flight requests (a long-poll is held up to 30 s) get this long to finish. */
const DRAIN_MS = 10_000
let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  // Should closing hang, do not outlive the signal by much.
  setTimeout(() => process.exit(1), DRAIN_MS + 5_000).unref()
  setTimeout(() => server.closeAllConnections(), DRAIN_MS).unref()
  server.close(() =>
    engine.close().then(
      () => {
        console.log("web: stopped")
        process.exit(0)
      },
      (error: unknown) => exitWith("web", error)
    )
  )
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
// Said only once a signal would stop it cleanly: whoever reads this line may send one at once.
console.log(`listening on ${url}`)
console.log(`  public URL ${engine.publicUrl}, no background work (the worker tier runs it)`)
