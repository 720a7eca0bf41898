/**
 * Serves the engine's web-standard fetch handler on Bun (`Bun.serve`). Bun
 * closes a connection idle for `idleTimeout` seconds (10 by default), shorter
 * than a held long-poll: the timeout is set from the engine's long-poll cap.
 * A client that goes away aborts its request's signal, which the engine turns
 * into an interrupt (a held long-poll lets go at once). What differs from
 * @pay/adapter-node's server: Bun.serve has no header or request timeout and
 * no connection cap (node's headersTimeout, requestTimeout, maxConnections);
 * the idle timeout is the only one. It reads and drops a refused body (413)
 * still arriving itself, so the client reads its answer (tested in
 * examples/standalone/test/limits.e2e.test.ts). The engine's cap on held
 * long-polls (`maxHeldLongPolls`) is the same on both.
 */

/**
 * The part of Bun's API used here, declared in this module: Bun's own global types
 * (`@types/bun`) would retype `fetch` and friends for every package of the repository.
 */
interface BunServer {
  readonly hostname: string | undefined
  readonly port: number | undefined
  stop(closeActiveConnections?: boolean): Promise<void>
}
declare const Bun: {
  serve(options: {
    readonly hostname: string
    readonly port: number
    readonly idleTimeout: number
    readonly fetch: (request: Request) => Promise<Response>
  }): BunServer
}

/** The part of an engine this adapter needs (`createPaymentEngine`'s or `makePaymentEngine`'s). */
export interface AnswersFetch {
  readonly fetch: (request: Request) => Promise<Response>
  /** Answers held long-polls at once (PaymentEngineService.drain): `stop` calls it first. */
  readonly drain?: () => void
}

export interface BunServeOptions {
  readonly hostname: string
  /** 0 picks a free port. */
  readonly port: number
  /** The engine's long-poll cap (`maxLongPollMs`, default 30 s): connections may idle past it. */
  readonly maxLongPollMs?: number
  /** How long `stop` lets in-flight requests finish before closing what is left. Default 10 s. */
  readonly shutdownGraceMs?: number
}

export interface RunningBunServer {
  /** `http://host:port`, with IPv6 hosts bracketed. */
  readonly url: string
  readonly port: number
  /**
   * Stops accepting, has the engine answer its held long-polls at once, lets
   * in-flight requests finish (up to the grace), then closes the rest.
   */
  readonly stop: () => Promise<void>
}

/** Bun's idle timeout is whole seconds, at most 255: the long-poll cap and a margin. */
export const idleTimeoutFor = (maxLongPollMs: number): number =>
  Math.min(255, Math.ceil(maxLongPollMs / 1000) + 10)

export const serveOnBun = (engine: AnswersFetch, options: BunServeOptions): RunningBunServer => {
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    idleTimeout: idleTimeoutFor(options.maxLongPollMs ?? 30_000),
    fetch: (request) => engine.fetch(request)
  })
  const host = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname
  let stopping: Promise<void> | undefined
  return {
    url: `http://${host}:${server.port}`,
    port: server.port ?? options.port,
    stop: () => {
      stopping ??= (async () => {
        const grace = options.shutdownGraceMs ?? 10_000
        let timer: ReturnType<typeof setTimeout> | undefined
        const graceful = server.stop(false)
        engine.drain?.()
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, grace)
        })
        await Promise.race([graceful, late])
        clearTimeout(timer)
        // Whatever outlived the grace is closed now.
        await server.stop(true)
      })()
      return stopping
    }
  }
}
