/**
 * What every bench baseline shares, whatever its runtime (Node or Bun) and its database:
 * the routes, the key's hash, the create's body checks, the engine's id shape and the same
 * JSON answers as the engine's. Nothing here touches a socket or a runtime's HTTP types:
 * baseline-http.ts serves these on node:http, baseline-bun-server.ts on Bun.serve.
 */
import { createHash, getRandomValues } from "node:crypto"

export const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

export const MAX_BODY_BYTES = 256 * 1024
const MAX_MINOR_UNITS = 10n ** 15n
const CURRENCIES = new Set(["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "KWD"])
const BODY_FIELDS = new Set(["referenceId", "amount", "expiresAt"])
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

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

/** A payment to insert, its body checked. */
export interface NewPayment {
  readonly paymentId: string
  readonly referenceId: string
  readonly unit: string
  readonly value: string
  /** Seconds since the epoch. */
  readonly expiresAt: number
  /** Milliseconds since the epoch. */
  readonly createdAt: number
}

/** The refusal of a create's body, with its status, code and message. */
export type Refusal = readonly [status: number, code: string, message: string]

/**
 * The create's body read and checked: the payment to insert, or why it is refused.
 * `readBody` gives the body's text, and fails if it is larger than MAX_BODY_BYTES or
 * cannot be read.
 */
export const readCreate = async (
  contentType: string | undefined,
  readBody: () => Promise<string>
): Promise<NewPayment | Refusal> => {
  if (!contentType?.startsWith("application/json")) {
    return [415, "unsupported_media_type", "the body must be JSON"]
  }
  let body: unknown
  try {
    body = JSON.parse(await readBody())
  } catch {
    return [400, "invalid_params", "the body is not JSON"]
  }
  const now = Date.now()
  const nowSeconds = Math.floor(now / 1000)
  const problem = validateCreate(body, nowSeconds)
  if (problem !== undefined || !isRecord(body) || !isRecord(body.amount)) {
    return [400, "params_validation", problem ?? "invalid body"]
  }
  const { referenceId, amount } = body as { referenceId: string; amount: Record<string, string> }
  return {
    paymentId: newPaymentId(now),
    referenceId,
    unit: amount.unit!,
    value: amount.value!,
    expiresAt: typeof body.expiresAt === "number" ? body.expiresAt : nowSeconds + 300,
    createdAt: now
  }
}

export const isRefusal = (read: NewPayment | Refusal): read is Refusal => Array.isArray(read)

/** The error answer's body. */
export const errorBody = (code: string, message: string) => ({ code, message })

/** The create's answer (201), as the engine's. */
export const createdBody = (publicUrl: string, payment: NewPayment) => ({
  paymentId: payment.paymentId,
  status: "requires_action",
  expiresAt: payment.expiresAt,
  isFinal: false,
  gatewayUrl: `${publicUrl}/gateway/${payment.paymentId}`,
  pollInMs: 1000
})

/** The status read's answer (200), as the engine's. */
/**
 * What a status answer depends on: the columns the engine's status read returns (its id
 * aside), so the baseline answers any payment as the engine does, not only the bench's.
 */
export interface StatusColumns {
  readonly status: string
  /** Unix seconds (PostgreSQL's bigint comes back as text). */
  readonly expires_at: number | string
  readonly failure_code: string | null
  readonly token_asset: string | null
  readonly token_value: string | null
  readonly tx_id: string | null
}

/** The status answer: a payment unpaid past its expiry is expired, as the engine answers. */
export const statusBody = (p: StatusColumns, nowSeconds = Date.now() / 1000) => {
  const status =
    p.status === "requires_action" && Number(p.expires_at) <= nowSeconds ? "expired" : p.status
  const final = status !== "requires_action" && status !== "processing"
  return {
    status,
    isFinal: final,
    ...(final ? {} : { pollInMs: 1000 }),
    ...(status === "failed" && p.failure_code !== null ? { failureCode: p.failure_code } : {}),
    info:
      status === "succeeded" ? { asset: p.token_asset, value: p.token_value, txId: p.tx_id } : null
  }
}

/** `GET /health`'s answer (200), as the engine's: what the cold start (cold-start.ts) polls. */
export const HEALTH_BODY = { status: "ok" }

const STATUS_PATH = /^\/v1\/payments\/([^/?]+)\/status(?:\?.*)?$/

/**
 * Which route a request is for, from its method and its path with the query: a create, a
 * status read (its id still URL-encoded), the health check, or none.
 */
export const route = (
  method: string | undefined,
  url: string
):
  | { readonly create: true }
  | { readonly create: false; readonly id: string }
  | "health"
  | undefined => {
  if (method === "POST" && url === "/v1/payments") return { create: true }
  if (method !== "GET") return undefined
  const id = STATUS_PATH.exec(url)?.[1]
  if (id !== undefined) return { create: false, id }
  return url === "/health" ? "health" : undefined
}
