/**
 * The bench's baseline on PostgreSQL: the least a server can do to answer the payment
 * routes on that database (bare node:http + a `pg` pool, the same checks and answers as
 * the SQLite baseline's), so the engine's PostgreSQL figures are read as a share of what
 * this machine and this server allow. The least is one round trip per request: the key,
 * the merchant's owner and the insert (or the keyed read) in one prepared statement; only
 * a refused request takes a second one, to tell which refusal it is. Every insert commits
 * on its own, as the engine's do, at the server's durability settings.
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
  CREATE TABLE IF NOT EXISTS api_keys (
    hash text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL
  );
  CREATE TABLE IF NOT EXISTS merchants (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL
  );
  CREATE TABLE IF NOT EXISTS payments (
    id text COLLATE "C" PRIMARY KEY,
    merchant_id text COLLATE "C" NOT NULL REFERENCES merchants (id),
    reference_id text NOT NULL,
    amount_unit text NOT NULL,
    amount_value text NOT NULL,
    status text NOT NULL,
    expires_at bigint NOT NULL,
    created_at bigint NOT NULL
  );
`)
await pool.query("INSERT INTO api_keys VALUES ($1, 'ptnr_baseline') ON CONFLICT DO NOTHING", [
  sha256(env("BASELINE_API_KEY"))
])
await pool.query("INSERT INTO merchants VALUES ($1, 'ptnr_baseline') ON CONFLICT DO NOTHING", [
  env("BASELINE_MERCHANT_ID")
])

/** The key ($1, its hash) is known and the merchant ($2) is its partner's. */
const AUTHORIZED = `EXISTS (SELECT 1 FROM api_keys k JOIN merchants m
  ON m.partner_id = k.partner_id WHERE k.hash = $1 AND m.id = $2)`

// Named, so each pooled connection parses and plans them once.
const INSERT_PAYMENT = {
  name: "insert_payment",
  text: `INSERT INTO payments (id, merchant_id, reference_id, amount_unit, amount_value, status,
    expires_at, created_at)
    SELECT $3, $2, $4, $5, $6, 'requires_action', $7::bigint, $8::bigint WHERE ${AUTHORIZED}`
}
const PAYMENT_STATUS = {
  name: "payment_status",
  text: `SELECT status FROM payments WHERE id = $3 AND merchant_id = $2 AND ${AUTHORIZED}`
}
const AUTHORIZE = {
  name: "authorize",
  text: `SELECT k.partner_id, m.id AS merchant_id FROM api_keys k
    LEFT JOIN merchants m ON m.id = $2 AND m.partner_id = k.partner_id WHERE k.hash = $1`
}

/** Answers why a request the one-statement path turned down is refused: key, merchant, else `orElse`. */
const refuseAccess = async (
  res: ServerResponse,
  keyHash: string,
  merchantId: string,
  orElse: () => void
) => {
  const { rows } = await pool.query<{ merchant_id: string | null }>({
    ...AUTHORIZE,
    values: [keyHash, merchantId]
  })
  const auth = rows[0]
  if (auth === undefined) return fail(res, 401, "invalid_api_key", "unknown API key")
  if (auth.merchant_id === null) return fail(res, 404, "not_found", "no such merchant")
  orElse()
}

const createPayment = async (
  req: IncomingMessage,
  res: ServerResponse,
  keyHash: string,
  merchantId: string
) => {
  // The body is read before the key is checked (the check is in the insert), so a refused
  // body waits for that check: a bad key or merchant is still answered first, as by the others.
  const payment = await readCreate(req)
  if (isRefusal(payment)) return refuseAccess(res, keyHash, merchantId, () => refuse(res, payment))
  const { paymentId, referenceId, unit, value, expiresAt, createdAt } = payment
  const { rowCount } = await pool.query({
    ...INSERT_PAYMENT,
    values: [keyHash, merchantId, paymentId, referenceId, unit, value, expiresAt, createdAt]
  })
  if (rowCount === 1) return sendCreated(res, payment)
  return refuseAccess(res, keyHash, merchantId, () => {
    throw new Error("the insert was refused, yet the key and the merchant are right")
  })
}

const paymentStatus = async (
  res: ServerResponse,
  keyHash: string,
  merchantId: string,
  paymentId: string
) => {
  const { rows } = await pool.query<{ status: string }>({
    ...PAYMENT_STATUS,
    values: [keyHash, merchantId, paymentId]
  })
  const payment = rows[0]
  if (payment !== undefined) return sendStatus(res, payment.status)
  return refuseAccess(res, keyHash, merchantId, () =>
    fail(res, 404, "not_found", "no such payment")
  )
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const target = route(req.method, req.url ?? "/")
  if (target === undefined) return fail(res, 404, "not_found", "no such route")
  if (target === "health") return sendHealth(res)
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  const merchantId = header(req, "merchant-id") ?? ""
  if (target.create) return createPayment(req, res, sha256(key), merchantId)
  return paymentStatus(res, sha256(key), merchantId, decodeURIComponent(target.id))
}

serveBaseline(handle, () => void pool.end())
