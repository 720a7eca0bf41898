/**
 * A node:http server for the engine, as a scoped Effect resource: listening
 * when acquired; on release it stops accepting, has the engine answer its held
 * long-polls at once (`drain`), lets in-flight requests finish (up to a grace
 * period), then closes what is left. Its limits
 * (`serverLimits`) bound what a client can hold: time to send the headers and
 * the request, and connections.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect } from "effect"
import { type HandlesRequests, toNodeHandler } from "./NodeHandler.js"

/** What a node:http server serving the engine is limited to (`applyServerLimits`). */
export interface ServerLimits {
  /** The engine's long-poll cap (`maxLongPollMs`, default 30 s): the request timeout stays above it. */
  readonly maxLongPollMs?: number
  /** Time a client has to send a request's headers. Default 20 s. */
  readonly headersTimeoutMs?: number
  /**
   * Time a client has to send a whole request (headers and body); node counts
   * receiving only, not the answer. Default 120 s, and always at least the
   * long-poll cap plus 10 s.
   */
  readonly requestTimeoutMs?: number
  /** Connections open at once; more are refused (node's `server.maxConnections`). Default 25,000. */
  readonly maxConnections?: number
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 20_000
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000
export const DEFAULT_MAX_CONNECTIONS = 25_000

/** The limits as node's server settings, defaults filled in. */
export const serverLimits = (limits: ServerLimits = {}) => {
  const headersTimeout = limits.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS
  const requestTimeout = Math.max(
    limits.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    (limits.maxLongPollMs ?? 30_000) + 10_000,
    // node requires headersTimeout <= requestTimeout.
    headersTimeout
  )
  return {
    headersTimeout,
    requestTimeout,
    maxConnections: limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS
  }
}

/**
 * Sets the limits on a node:http server: for an embedder serving the engine
 * (`toNodeHandler`) on a server of its own; `serve` does it.
 */
export const applyServerLimits = (server: Server, limits: ServerLimits = {}): void => {
  const settings = serverLimits(limits)
  server.headersTimeout = settings.headersTimeout
  server.requestTimeout = settings.requestTimeout
  server.maxConnections = settings.maxConnections
}

export interface ServeOptions extends ServerLimits {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** How long shutdown waits for in-flight requests. Default 10 s. */
  readonly shutdownGrace?: Duration.DurationInput
}

/** The engine `serve` answers with: its handler, and the start of its shutdown when it has one. */
export interface ServesRequests extends HandlesRequests {
  /** Answers held long-polls at once (PaymentEngineService.drain). */
  readonly drain?: () => void
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

const close = (server: Server, grace: Duration.DurationInput, drain: (() => void) | undefined) =>
  Effect.async<void>((resume) => {
    // Connections that finish their request from now on (a drained long-poll's among them) are
    // idle keep-alive ones the server would otherwise wait for: closed as they come.
    const sweep = setInterval(() => server.closeIdleConnections(), 50)
    // The grace is this timer, not an Effect timeout: a release runs uninterruptibly, where a
    // timeout could not cut the wait short, and made interruptible it would be cut at once
    // when the stop is an interruption (a signal: the standalone server), in-flight requests
    // and all. What is still open after the grace is closed; then the server's close ends.
    const cutShort = setTimeout(() => server.closeAllConnections(), Duration.toMillis(grace))
    server.close(() => {
      clearInterval(sweep)
      clearTimeout(cutShort)
      resume(Effect.void)
    })
    drain?.()
    server.closeIdleConnections()
    return Effect.sync(() => {
      clearInterval(sweep)
      clearTimeout(cutShort)
    })
  })

/** Serves the engine on its own node:http server (the standalone server does). */
export const serve = (engine: ServesRequests, options: ServeOptions) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const { headersTimeout, requestTimeout } = serverLimits(options)
      const server = createServer(
        { keepAliveTimeout: 5_000, headersTimeout, requestTimeout },
        toNodeHandler(engine)
      )
      applyServerLimits(server, options)
      const address = yield* listen(server, options)
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address
      return {
        server,
        host: address.address,
        port: address.port,
        url: `http://${host}:${address.port}`
      } satisfies RunningServer
    }),
    ({ server }) =>
      close(server, options.shutdownGrace ?? Duration.seconds(10), engine.drain?.bind(engine))
  )
