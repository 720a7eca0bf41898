/**
 * The bench's baseline: the least a server can do to answer the payment routes the
 * engine serves (bare node:http + better-sqlite3, same pragmas, same checks, same
 * answers), so the engine's figures are read as a share of what this machine allows.
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
  sendStatus,
  serveBaseline,
  sha256
} from "./baseline-http.js"

const db = new Database(env("BASELINE_DATABASE"))
for (const pragma of [
  "journal_mode = WAL",
  "synchronous = FULL",
  "foreign_keys = ON",
  "busy_timeout = 5000"
]) {
  db.pragma(pragma)
}
db.exec(`
  CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS merchants (id TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    reference_id TEXT NOT NULL,
    amount_unit TEXT NOT NULL,
    amount_value TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
`)
db.prepare("INSERT OR IGNORE INTO api_keys VALUES (?, 'ptnr_baseline')").run(
  sha256(env("BASELINE_API_KEY"))
)
db.prepare("INSERT OR IGNORE INTO merchants VALUES (?, 'ptnr_baseline')").run(
  env("BASELINE_MERCHANT_ID")
)

// One query per request authenticates the key and, in the same read, checks that the
// Merchant-Id belongs to its partner (the engine must refuse another partner's merchant too).
const authorize = db.prepare<[string, string], { partner_id: string; merchant_id: string | null }>(
  `SELECT k.partner_id, m.id AS merchant_id FROM api_keys k
   LEFT JOIN merchants m ON m.id = ? AND m.partner_id = k.partner_id WHERE k.hash = ?`
)
const insertPayment = db.prepare(
  `INSERT INTO payments (id, merchant_id, reference_id, amount_unit, amount_value, status,
   expires_at, created_at) VALUES (?, ?, ?, ?, ?, 'requires_action', ?, ?)`
)
const paymentById = db.prepare<[string], { merchant_id: string; status: string }>(
  "SELECT merchant_id, status FROM payments WHERE id = ?"
)

const createPayment = async (req: IncomingMessage, res: ServerResponse, merchantId: string) => {
  const payment = await readCreate(req)
  if (isRefusal(payment)) return refuse(res, payment)
  const { paymentId, referenceId, unit, value, expiresAt, createdAt } = payment
  insertPayment.run(paymentId, merchantId, referenceId, unit, value, expiresAt, createdAt)
  sendCreated(res, payment)
}

const paymentStatus = (res: ServerResponse, merchantId: string, paymentId: string) => {
  const payment = paymentById.get(paymentId)
  if (payment === undefined || payment.merchant_id !== merchantId) {
    return fail(res, 404, "not_found", "no such payment")
  }
  sendStatus(res, payment.status)
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const target = route(req)
  if (target === undefined) return fail(res, 404, "not_found", "no such route")
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  const merchantId = header(req, "merchant-id") ?? ""
  const auth = authorize.get(merchantId, sha256(key))
  if (auth === undefined) return fail(res, 401, "invalid_api_key", "unknown API key")
  if (auth.merchant_id === null) return fail(res, 404, "not_found", "no such merchant")
  if (target.create) return createPayment(req, res, merchantId)
  return paymentStatus(res, merchantId, decodeURIComponent(target.id))
}

serveBaseline(handle, () => db.close())
