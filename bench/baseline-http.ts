/**
 * What the bench's baselines share, whichever database they write to: the routes, the key's
 * hash, the same body checks and the same answers as the engine's, the engine's id shape, and
 * the bare node:http server. Each baseline adds only its database's work.
 */
import { createHash, getRandomValues } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const MAX_BODY_BYTES = 256 * 1024
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

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

export const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { code, message })

export const header = (req: IncomingMessage, name: string): string | undefined => {
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

/** The create's body read and checked: the payment to insert, or why it is refused. */
export const readCreate = async (req: IncomingMessage): Promise<NewPayment | Refusal> => {
  if (!header(req, "content-type")?.startsWith("application/json")) {
    return [415, "unsupported_media_type", "the body must be JSON"]
  }
  let body: unknown
  try {
    body = await readJson(req)
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

export const refuse = (res: ServerResponse, [status, code, message]: Refusal) =>
  fail(res, status, code, message)

let publicUrl = ""

export const sendCreated = (res: ServerResponse, payment: NewPayment) =>
  send(res, 201, {
    paymentId: payment.paymentId,
    status: "requires_action",
    expiresAt: payment.expiresAt,
    isFinal: false,
    gatewayUrl: `${publicUrl}/gateway/${payment.paymentId}`,
    pollInMs: 1000
  })

export const sendStatus = (res: ServerResponse, status: string) =>
  send(res, 200, { status, isFinal: status !== "requires_action", pollInMs: 1000, info: null })

const STATUS_PATH = /^\/v1\/payments\/([^/?]+)\/status(?:\?.*)?$/

/** Which route a request is for: a create, a status read (its id still URL-encoded), or none. */
export const route = (
  req: IncomingMessage
): { readonly create: true } | { readonly create: false; readonly id: string } | undefined => {
  const url = req.url ?? "/"
  if (req.method === "POST" && url === "/v1/payments") return { create: true }
  const id = req.method === "GET" ? STATUS_PATH.exec(url)?.[1] : undefined
  return id === undefined ? undefined : { create: false, id }
}

/** Serves `handle` on 127.0.0.1:PORT until SIGTERM or SIGINT, then calls `close`. */
export const serveBaseline = (
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  close: () => void
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
  const stop = () => server.close(close)
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}
