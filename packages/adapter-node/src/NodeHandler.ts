/**
 * The engine as a node:http `(req, res)` handler, to serve standalone or to
 * mount in an existing Node app: node:http, Express (`app.use("/pay", …)`),
 * Fastify (`reply.hijack()`, then the raw request and response), Koa
 * (`ctx.respond = false`, then `ctx.req`, `ctx.res`).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { EngineHandler, EngineRequest } from "@pay/core"

/**
 * A body refused (413) while the client still sends it is read and dropped
 * after the answer, up to this many bytes and this long (a lingering close, as
 * nginx's `lingering_time`): closing at once would make the kernel reset the
 * connection over the unread bytes, and a client still sending would see a
 * broken pipe (EPIPE, ECONNRESET) instead of its 413. A client sending more,
 * or for longer, is cut off; one declaring more (Content-Length) is not
 * waited for.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024
export const LINGER_MAX_MS = 30_000

/**
 * Closes the connection once the rest of a refused body is read and dropped:
 * node ends a `Connection: close` answer with `socket.destroySoon()`, which is
 * put off until the body is all in (then the close is a clean FIN), or cut
 * short past the bounds (the connection is destroyed).
 */
const lingerThenClose = (req: IncomingMessage): void => {
  const socket = req.socket as IncomingMessage["socket"] & { destroySoon?: () => void }
  const destroySoon = socket.destroySoon
  if (typeof destroySoon !== "function") return
  socket.destroySoon = () => {
    socket.destroySoon = destroySoon
    const close = () => destroySoon.call(socket)
    if (req.complete || req.destroyed) return close()
    let dropped = 0
    const done = () => {
      clearTimeout(timer)
      req.off("data", onData)
      req.off("end", drained)
      req.off("close", done)
    }
    const drained = () => {
      done()
      close()
    }
    const cut = () => {
      done()
      socket.destroy()
    }
    const timer = setTimeout(cut, LINGER_MAX_MS)
    timer.unref()
    const onData = (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > LINGER_MAX_BYTES) cut()
    }
    req.on("data", onData)
    req.on("end", drained)
    req.on("close", done)
    req.resume()
  }
}

/** The part of an engine this adapter needs (`createPaymentEngine`'s or `makePaymentEngine`'s). */
export interface HandlesRequests {
  readonly handle: EngineHandler
}

/** A body some middleware read before the engine got the request (Express's body parsers). */
const alreadyRead = (req: IncomingMessage): Uint8Array | undefined => {
  const body = (req as { body?: unknown }).body
  if (body instanceof Uint8Array) return body
  if (typeof body === "string") return Buffer.from(body)
  return undefined
}

const readBody = (req: IncomingMessage, limit: number): Promise<Uint8Array | "too_large"> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      req.resume()
      resolve("too_large")
      return
    }
    if (req.readableEnded) {
      const body = alreadyRead(req)
      if (body === undefined) {
        reject(
          new Error(
            "the request body was consumed by a middleware before the engine: mount the engine before body parsers"
          )
        )
      } else resolve(body.length > limit ? "too_large" : body)
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    req.on("data", (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > limit) {
        // Stop buffering; the rest is drained and dropped.
        done = true
        chunks.length = 0
        resolve("too_large")
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks))
    })
    req.on("error", reject)
  })

/**
 * The request as the engine reads it. Under Express's `app.use(prefix, …)` the
 * path is `originalUrl` (Express takes the prefix off `url`): the engine sees
 * the whole path and takes off its own base path. `signal` is made only when
 * asked for (a request answered at once never needs one) and aborts when the
 * client goes away before the answer; `onAbandon` says the same with a plain
 * listener (a long-poll held without a fiber uses it). A class, so the getter lives on the
 * prototype and every request object keeps one fast shape.
 */
class NodeEngineRequest implements EngineRequest {
  readonly method: string
  readonly url: string
  private controller: AbortController | undefined
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse
  ) {
    this.method = req.method ?? "GET"
    this.url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/"
  }
  header(name: string): string | undefined {
    const value = this.req.headers[name]
    return Array.isArray(value) ? value.join(", ") : value
  }
  readBody(limit: number): Promise<Uint8Array | "too_large"> {
    return readBody(this.req, limit)
  }
  /** A listener on the response's close, no AbortController: what a held long-poll lets go with. */
  onAbandon(listener: () => void): void {
    const res = this.res
    if (res.destroyed || this.req.destroyed) {
      if (!res.writableFinished) listener()
      return
    }
    res.on("close", () => {
      if (!res.writableFinished) listener()
    })
  }
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const made = new AbortController()
      this.controller = made
      const res = this.res
      const abandoned = () => {
        if (!res.writableFinished) made.abort()
      }
      if (res.destroyed || this.req.destroyed) abandoned()
      else res.once("close", abandoned)
    }
    return this.controller.signal
  }
}

export const toEngineRequest = (req: IncomingMessage, res: ServerResponse): EngineRequest =>
  new NodeEngineRequest(req, res)

/** A `(req, res)` handler that answers every request through the engine. */
export const toNodeHandler = (engine: HandlesRequests) => {
  const handle = engine.handle
  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(toEngineRequest(req, res)).then(
      (response) => {
        if (res.destroyed) return
        // A refused body still coming: answered now, the rest read and dropped (bounded); one
        // declared larger than that bound is not waited for, the connection closes.
        if (!req.complete && response.status === 413) {
          res.setHeader("connection", "close")
          const declared = Number(req.headers["content-length"])
          if (!(Number.isFinite(declared) && declared > LINGER_MAX_BYTES)) lingerThenClose(req)
        }
        // A flat [name, value, ...] list is node's cheapest header form; a known length
        // spares the chunked framing, so headers and body leave in one write.
        const headers: Array<string> = []
        for (const name in response.headers) headers.push(name, response.headers[name]!)
        headers.push("content-length", String(Buffer.byteLength(response.body)))
        res.writeHead(response.status, headers)
        res.end(response.body)
      },
      // The engine turns every failure into a response; this is a last resort.
      () => {
        if (res.destroyed) return
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
        res.end('{"code":"internal_error","message":"Internal Server Error"}')
      }
    )
  }
}
