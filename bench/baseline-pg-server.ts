/**
 * The bench's baseline on PostgreSQL: the least a server can do to answer the payment
 * routes on that database (bare node:http + a `pg` pool, the same checks and answers as
 * the SQLite baseline's), so the engine's PostgreSQL figures are read as a share of what
 * this machine and this server allow. The least is one round trip per request: the key is
 * checked in memory (its SHA-256, as the engine's verified-key cache), then the merchant's
 * owner and status and the insert in one prepared statement, or the keyed read of the
 * payment with its partner and merchant; only a refused create takes a second one, to tell
 * which refusal it is. Every insert commits on its own, at the server's durability settings.
 * Run as its own process: BASELINE_DATABASE (a postgres:// URL, on a schema of its own),
 * BASELINE_API_KEY, BASELINE_MERCHANT_ID, and BASELINE_POOL_SIZE (the engine's pool size).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import pg from "pg"
import {
  env,
  fail,
  header,
  isRefusal,
  readCreate,
  refuse,
  route,
  type StatusColumns,
  sendCreated,
  sendHealth,
  sendStatus,
  serveBaseline,
  sha256
} from "./baseline-http.js"

const pool = new pg.Pool({
  connectionString: env("BASELINE_DATABASE"),
  max: Number(env("BASELINE_POOL_SIZE")),
  application_name: "pay-bench-baseline"
})
// An idle connection's error (the server going away) must not end the process.
pool.on("error", (error) => console.error(error))

// Ids compare bytewise (COLLATE "C"), as the engine's do.
await pool.query(`
  CREATE TABLE IF NOT EXISTS merchants (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL,
    status text NOT NULL
  );
  CREATE TABLE IF NOT EXISTS payments (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL,
    merchant_id text COLLATE "C" NOT NULL REFERENCES merchants (id),
    reference_id text NOT NULL,
    amount_unit text NOT NULL,
    amount_value text NOT NULL,
    status text NOT NULL,
    expires_at bigint NOT NULL,
    created_at bigint NOT NULL,
    failure_code text,
    token_asset text,
    token_value text,
    tx_id text
  );
`)
const PARTNER = "ptnr_baseline"
await pool.query(
  "INSERT INTO merchants VALUES ($1, 'ptnr_baseline', 'active') ON CONFLICT DO NOTHING",
  [env("BASELINE_MERCHANT_ID")]
)
/** The key is checked in memory, as the engine's verified-key cache does: no read for it. */
const KEY_HASH = sha256(env("BASELINE_API_KEY"))

// Named, so each pooled connection parses and plans them once. The create inserts only for
// an active merchant of the partner ($2), in the same statement.
const INSERT_PAYMENT = {
  name: "insert_payment",
  text: `INSERT INTO payments (id, partner_id, merchant_id, reference_id, amount_unit,
    amount_value, status, expires_at, created_at)
    SELECT $3, $1, $2, $4, $5, $6, 'requires_action', $7::bigint, $8::bigint
    WHERE EXISTS (SELECT 1 FROM merchants m
      WHERE m.id = $2 AND m.partner_id = $1 AND m.status = 'active')`
}
const PAYMENT_STATUS = {
  name: "payment_status",
  // What the answer depends on for any payment (the engine's status columns).
  text: `SELECT status, expires_at, failure_code, token_asset, token_value, tx_id
    FROM payments WHERE id = $3 AND partner_id = $1 AND merchant_id = $2`
}
const MERCHANT = {
  name: "merchant",
  text: "SELECT status FROM merchants WHERE id = $2 AND partner_id = $1"
}

/** Answers why a request the one-statement path turned down is refused: merchant, else `orElse`. */
const refuseAccess = async (res: ServerResponse, merchantId: string, orElse: () => void) => {
  const { rows } = await pool.query<{ status: string }>({
    ...MERCHANT,
    values: [PARTNER, merchantId]
  })
  const merchant = rows[0]
  if (merchant === undefined) return fail(res, 404, "not_found", "no such merchant")
  if (merchant.status !== "active") return fail(res, 403, "forbidden", "merchant not active")
  orElse()
}

const createPayment = async (req: IncomingMessage, res: ServerResponse, merchantId: string) => {
  const payment = await readCreate(req)
  if (isRefusal(payment)) return refuse(res, payment)
  const { paymentId, referenceId, unit, value, expiresAt, createdAt } = payment
  const { rowCount } = await pool.query({
    ...INSERT_PAYMENT,
    values: [PARTNER, merchantId, paymentId, referenceId, unit, value, expiresAt, createdAt]
  })
  if (rowCount === 1) return sendCreated(res, payment)
  return refuseAccess(res, merchantId, () => {
    throw new Error("the insert was refused, yet the key and the merchant are right")
  })
}

const paymentStatus = async (res: ServerResponse, merchantId: string, paymentId: string) => {
  const { rows } = await pool.query<StatusColumns>({
    ...PAYMENT_STATUS,
    values: [PARTNER, merchantId, paymentId]
  })
  const payment = rows[0]
  if (payment !== undefined) return sendStatus(res, payment)
  return fail(res, 404, "not_found", "no such payment")
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const target = route(req.method, req.url ?? "/")
  if (target === undefined) return fail(res, 404, "not_found", "no such route")
  if (target === "health") return sendHealth(res)
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  if (sha256(key) !== KEY_HASH) return fail(res, 401, "invalid_api_key", "unknown API key")
  const merchantId = header(req, "merchant-id") ?? ""
  if (target.create) return createPayment(req, res, merchantId)
  return paymentStatus(res, merchantId, decodeURIComponent(target.id))
}

serveBaseline(handle, () => void pool.end())
