/**
 * The bench's baseline: the least a server can do to answer the payment routes the
 * engine serves (bare node:http + better-sqlite3, same pragmas, same checks, same
 * answers), so the engine's figures are read as a share of what this machine allows.
 * Per request, exactly the engine's minimum: the key's SHA-256 compared with the one held
 * in memory (the engine caches verified keys); status: one keyed read of the payment, its
 * partner and merchant checked; create: the body checked as the engine checks it, one read
 * of the merchant (the partner's, active), one insert: one transaction, one fsync, no
 * batching.
 * Its twin on Bun is baseline-bun-server.ts (the same database work, baseline-sqlite.ts).
 * Run as its own process: BASELINE_DATABASE, BASELINE_API_KEY, BASELINE_MERCHANT_ID.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import Database from "better-sqlite3"
import {
  env,
  fail,
  header,
  isRefusal,
  readCreate,
  refuse,
  route,
  sendCreated,
  sendHealth,
  sendStatus,
  serveBaseline,
  sha256
} from "./baseline-http.js"
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

const db = new Database(env("BASELINE_DATABASE"))
setUpSqlite(db)
const keyHash = baselineKeyHash()
const merchantById = db.prepare<[string], MerchantRow>(SQL.merchantById)
const insertPayment = db.prepare(SQL.insertPayment)
const paymentById = db.prepare<[string], PaymentRow>(SQL.paymentById)

const createPayment = async (req: IncomingMessage, res: ServerResponse, merchantId: string) => {
  const payment = await readCreate(req)
  if (isRefusal(payment)) return refuse(res, payment)
  const refused = merchantRefusal(merchantById.get(merchantId))
  if (refused !== undefined) return fail(res, ...refused)
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
  sendCreated(res, payment)
}

const paymentStatus = (res: ServerResponse, merchantId: string, paymentId: string) => {
  const payment = paymentById.get(paymentId)
  if (payment === undefined || !paymentVisible(payment, merchantId)) {
    return fail(res, 404, "not_found", "no such payment")
  }
  sendStatus(res, payment)
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const target = route(req.method, req.url ?? "/")
  if (target === undefined) return fail(res, 404, "not_found", "no such route")
  if (target === "health") return sendHealth(res)
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  const merchantId = header(req, "merchant-id") ?? ""
  if (sha256(key) !== keyHash) return fail(res, 401, "invalid_api_key", "unknown API key")
  if (target.create) return createPayment(req, res, merchantId)
  return paymentStatus(res, merchantId, decodeURIComponent(target.id))
}

serveBaseline(handle, () => db.close())
