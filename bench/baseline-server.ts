/**
 * The bench's baseline: the least a server can do to answer the payment routes the
 * engine serves (bare node:http + better-sqlite3, same pragmas, same checks, same
 * answers), so the engine's figures are read as a share of what this machine allows.
 * Run as its own process: BASELINE_DATABASE, BASELINE_API_KEY, BASELINE_MERCHANT_ID.
 */
import { createHash, getRandomValues } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import Database from "better-sqlite3"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const MAX_BODY_BYTES = 256 * 1024
const MAX_MINOR_UNITS = 10n ** 15n
const CURRENCIES = new Set(["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "KWD"])
const BODY_FIELDS = new Set(["referenceId", "amount", "expiresAt"])
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

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

// The engine's id shape: 8 characters of time, then 12 from the CSPRNG.
const newPaymentId = (now: number): string => {
  let time = ""
  for (let rest = now, i = 0; i < 8; i++, rest = Math.floor(rest / 62)) {
    time = ALPHABET[rest % 62] + time
  }
  let random = ""
  const bytes = getRandomValues(new Uint8Array(24))
  for (const byte of bytes) {
    if (byte < 248 && random.length < 12) random += ALPHABET[byte % 62]
  }
  return `pay_${time}${random.padEnd(12, "0")}`
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { code, message })

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return typeof value === "string" ? value : undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const validateCreate = (body: unknown, nowSeconds: number): string | undefined => {
  if (!isRecord(body)) return "body must be an object"
  for (const field of Object.keys(body)) {
    if (!BODY_FIELDS.has(field)) return `unknown field ${field}`
  }
  const { referenceId, amount, expiresAt } = body
  if (typeof referenceId !== "string" || referenceId.length === 0 || referenceId.length > 255) {
    return "referenceId must be a string of 1 to 255 characters"
  }
  if (!isRecord(amount)) return "amount must be an object"
  const { unit, value } = amount
  if (typeof unit !== "string" || !unit.startsWith("iso4217/") || !CURRENCIES.has(unit.slice(8))) {
    return "amount.unit must be iso4217/<known currency code>"
  }
  if (typeof value !== "string" || !/^[1-9][0-9]{0,15}$/.test(value)) {
    return "amount.value must be a positive whole number without leading zeros"
  }
  if (BigInt(value) > MAX_MINOR_UNITS) return `amount.value must be at most ${MAX_MINOR_UNITS}`
  if (
    expiresAt !== undefined &&
    (!Number.isSafeInteger(expiresAt) || Number(expiresAt) <= nowSeconds)
  ) {
    return "expiresAt must be an integer time in the future"
  }
  return undefined
}

const readJson = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) reject(new Error("too large"))
      else chunks.push(chunk)
    })
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (error) {
        reject(error)
      }
    })
    req.on("error", reject)
  })

const createPayment = async (req: IncomingMessage, res: ServerResponse, merchantId: string) => {
  if (!header(req, "content-type")?.startsWith("application/json")) {
    return fail(res, 415, "unsupported_media_type", "the body must be JSON")
  }
  let body: unknown
  try {
    body = await readJson(req)
  } catch {
    return fail(res, 400, "invalid_params", "the body is not JSON")
  }
  const now = Date.now()
  const nowSeconds = Math.floor(now / 1000)
  const problem = validateCreate(body, nowSeconds)
  if (problem !== undefined || !isRecord(body) || !isRecord(body.amount)) {
    return fail(res, 400, "params_validation", problem ?? "invalid body")
  }
  const expiresAt = typeof body.expiresAt === "number" ? body.expiresAt : nowSeconds + 300
  const paymentId = newPaymentId(now)
  const { referenceId, amount } = body as { referenceId: string; amount: Record<string, string> }
  insertPayment.run(paymentId, merchantId, referenceId, amount.unit, amount.value, expiresAt, now)
  send(res, 201, {
    paymentId,
    status: "requires_action",
    expiresAt,
    isFinal: false,
    gatewayUrl: `${publicUrl}/gateway/${paymentId}`,
    pollInMs: 1000
  })
}

const paymentStatus = (res: ServerResponse, merchantId: string, paymentId: string) => {
  const payment = paymentById.get(paymentId)
  if (payment === undefined || payment.merchant_id !== merchantId) {
    return fail(res, 404, "not_found", "no such payment")
  }
  const isFinal = payment.status !== "requires_action"
  send(res, 200, { status: payment.status, isFinal, pollInMs: 1000, info: null })
}

const STATUS_PATH = /^\/v1\/payments\/([^/?]+)\/status(?:\?.*)?$/

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const url = req.url ?? "/"
  const isCreate = req.method === "POST" && url === "/v1/payments"
  const statusMatch = req.method === "GET" ? STATUS_PATH.exec(url) : null
  if (!isCreate && statusMatch === null) return fail(res, 404, "not_found", "no such route")
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  const merchantId = header(req, "merchant-id") ?? ""
  const auth = authorize.get(merchantId, sha256(key))
  if (auth === undefined) return fail(res, 401, "invalid_api_key", "unknown API key")
  if (auth.merchant_id === null) return fail(res, 404, "not_found", "no such merchant")
  if (isCreate) return createPayment(req, res, merchantId)
  return paymentStatus(res, merchantId, decodeURIComponent(statusMatch?.[1] ?? ""))
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    console.error(error)
    if (!res.headersSent) fail(res, 500, "internal_error", "internal error")
  })
})

let publicUrl = ""
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  publicUrl = `http://127.0.0.1:${address.port}`
  console.log(`listening on ${publicUrl}`)
})

const stop = () => server.close(() => db.close())
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
