/**
 * Webhook signatures as the Standard Webhooks specification
 * (https://www.standardwebhooks.com) defines them, so a receiver verifies a
 * delivery with the off-the-shelf `standardwebhooks` package in any language,
 * or with `verifyWebhook` here:
 *
 * - headers `webhook-id` (the event's id, the same on every attempt),
 *   `webhook-timestamp` (Unix seconds) and `webhook-signature`;
 * - the signature `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed
 *   with the bytes of a `whsec_<base64>` secret; several space-separated when
 *   an endpoint's secret is being rotated, any one of which verifies.
 *
 * WebCrypto only (Node, Bun, browsers, edge runtimes).
 */
import { Data, Either, Encoding } from "effect"

export const WEBHOOK_SECRET_PREFIX = "whsec_"
/** How far a delivery's timestamp may be from the receiver's clock: 5 minutes, as the specification's libraries. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** Base64 to bytes a WebCrypto call takes (an ArrayBuffer-backed copy), or undefined. */
const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | undefined =>
  Either.match(Encoding.decodeBase64(text), {
    onLeft: () => undefined,
    onRight: (bytes) => Uint8Array.from(bytes)
  })

/** A new endpoint secret: `whsec_` and 32 random bytes in base64. */
export const generateWebhookSecret = (): string =>
  WEBHOOK_SECRET_PREFIX + Encoding.encodeBase64(crypto.getRandomValues(new Uint8Array(32)))

const keyOf = (secret: string): Promise<CryptoKey> => {
  const raw = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret
  const bytes = fromBase64(raw)
  return bytes === undefined
    ? Promise.reject(new Error("a webhook secret is whsec_ and base64"))
    : crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify"
      ])
}

const signedContent = (id: string, timestamp: number, body: string) =>
  new TextEncoder().encode(`${id}.${timestamp}.${body}`)

/** The `webhook-signature` value for this delivery: one `v1,…` per secret, space-separated. */
export const signWebhook = async (
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: number,
  body: string
): Promise<string> => {
  const content = signedContent(id, timestamp, body)
  const signatures = await Promise.all(
    secrets.map(async (secret) => {
      const mac = await crypto.subtle.sign("HMAC", await keyOf(secret), content)
      return `v1,${Encoding.encodeBase64(new Uint8Array(mac))}`
    })
  )
  return signatures.join(" ")
}

/** The three headers of a delivery. */
export const webhookHeaders = async (
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: number,
  body: string
): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": await signWebhook(secrets, id, timestamp, body)
})

export class WebhookVerificationError extends Data.TaggedError("WebhookVerificationError")<{
  readonly message: string
}> {}

type HeaderSource = Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const header = (headers: HeaderSource, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined
  }
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const found = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = found === undefined ? undefined : record[found]
  return Array.isArray(value) ? value[0] : (value as string | undefined)
}

/**
 * Checks a delivery as a receiver: the raw body exactly as received, its
 * headers (a `Headers` or Node's `req.headers`), the endpoint's secret.
 * Resolves with the parsed event; rejects with `WebhookVerificationError` when
 * a header is missing, the timestamp is outside the tolerance (a replay), or
 * no signature matches.
 */
export const verifyWebhook = async (
  body: string,
  headers: HeaderSource,
  secret: string,
  options: { readonly toleranceSeconds?: number; readonly now?: Date } = {}
): Promise<unknown> => {
  const id = header(headers, "webhook-id")
  const timestamp = header(headers, "webhook-timestamp")
  const signature = header(headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signature === undefined) {
    throw new WebhookVerificationError({
      message: "missing webhook-id, webhook-timestamp or webhook-signature"
    })
  }
  const seconds = Number(timestamp)
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError({
      message: `webhook-timestamp ${timestamp} is more than ${tolerance} s from now`
    })
  }
  const key = await keyOf(secret)
  const content = signedContent(id, seconds, body)
  for (const part of signature.split(" ")) {
    const [version, value] = part.split(",", 2)
    if (version !== "v1" || value === undefined) continue
    const mac = fromBase64(value)
    if (mac === undefined) continue
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, mac, content)) return JSON.parse(body)
  }
  throw new WebhookVerificationError({ message: "no signature matches the secret" })
}
