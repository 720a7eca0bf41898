/**
 * Webhooks in a test: the engine's delivery work runs as it does on a server
 * (claims, signatures, retries, the endpoint disabled after days of failures),
 * and its one HTTP request goes to the test instead of the network: answered
 * 200 and kept (`deliveries()`), or handed as a `Request` to the test's
 * handler, whose `Response` is what the engine sees. The request carries the
 * endpoint's signature, so the platform's own verification runs on it.
 */
import { type WebhookRequest, type WebhookResponse, WebhookSender } from "@pay/core"
import { Effect, Layer } from "effect"
import type { ControlledClock } from "./ControlledClock.js"

/** A test's webhook receiver: the platform's route handler, or a stand-in. */
export type WebhookHandler = (request: Request) => Response | Promise<Response>

/** One request the engine made to a webhook endpoint, and how it was answered. */
export interface CapturedDelivery {
  /** The endpoint's URL. */
  readonly url: string
  /** The request's headers, lower-case names (`webhook-signature`, …). */
  readonly headers: Readonly<Record<string, string>>
  /** The body as sent: verify the signature over this exact text. */
  readonly body: string
  /** The event, parsed from the body. */
  // biome-ignore lint/suspicious/noExplicitAny: the event's JSON, as documented in docs/webhooks.md
  readonly event: any
  /** The event's type (`payment.succeeded`, …). */
  readonly type: string
  /** The status the receiver answered; null when the handler threw. */
  readonly status: number | null
  /** When it was sent, on the test's clock. */
  readonly at: Date
}

export class CapturedWebhooks {
  private readonly captured: Array<CapturedDelivery> = []
  readonly layer: Layer.Layer<WebhookSender>

  constructor(
    private readonly clock: ControlledClock,
    private readonly handler: WebhookHandler | undefined
  ) {
    this.layer = Layer.succeed(
      WebhookSender,
      WebhookSender.of({
        send: (request) => Effect.promise(() => clock.outsideWork(() => this.receive(request)))
      })
    )
  }

  /** Every delivery so far, oldest first. */
  all(): ReadonlyArray<CapturedDelivery> {
    return [...this.captured]
  }

  /** Forgets the deliveries captured so far. */
  clear(): void {
    this.captured.length = 0
  }

  private async receive(request: WebhookRequest): Promise<WebhookResponse> {
    const at = new Date(this.clock.now())
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value])
    )
    let event: unknown
    try {
      event = JSON.parse(request.body)
    } catch {
      event = undefined
    }
    const keep = (status: number | null) =>
      this.captured.push({
        url: request.url,
        headers,
        body: request.body,
        event,
        type: (event as { type?: string } | undefined)?.type ?? "",
        status,
        at
      })
    if (this.handler === undefined) {
      keep(200)
      return { status: 200, body: "", retryAfter: null, error: null, durationMs: 0 }
    }
    try {
      const response = await this.handler(
        new Request(request.url, { method: "POST", headers: request.headers, body: request.body })
      )
      const text = (await response.text()).slice(0, request.maxResponseBytes)
      keep(response.status)
      return {
        status: response.status,
        body: text,
        retryAfter: response.headers.get("retry-after"),
        error: null,
        durationMs: 0
      }
    } catch (error) {
      keep(null)
      return {
        status: null,
        body: "",
        retryAfter: null,
        error: `the test's webhook handler threw: ${error instanceof Error ? error.message : String(error)}`,
        durationMs: 0
      }
    }
  }
}
