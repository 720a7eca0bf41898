/**
 * The bench's baseline on Bun: the least a server can do to answer the payment routes the
 * engine serves, on Bun's own HTTP server and SQLite driver (Bun.serve + bun:sqlite), so
 * the engine's figures on Bun (`npm run start:bun`) are read as a share of what Bun allows
 * on this machine. It is baseline-server.ts (node:http + better-sqlite3) on the other
 * runtime, and does exactly its work: the same pragmas (WAL, synchronous = FULL,
 * foreign_keys, busy_timeout), schema, seeded merchant and statements
 * (baseline-sqlite.ts); per request, the route matched, the key's SHA-256 compared with the
 * one held in memory (the engine caches verified keys), then for a create the same body
 * checks, the engine's id shape, one read of the merchant (the partner's, active) and one
 * insert committed on its own, or for a status one keyed read of the payment, its partner
 * and merchant checked; the same JSON answers (baseline-rules.ts). Bun closes a connection idle
 * for `idleTimeout` seconds: the same 40 s as the engine on Bun (its 30 s long-poll cap
 * and a margin, @pay/adapter-bun), though no request here is held.
 * Run as its own process under Bun (`bun bench/baseline-bun-server.ts`, TypeScript as is):
 * PORT, BASELINE_DATABASE, BASELINE_API_KEY, BASELINE_MERCHANT_ID.
 */
import { createRequire } from "node:module"
import {
  createdBody,
  env,
  errorBody,
  HEALTH_BODY,
  isRefusal,
  MAX_BODY_BYTES,
  readCreate,
  route,
  sha256,
  statusBody
} from "./baseline-rules.js"
import {
  BASELINE_PARTNER,
  baselineKeyHash,
  type MerchantRow,
  merchantRefusal,
  type PaymentRow,
  paymentVisible,
  SQL,
  setUpSqlite
} from "./baseline-sqlite.js"

/**
 * The part of Bun's API used here, declared in this module: Bun's own global types
 * (`@types/bun`) would retype `fetch` and friends for the whole repository.
 */
interface BunStatement {
  run(...params: ReadonlyArray<string | number>): unknown
  /** A row, or null when there is none. */
  get(...params: ReadonlyArray<string>): unknown
}
interface BunDatabase {
  exec(sql: string): void
  prepare(sql: string): BunStatement
  close(): void
}
interface BunServer {
  readonly port: number | undefined
  stop(closeActiveConnections?: boolean): Promise<void>
}
declare const Bun: {
  serve(options: {
    readonly hostname: string
    readonly port: number
    readonly idleTimeout: number
    readonly fetch: (request: Request) => Response | Promise<Response>
    readonly error: (error: Error) => Response
  }): BunServer
}

const { Database } = createRequire(import.meta.url)("bun:sqlite") as {
  Database: new (
    filename: string,
    options: { readonly create: boolean; readonly readwrite: boolean }
  ) => BunDatabase
}

const db = new Database(env("BASELINE_DATABASE"), { create: true, readwrite: true })
setUpSqlite(db)
const keyHash = baselineKeyHash()
const merchantById = db.prepare(SQL.merchantById)
const insertPayment = db.prepare(SQL.insertPayment)
const paymentById = db.prepare(SQL.paymentById)

const JSON_HEADERS = { "content-type": "application/json" }
// Bun sets content-length from the body.
const send = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: JSON_HEADERS })
const fail = (status: number, code: string, message: string) =>
  send(status, errorBody(code, message))

const decoder = new TextDecoder()
const readText = async (request: Request): Promise<string> => {
  const bytes = await request.arrayBuffer()
  if (bytes.byteLength > MAX_BODY_BYTES) throw new Error("too large")
  return decoder.decode(bytes)
}

let publicUrl = ""

const createPayment = async (request: Request, merchantId: string) => {
  const payment = await readCreate(request.headers.get("content-type") ?? undefined, () =>
    readText(request)
  )
  if (isRefusal(payment)) return fail(...payment)
  const refused = merchantRefusal(merchantById.get(merchantId) as MerchantRow | null)
  if (refused !== undefined) return fail(...refused)
  const { paymentId, referenceId, unit, value, expiresAt, createdAt } = payment
  insertPayment.run(
    paymentId,
    BASELINE_PARTNER,
    merchantId,
    referenceId,
    unit,
    value,
    expiresAt,
    createdAt
  )
  return send(201, createdBody(publicUrl, payment))
}

const paymentStatus = (merchantId: string, paymentId: string) => {
  const payment = paymentById.get(paymentId) as PaymentRow | null
  if (payment === null || !paymentVisible(payment, merchantId)) {
    return fail(404, "not_found", "no such payment")
  }
  return send(200, statusBody(payment))
}

const handle = (request: Request): Response | Promise<Response> => {
  // The path and query: request.url is absolute ("http://127.0.0.1:port/…").
  const url = request.url
  const target = route(request.method, url.slice(url.indexOf("/", url.indexOf("//") + 2)))
  if (target === undefined) return fail(404, "not_found", "no such route")
  if (target === "health") return send(200, HEALTH_BODY)
  const key = request.headers.get("api-key")
  if (key === null) return fail(401, "missing_api_key", "Api-Key is required")
  const merchantId = request.headers.get("merchant-id") ?? ""
  if (sha256(key) !== keyHash) return fail(401, "invalid_api_key", "unknown API key")
  if (target.create) return createPayment(request, merchantId)
  return paymentStatus(merchantId, decodeURIComponent(target.id))
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 40,
  fetch: handle,
  error: (error) => {
    console.error(error)
    return fail(500, "internal_error", "internal error")
  }
})
publicUrl = `http://127.0.0.1:${server.port}`
console.log(`listening on ${publicUrl}`)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  // In-flight requests finish, then the database closes, as the Node baseline's server.close.
  void server.stop().then(() => {
    db.close()
    process.exit(0)
  })
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
