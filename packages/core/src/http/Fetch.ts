/**
 * The engine as a web-standard `fetch` handler: `Request` in, `Response` out,
 * for every runtime and framework that speaks them (Bun, Deno, Hono, Node's
 * own `Request`). Only web globals here, no server module.
 */
import type { EngineHandler } from "./Engine.js"
import type { EngineRequest, EngineResponse } from "./Exchange.js"

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const all = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return all
}

/** The body as a stream, cut off (and the rest cancelled) as soon as it passes `limit`. */
const readBody = async (request: Request, limit: number): Promise<Uint8Array | "too_large"> => {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN)
  const body = request.body
  if (Number.isFinite(declared) && declared > limit) {
    await body?.cancel().catch(() => {})
    return "too_large"
  }
  if (body === null) return new Uint8Array()
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return concat(chunks, size)
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return "too_large"
    }
    chunks.push(value)
  }
}

/** Path and query of an absolute request URL, as the engine matches them. */
const targetOf = (url: string): string => {
  const hostStart = url.indexOf("//")
  const pathStart = hostStart === -1 ? -1 : url.indexOf("/", hostStart + 2)
  if (pathStart === -1) return "/"
  const hash = url.indexOf("#", pathStart)
  return hash === -1 ? url.slice(pathStart) : url.slice(pathStart, hash)
}

export const fromFetchRequest = (request: Request): EngineRequest => ({
  method: request.method,
  url: targetOf(request.url),
  header: (name) => request.headers.get(name) ?? undefined,
  readBody: (limit) => readBody(request, limit),
  signal: request.signal
})

/** Statuses whose responses carry no body, whatever the engine wrote. */
const BODYLESS = new Set([101, 204, 205, 304])

export const toFetchResponse = (response: EngineResponse): Response =>
  new Response(BODYLESS.has(response.status) ? null : (response.body as BodyInit), {
    status: response.status,
    headers: response.headers
  })

/** `(Request) => Promise<Response>` over the engine's handler. */
export const toFetchHandler =
  (handle: EngineHandler) =>
  (request: Request): Promise<Response> =>
    handle(fromFetchRequest(request)).then(toFetchResponse)
