/**
 * The engine's `WebhookSender` on this package's address rules. The URL's
 * host is checked at every send, not only when the endpoint was registered
 * (its DNS may have changed since), and the connection goes to the addresses
 * that were checked, as SafeFetch connects: a pinned `lookup`, the URL's host
 * for TLS and the Host header, on Node and Bun alike.
 *
 * https:// always; plain http:// only with `allowPrivate` and to a host that
 * is loopback only (the rule endpoints are registered with). A redirect is an
 * answer like any other, not followed. One time limit for everything (DNS,
 * connect, request, response, body), and the DNS lookup within its own (5 s,
 * at most 2 at once in the process: LookupGate.ts); the response body is cut at
 * `maxResponseBytes`. A send never fails: whatever happened is in the result.
 */

import http, { type IncomingMessage } from "node:http"
import https from "node:https"
import { type WebhookRequest, type WebhookResponse, WebhookSender } from "@pay/core"
import { Effect, Layer } from "effect"
import type { LookupGate } from "./LookupGate.js"
import {
  bareHost,
  errorText,
  pinnedLookup,
  type ResolvedAddress,
  type ResolvedHost,
  resolvedLogFields,
  resolveTarget,
  type Target
} from "./SafeFetch.js"
import { isLoopback } from "./WebhookUrlGuardLayer.js"

export interface WebhookSenderOptions {
  /**
   * Lets private and loopback hosts through, and plain http:// to a loopback host (tests,
   * private deployments; PAY_FETCH_ALLOW_PRIVATE=1). Default false.
   */
  readonly allowPrivate?: boolean
  /** Default: the system resolver. */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>
  /** Trusted CAs instead of the default store (as node:tls's `ca`), e.g. a test CA. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  /** The gate lookups go through (at most 2 at once, 5 s each); default the process's. */
  readonly lookups?: LookupGate
}

type Outcome = Omit<WebhookResponse, "durationMs">

// Why a send's signal aborted: its time limit, or the fiber waiting for it was interrupted
// (then nobody reads the result, but the socket must still go).
const timedOut = Symbol("timed out")
const interrupted = Symbol("interrupted")

const noResponse = (error: string): Outcome => ({ status: null, body: "", retryAfter: null, error })

const plainHttpRule =
  "plain http:// is sent only to a loopback host, with private addresses allowed (PAY_FETCH_ALLOW_PRIVATE=1)"

export const makeWebhookSender = (options: WebhookSenderOptions = {}) => {
  const allowPrivate = options.allowPrivate === true
  const ca =
    options.ca === undefined ? undefined : ([] as Array<string | Buffer>).concat(options.ca)

  const stoppedText = (signal: AbortSignal, request: WebhookRequest, responded: boolean) =>
    signal.reason !== timedOut
      ? "the send was interrupted"
      : responded
        ? `the response body was cut by the time limit, ${request.timeoutMs} ms`
        : `no response within ${request.timeoutMs} ms, the time limit`

  /**
   * Where the send may connect: the checked addresses, or why nowhere. The reason is the
   * partner's to read (it lands in the delivery attempt), so it names no address a host
   * resolved to; `resolved` keeps them for the operator's log line.
   */
  const check = async (
    url: URL,
    signal: AbortSignal
  ): Promise<Target | { readonly reason: string; readonly resolved?: ResolvedHost }> => {
    if (url.protocol === "http:" && !allowPrivate)
      return { reason: `https is required: ${plainHttpRule}` }
    if (url.protocol !== "https:" && url.protocol !== "http:")
      return { reason: `https is required (not ${url.protocol})` }
    const target = await resolveTarget(url, {
      allowPrivate,
      resolve: options.resolve,
      signal,
      lookups: options.lookups
    })
    if ("ok" in target)
      return target.kind === "address_not_allowed" && target.resolved !== undefined
        ? { reason: target.message, resolved: target.resolved }
        : { reason: target.message }
    const notLoopback = target.addresses.find((a) => !isLoopback(a.address))
    if (url.protocol === "http:" && notLoopback !== undefined)
      return target.literal
        ? {
            reason: `https is required: ${notLoopback.address} is not a loopback address, and ${plainHttpRule}`
          }
        : {
            reason: `https is required: ${bareHost(url)} resolves to an address that is not loopback, and ${plainHttpRule}`,
            resolved: {
              host: bareHost(url),
              addresses: target.addresses.map((a) => a.address),
              refused: notLoopback.address
            }
          }
    return target
  }

  /** The POST to the checked addresses, and whatever came back within the limits. */
  const exchange = (url: URL, to: Target, request: WebhookRequest, signal: AbortSignal) =>
    new Promise<Outcome>((settle) => {
      // The time limit may have passed while the host was checked: no request then.
      if (signal.aborted) return settle(noResponse(stoppedText(signal, request, false)))
      const host = bareHost(url)
      const secure = url.protocol === "https:"
      const payload = Buffer.from(request.body, "utf8")
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers))
        headers[name.toLowerCase()] = value
      let status: number | null = null
      let retryAfter: string | null = null
      const chunks: Array<Buffer> = []
      let received = 0
      let settled = false

      const outgoing = (secure ? https : http).request({
        // As SafeFetch: a host name is answered by the checked addresses (no second DNS
        // lookup) and named to TLS; an IP literal is connected to as is, without SNI.
        host: to.literal ? to.addresses[0]!.address : host,
        ...(to.literal ? {} : { lookup: pinnedLookup(to.addresses) }),
        ...(secure && !to.literal ? { servername: host.replace(/\.$/, "") } : {}),
        ...(secure && ca !== undefined ? { ca } : {}),
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(payload.byteLength), host: url.host },
        agent: false
      })
      const finish = (error: string | null) => {
        if (settled) return
        settled = true
        signal.removeEventListener("abort", onAbort)
        outgoing.destroy()
        settle({ status, body: Buffer.concat(chunks).toString("utf8"), retryAfter, error })
      }
      const onAbort = () => finish(stoppedText(signal, request, status !== null))
      signal.addEventListener("abort", onAbort, { once: true })

      outgoing.on("response", (response: IncomingMessage) => {
        status = response.statusCode ?? null
        retryAfter = response.headers["retry-after"] ?? null
        response.on("data", (chunk: Buffer) => {
          const room = Math.max(0, request.maxResponseBytes - received)
          chunks.push(chunk.subarray(0, room))
          received += Math.min(chunk.length, room)
          // Enough read: the rest is left unread and the socket closed.
          if (received >= request.maxResponseBytes) finish(null)
        })
        response.on("end", () => finish(null))
        response.on("error", (error) => finish(`the response body was cut: ${errorText(error)}`))
      })
      outgoing.on("error", (error) =>
        finish(
          status === null
            ? `no response from ${url.host}: ${errorText(error)}`
            : `the response body was cut: ${errorText(error)}`
        )
      )
      // Some closes come with no error event (Bun's node:http, a reset after the status line).
      outgoing.on("close", () =>
        finish(
          status === null
            ? `${url.host} closed the connection without a response`
            : "the response body was cut: the connection closed before it ended"
        )
      )
      outgoing.end(payload)
    })

  /** The send's outcome; `resolved` when a host name's answers refused it, for the log. */
  const attempt = async (
    request: WebhookRequest,
    signal: AbortSignal
  ): Promise<Outcome & { readonly resolved?: ResolvedHost }> => {
    if (!URL.canParse(request.url))
      return noResponse("the URL is not valid: an absolute https URL is expected")
    const url = new URL(request.url)
    const to = await check(url, signal)
    return "reason" in to
      ? {
          ...noResponse(to.reason),
          ...(to.resolved === undefined ? {} : { resolved: to.resolved })
        }
      : exchange(url, to, request, signal)
  }

  const send = async (
    request: WebhookRequest,
    fiber: AbortSignal
  ): Promise<WebhookResponse & { readonly resolved?: ResolvedHost }> => {
    const started = performance.now()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(timedOut), request.timeoutMs)
    const interrupt = () => controller.abort(interrupted)
    fiber.addEventListener("abort", interrupt, { once: true })
    try {
      const outcome = await attempt(request, controller.signal).catch((error: unknown) =>
        noResponse(
          controller.signal.aborted
            ? stoppedText(controller.signal, request, false)
            : `could not send to ${request.url}: ${errorText(error)}`
        )
      )
      return { ...outcome, durationMs: Math.round(performance.now() - started) }
    } finally {
      clearTimeout(timer)
      fiber.removeEventListener("abort", interrupt)
    }
  }

  return WebhookSender.of({
    send: (request) =>
      Effect.gen(function* () {
        const { resolved, ...response } = yield* Effect.promise((fiber) => send(request, fiber))
        if (resolved !== undefined)
          yield* Effect.logWarning("webhook send refused", {
            reason: response.error,
            ...resolvedLogFields(resolved)
          })
        return response
      })
  })
}

/** `WebhookSender` for an engine: `PAY_FETCH_ALLOW_PRIVATE=1` maps to `allowPrivate`. */
export const webhookSenderLayer = (options: WebhookSenderOptions = {}) =>
  Layer.succeed(WebhookSender, makeWebhookSender(options))
