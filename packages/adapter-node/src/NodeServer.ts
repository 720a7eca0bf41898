/**
 * A node:http server for the engine, as a scoped Effect resource: listening
 * when acquired; on release it stops accepting, lets in-flight requests
 * finish (up to a grace period), then closes what is left.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect } from "effect"
import { type HandlesRequests, toNodeHandler } from "./NodeHandler.js"

export interface ServeOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** How long shutdown waits for in-flight requests. */
  readonly shutdownGrace?: Duration.DurationInput
}

export interface RunningServer {
  readonly server: Server
  readonly host: string
  readonly port: number
  /** `http://host:port`, with IPv6 hosts bracketed. */
  readonly url: string
}

const listen = (server: Server, options: ServeOptions) =>
  Effect.async<AddressInfo, Error>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen(options.port, options.host, () => {
      server.off("error", onError)
      resume(Effect.succeed(server.address() as AddressInfo))
    })
  })

const close = (server: Server, grace: Duration.DurationInput) =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeIdleConnections()
  }).pipe(
    Effect.timeout(grace),
    Effect.catchAll(() => Effect.sync(() => server.closeAllConnections()))
  )

/** Serves the engine on its own node:http server (the standalone server does). */
export const serve = (engine: HandlesRequests, options: ServeOptions) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(engine))
      const address = yield* listen(server, options)
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address
      return {
        server,
        host: address.address,
        port: address.port,
        url: `http://${host}:${address.port}`
      } satisfies RunningServer
    }),
    ({ server }) => close(server, options.shutdownGrace ?? Duration.seconds(10))
  )
