/**
 * The long-poll bench's baseline: what a bare node:http server costs to hold the same
 * requests, so the engine's memory per held long-poll is read against what node:http
 * itself costs on this machine. No database and no JSON decoding beyond the least: any
 * payment id is `requires_action` until cancelled here; `GET …/status?maxPollMs=N` is
 * held (a timer of its own, the response kept in a map by payment) until the payment is
 * cancelled, the time runs out or the client goes away; `POST …/cancel` answers its
 * payment's held polls; `POST /v1/payments` answers a new id. The Api-Key is compared,
 * not hashed. Run as its own process: BASELINE_API_KEY.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { env, fail, header, send, serveBaseline } from "./baseline-http.js"

const apiKey = env("BASELINE_API_KEY")
const cancelled = new Set<string>()
const held = new Map<string, Set<ServerResponse>>()
let created = 0

const statusOf = (id: string) => {
  const status = cancelled.has(id) ? "cancelled" : "requires_action"
  const final = status === "cancelled"
  return { status, isFinal: final, ...(final ? {} : { pollInMs: 1000 }), info: null }
}

const hold = (res: ServerResponse, id: string, maxPollMs: number) => {
  let set = held.get(id)
  if (set === undefined) {
    set = new Set()
    held.set(id, set)
  }
  set.add(res)
  const timer = setTimeout(() => send(res, 200, statusOf(id)), maxPollMs)
  // Answered, timed out or abandoned: let go of it.
  res.once("close", () => {
    clearTimeout(timer)
    const waiting = held.get(id)
    waiting?.delete(res)
    if (waiting?.size === 0) held.delete(id)
  })
}

const PATH = /^\/v1\/payments\/([^/?]+)\/(status|cancel)(?:\?maxPollMs=(\d+))?$/

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  if (header(req, "api-key") !== apiKey) return fail(res, 401, "invalid_api_key", "unknown API key")
  const url = req.url ?? "/"
  if (req.method === "POST" && url === "/v1/payments") {
    req.resume()
    return send(res, 201, { paymentId: `pay_baseline${created++}`, status: "requires_action" })
  }
  const match = PATH.exec(url)
  if (match === null) return fail(res, 404, "not_found", "no such route")
  const id = decodeURIComponent(match[1]!)
  if (match[2] === "cancel" && req.method === "POST") {
    req.resume()
    cancelled.add(id)
    send(res, 200, { paymentId: id, status: "cancelled" })
    for (const waiting of held.get(id) ?? []) send(waiting, 200, statusOf(id))
    return
  }
  if (match[2] !== "status" || req.method !== "GET")
    return fail(res, 404, "not_found", "no such route")
  const maxPollMs = Math.min(Number(match[3] ?? 0), 30_000)
  if (maxPollMs <= 0 || cancelled.has(id)) return send(res, 200, statusOf(id))
  hold(res, id, maxPollMs)
}

serveBaseline(handle, () => {}, { closeConnections: true })
