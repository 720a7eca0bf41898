/**
 * The bench's Node baselines' HTTP side, whichever database they write to: the shared
 * routes, checks and answers (baseline-rules.ts) on a bare node:http server. Each baseline
 * adds only its database's work.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import {
  createdBody,
  errorBody,
  HEALTH_BODY,
  MAX_BODY_BYTES,
  type NewPayment,
  type Refusal,
  readCreate as readCreateBody,
  type StatusColumns,
  statusBody
} from "./baseline-rules.js"

export { env, isRefusal, route, type StatusColumns, sha256 } from "./baseline-rules.js"

/** `body` as JSON, with its length (one write). */
export const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

export const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, errorBody(code, message))

export const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The request body's text, refused past MAX_BODY_BYTES. */
export const readText = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) reject(new Error("too large"))
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** The create's body read and checked: the payment to insert, or why it is refused. */
export const readCreate = (req: IncomingMessage): Promise<NewPayment | Refusal> =>
  readCreateBody(header(req, "content-type"), () => readText(req))

export const refuse = (res: ServerResponse, [status, code, message]: Refusal) =>
  fail(res, status, code, message)

let publicUrl = ""

export const sendCreated = (res: ServerResponse, payment: NewPayment) =>
  send(res, 201, createdBody(publicUrl, payment))

export const sendStatus = (res: ServerResponse, payment: StatusColumns) =>
  send(res, 200, statusBody(payment))

export const sendHealth = (res: ServerResponse) => send(res, 200, HEALTH_BODY)

/**
 * Serves `handle` on 127.0.0.1:PORT until SIGTERM or SIGINT, then calls `close` once the
 * server has closed; with `closeConnections`, kept-alive connections are closed at once
 * rather than waited for.
 */
export const serveBaseline = (
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  close: () => void,
  options: { readonly closeConnections?: boolean } = {}
) => {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error(error)
      if (!res.headersSent) fail(res, 500, "internal_error", "internal error")
    })
  })
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    const address = server.address()
    if (address === null || typeof address === "string") throw new Error("no TCP address")
    publicUrl = `http://127.0.0.1:${address.port}`
    console.log(`listening on ${publicUrl}`)
  })
  const stop = () => {
    server.close(close)
    if (options.closeConnections) server.closeAllConnections()
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}
