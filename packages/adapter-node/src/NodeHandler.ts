/**
 * The engine as a node:http request listener, to serve standalone or to mount
 * in an existing Node app (node:http, Express, Fastify's raw routes).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { EngineHandler, EngineRequest } from "@pay/core"

const readBody = (req: IncomingMessage, limit: number): Promise<Uint8Array | "too_large"> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      req.resume()
      resolve("too_large")
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

export const toEngineRequest = (req: IncomingMessage): EngineRequest => ({
  method: req.method ?? "GET",
  url: req.url ?? "/",
  header: (name) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value.join(", ") : value
  },
  readBody: (limit) => readBody(req, limit)
})

/** A `(req, res)` listener that answers every request through the engine. */
export const toNodeListener =
  (handler: EngineHandler) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    handler(toEngineRequest(req)).then(
      (response) => {
        if (!req.complete && response.status === 413) res.setHeader("connection", "close")
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
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
        res.end('{"code":"internal_error","message":"Internal Server Error"}')
      }
    )
  }
