/**
 * The port that makes a delivery's HTTP request. `@pay/logos` provides the
 * one a server runs (`webhookSenderLayer`: the checked address is the one
 * connected to, at every send, so DNS changed after registration reaches no
 * private address); without it, the engine sends with the runtime's `fetch`,
 * which checks no address. Either way: one POST, redirects not followed, a
 * time limit for everything, the response body read up to a limit and cut
 * there. A sender never fails: whatever happened is in the result.
 */
import { Context, Effect, Layer } from "effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** For the whole exchange: connecting, sending, the response and its body. */
  readonly timeoutMs: number
  /** The response body is read up to this many bytes and cut there. */
  readonly maxResponseBytes: number
}

export interface WebhookResponse {
  /** The HTTP status; null when no response came (refused, unreachable, timed out). */
  readonly status: number | null
  /** The response body as text, cut at `maxResponseBytes`; "" without one. */
  readonly body: string
  /** The `Retry-After` header as the receiver sent it, if it did. */
  readonly retryAfter: string | null
  /** Why no response came, in words; null when one did. */
  readonly error: string | null
  readonly durationMs: number
}

export class WebhookSender extends Context.Tag("@pay/core/WebhookSender")<
  WebhookSender,
  { readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse> }
>() {}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

const describe = (error: unknown): string => {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause
    const inner = cause instanceof Error ? `: ${oneLine(cause.message)}` : ""
    return `${oneLine(error.message)}${inner}`
  }
  return oneLine(String(error))
}

/** The body read up to `max` bytes, the rest left unread; decoded as UTF-8. */
const readCapped = async (response: Response, max: number): Promise<string> => {
  const reader = response.body?.getReader()
  if (reader === undefined) return ""
  const chunks: Array<Uint8Array> = []
  let size = 0
  while (size < max) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value.subarray(0, max - size))
    size += Math.min(value.byteLength, max - size)
  }
  await reader.cancel().catch(() => undefined)
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return new TextDecoder().decode(bytes)
}

/** Sends with the runtime's `fetch`: the engine's default, which checks no address. */
export const sendWithFetch = (request: WebhookRequest): Effect.Effect<WebhookResponse> =>
  Effect.promise(async () => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const signal = AbortSignal.timeout(request.timeoutMs)
    try {
      const response = await fetch(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal
      })
      const body = await readCapped(response, request.maxResponseBytes)
      return {
        status: response.status,
        body,
        retryAfter: response.headers.get("retry-after"),
        error: null,
        durationMs: elapsed()
      }
    } catch (error) {
      return {
        status: null,
        body: "",
        retryAfter: null,
        error: signal.aborted
          ? `no response within ${request.timeoutMs} ms, the time limit`
          : describe(error),
        durationMs: elapsed()
      }
    }
  })

/** The engine's default sender: `fetch`, no address check (install `@pay/logos` for one). */
export const fetchWebhookSender = Layer.succeed(
  WebhookSender,
  WebhookSender.of({ send: sendWithFetch })
)
