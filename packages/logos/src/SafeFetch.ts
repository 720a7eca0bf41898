/**
 * A fetcher for URLs that partners type in (merchant logos, later webhook
 * endpoints) that reaches only the public internet: the server-side request
 * forgery hole (OWASP API7) closed.
 *
 * - HTTPS only, on every hop; the TLS certificate is checked against the
 *   URL's host name with the default trust store (NODE_EXTRA_CA_CERTS
 *   honoured) or the `ca` given.
 * - The host is resolved once per hop and every answer classified
 *   (AddressPolicy): one refused answer refuses the host. The connection goes
 *   to the addresses that were checked: node:https gets a `lookup` that
 *   answers them, so no second lookup (which a rebinding DNS server could
 *   answer differently) ever happens, while `servername` and the Host header
 *   stay the URL's host. IP-literal URLs are classified directly, with no DNS.
 * - Every lookup goes through the process's `LookupGate` (LookupGate.ts): at
 *   most 2 at once, each answered within 5 s, so DNS that never answers
 *   cannot hold the libuv threads WebCrypto needs.
 * - At most `maxRedirects` redirects (each hop checked the same way), one time
 *   limit for everything (waiting for a slot, DNS, connect, redirects, body),
 *   the body read as a stream and cut at `maxBytes` whatever Content-Length
 *   says, at most `maxConcurrent` fetches at once.
 * - It never throws for what the URL or the network does: every failure is a
 *   result with `ok: false`; nothing is retried.
 *
 * Runtimes: Node, and Bun, whose node:https honours `lookup` (called with
 * `all: true`, like Node's) and `servername` (checked by the tests, which run
 * on both), so one code path serves both.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import type { IncomingMessage } from "node:http"
import https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { classifyAddress, describeRange } from "./AddressPolicy.js"
import { type LookupGate, processLookupGate, type ResolvedAddress } from "./LookupGate.js"

export type SafeFetchRefusal =
  /** Not an absolute https URL (also after a redirect: "redirected to http:"). */
  | { readonly kind: "invalid_url"; readonly message: string }
  /**
   * The host is (or resolves to) an address that is not public. The message names the host
   * and the range, never the addresses a name resolved to: a partner reads it, and the
   * addresses would map the operator's internal DNS for them. Those go in `resolved`, for
   * the operator's log line.
   */
  | {
      readonly kind: "address_not_allowed"
      readonly message: string
      readonly resolved?: ResolvedHost
    }
  /** DNS, TLS, connect, HTTP status, time limit, too many redirects. */
  | { readonly kind: "unreachable"; readonly message: string }
  | { readonly kind: "too_large"; readonly message: string }

export type SafeFetchResult =
  | {
      readonly ok: true
      readonly body: Uint8Array
      /** The final URL, after redirects. */
      readonly url: string
      readonly contentType: string | undefined
    }
  | ({ readonly ok: false } & SafeFetchRefusal)

export type { ResolvedAddress }

/** A refused host name's DNS answers: for the operator's log only, never a partner's message. */
export type ResolvedHost = {
  readonly host: string
  /** Every answer, in the resolver's order. */
  readonly addresses: ReadonlyArray<string>
  /** The first answer refused. */
  readonly refused: string
}

export interface SafeFetchOptions {
  /**
   * Lets loopback, private, carrier-grade NAT and unique-local addresses through (tests,
   * private deployments; the engine maps PAY_FETCH_ALLOW_PRIVATE=1 to it). Default false.
   */
  readonly allowPrivate?: boolean
  /** Default: node:dns/promises `lookup(hostname, { all: true, verbatim: true })`. */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>
  /** The gate lookups go through; default the process's (LookupGate.ts). A test's own. */
  readonly lookups?: LookupGate
  /** One limit for the whole fetch: waiting for a slot, every hop, the body. Default 10 s. */
  readonly timeoutMs?: number
  /** Default 2 MB (2 * 1024 * 1024 bytes). */
  readonly maxBytes?: number
  /** Default 3. */
  readonly maxRedirects?: number
  /** Fetches in flight at once; further calls wait for a slot. Default 8. */
  readonly maxConcurrent?: number
  /** Trusted CAs instead of the default store (as node:tls's `ca`), e.g. a test CA. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  /** Extra request headers; default user-agent "pay-engine (+logo fetch)". */
  readonly headers?: Readonly<Record<string, string>>
}

export type SafeFetch = (
  url: string,
  init?: { readonly signal?: AbortSignal }
) => Promise<SafeFetchResult>

const defaultTimeoutMs = 10_000
const defaultMaxBytes = 2 * 1024 * 1024
const defaultMaxRedirects = 3
const defaultMaxConcurrent = 8
const defaultUserAgent = "pay-engine (+logo fetch)"
const redirectStatuses = new Set([301, 302, 303, 307, 308])
// Why a fetch's signal aborted.
const timedOut = Symbol("timed out")
const cancelled = Symbol("cancelled")

const systemResolve = async (hostname: string): Promise<ReadonlyArray<ResolvedAddress>> => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

const refuse = (
  kind: SafeFetchRefusal["kind"],
  message: string
): Extract<SafeFetchResult, { ok: false }> => ({
  ok: false,
  kind,
  message
})

/**
 * The operator's log line for a refused host name: the addresses it resolved to, which the
 * partner's message leaves out. Empty for any other refusal.
 */
export const resolvedLogFields = (resolved: ResolvedHost | undefined): Record<string, unknown> =>
  resolved === undefined
    ? {}
    : {
        host: resolved.host,
        resolvedTo: resolved.addresses.join(", "),
        refusedAddress: resolved.refused
      }

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

/** An error in one line, with its code (ECONNREFUSED, ...) when the message lacks it. */
export const errorText = (error: unknown) => {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    const message = oneLine(error.message)
    return code !== undefined && !message.includes(code) ? `${message} (${code})` : message
  }
  return oneLine(String(error))
}

const sizeText = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`

const notPublic = " only public internet addresses are fetched"

/** Fetches in flight at most `max` at once; the others wait, in order, until aborted. */
const makeSlots = (max: number) => {
  let free = Math.max(1, Math.floor(max))
  const waiting: Array<() => void> = []
  const acquire = (signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      if (free > 0) {
        free--
        return resolve()
      }
      const grant = () => {
        signal.removeEventListener("abort", onAbort)
        resolve()
      }
      const onAbort = () => {
        const at = waiting.indexOf(grant)
        if (at >= 0) waiting.splice(at, 1)
        reject(signal.reason)
      }
      waiting.push(grant)
      signal.addEventListener("abort", onAbort, { once: true })
    })
  const release = () => {
    const next = waiting.shift()
    if (next === undefined) free++
    else next()
  }
  return { acquire, release }
}

/** Where a hop connects: the checked addresses, and whether the URL's host was one of them. */
export type Target = {
  readonly addresses: ReadonlyArray<ResolvedAddress>
  readonly literal: boolean
}

/** The URL's host without IPv6 brackets. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** The answers of the pinned lookup: the checked addresses, never a second resolution. */
export const pinnedLookup =
  (addresses: ReadonlyArray<ResolvedAddress>): LookupFunction =>
  (_hostname, options, callback) => {
    const first = addresses[0]!
    if (options.all === true)
      callback(
        null,
        addresses.map((a) => ({ ...a }))
      )
    else callback(null, first.address, first.family)
  }

type Exchange =
  | { readonly kind: "done"; readonly result: SafeFetchResult }
  | { readonly kind: "redirect"; readonly location: string }

/**
 * The URL's host, checked: a refusal, or the addresses to connect to (every
 * one the host resolved to, each public, or allowed by `allowPrivate`). The
 * fetcher's own check, and the one webhook endpoints are registered with.
 */
export const resolveTarget = async (
  url: URL,
  options: {
    readonly allowPrivate: boolean
    readonly resolve?: ((hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>) | undefined
    readonly signal?: AbortSignal | undefined
    /** Default: the process's gate, shared by every caller (LookupGate.ts). */
    readonly lookups?: LookupGate | undefined
  }
): Promise<Target | Extract<SafeFetchResult, { ok: false }>> => {
  const { allowPrivate } = options
  const resolve = options.resolve ?? systemResolve
  const lookups = options.lookups ?? processLookupGate
  const signal = options.signal ?? new AbortController().signal
  const host = bareHost(url)
  const family = isIP(host)
  if (family !== 0) {
    const verdict = classifyAddress(host, { allowPrivate })
    return verdict.allowed
      ? { addresses: [{ address: host, family: family === 6 ? 6 : 4 }], literal: true }
      : refuse("address_not_allowed", `${host} is ${describeRange(verdict.range)}:${notPublic}`)
  }
  let answers: ReadonlyArray<ResolvedAddress>
  try {
    // The gate answers within its time limit (LookupTimedOut), or as soon as the signal aborts.
    answers = await lookups.lookup(resolve, host, signal)
  } catch (error) {
    if (signal.aborted) throw error
    return refuse("unreachable", `could not resolve ${host}: ${errorText(error)}`)
  }
  if (answers.length === 0) return refuse("unreachable", `${host} has no addresses`)
  const checked: Array<ResolvedAddress> = []
  for (const { address } of answers) {
    const verdict = classifyAddress(address, { allowPrivate })
    if (!verdict.allowed)
      return {
        ok: false,
        kind: "address_not_allowed",
        message: `${host} is not allowed, it resolves to ${describeRange(verdict.range)}:${notPublic}`,
        resolved: { host, addresses: answers.map((a) => a.address), refused: address }
      }
    checked.push({ address, family: isIP(address) === 6 ? 6 : 4 })
  }
  return { addresses: checked, literal: false }
}

export const makeSafeFetch = (options?: SafeFetchOptions): SafeFetch => {
  const allowPrivate = options?.allowPrivate === true
  const resolve = options?.resolve ?? systemResolve
  const lookups = options?.lookups
  const timeoutMs = options?.timeoutMs ?? defaultTimeoutMs
  const maxBytes = options?.maxBytes ?? defaultMaxBytes
  const maxRedirects = options?.maxRedirects ?? defaultMaxRedirects
  const slots = makeSlots(options?.maxConcurrent ?? defaultMaxConcurrent)
  const ca =
    options?.ca === undefined ? undefined : ([] as Array<string | Buffer>).concat(options.ca)
  const headers: Record<string, string> = { "user-agent": defaultUserAgent, accept: "*/*" }
  for (const [name, value] of Object.entries(options?.headers ?? {}))
    headers[name.toLowerCase()] = value

  const target = (url: URL, signal: AbortSignal) =>
    resolveTarget(url, { allowPrivate, resolve, signal, lookups })

  /** One request to the checked addresses: a redirect to follow, or the result. */
  const exchange = (url: URL, to: Target, signal: AbortSignal) =>
    new Promise<Exchange>((settle) => {
      // The time limit may have passed while the host was checked: no request then.
      if (signal.aborted) return settle({ kind: "done", result: stopped(signal, url) })
      const host = bareHost(url)
      let settled = false
      let ended = false
      const chunks: Array<Buffer> = []
      let received = 0
      let contentType: string | undefined
      const request = https.request({
        // For a host name, `lookup` answers the checked addresses (no DNS) and TLS checks the
        // certificate against `servername`, the URL's host. An IP literal is connected to as is,
        // without SNI (a server name must not be an IP address); its certificate names the IP.
        host: to.literal ? to.addresses[0]!.address : host,
        ...(to.literal
          ? {}
          : { servername: host.replace(/\.$/, ""), lookup: pinnedLookup(to.addresses) }),
        port: url.port === "" ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: { ...headers, host: url.host, "accept-encoding": "identity" },
        agent: false,
        ...(ca === undefined ? {} : { ca })
      })
      const finish = (outcome: Exchange) => {
        if (settled) return
        settled = true
        signal.removeEventListener("abort", onAbort)
        request.destroy()
        settle(outcome)
      }
      const fail = (kind: SafeFetchRefusal["kind"], message: string) =>
        finish({ kind: "done", result: refuse(kind, message) })
      const tooLarge = (declared?: number) =>
        fail(
          "too_large",
          `${url.href} is larger than ${sizeText(maxBytes)}${declared === undefined ? "" : ` (Content-Length ${declared})`}: at most ${sizeText(maxBytes)} are fetched`
        )
      const onAbort = () => finish({ kind: "done", result: stopped(signal, url) })
      signal.addEventListener("abort", onAbort, { once: true })

      request.on("response", (response: IncomingMessage) => {
        response.on("error", (error) =>
          fail("unreachable", `could not fetch ${url.href}: ${errorText(error)}`)
        )
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if (redirectStatuses.has(status) && location !== undefined)
          return finish({ kind: "redirect", location })
        if (status < 200 || status > 299)
          return fail(
            "unreachable",
            `${url.href} answered HTTP ${status}${response.statusMessage ? ` ${oneLine(response.statusMessage)}` : ""}: only a 2xx answer is accepted`
          )
        const declared = response.headers["content-length"]
        if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes)
          return tooLarge(Number(declared))
        contentType = response.headers["content-type"]
        response.on("data", (chunk: Buffer) => {
          received += chunk.length
          if (received > maxBytes) tooLarge()
          else chunks.push(chunk)
        })
        // Settled on the request's close, not here: a server that sends more than its
        // Content-Length makes the HTTP parser fail right after the body it framed.
        response.on("end", () => {
          ended = true
        })
      })
      request.on("error", (error) =>
        (error as NodeJS.ErrnoException).code?.startsWith("HPE_")
          ? fail(
              "unreachable",
              `${url.href} sent an invalid HTTP response (${(error as NodeJS.ErrnoException).code}), such as more bytes than its Content-Length`
            )
          : fail("unreachable", `could not fetch ${url.href}: ${errorText(error)}`)
      )
      request.on("close", () => {
        if (!ended)
          return fail("unreachable", `${url.href} closed the connection before the response ended`)
        const body = Buffer.concat(chunks)
        finish({
          kind: "done",
          result: {
            ok: true,
            body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
            url: url.href,
            contentType
          }
        })
      })
      request.end()
    })

  const stopped = (signal: AbortSignal, url: URL | string): SafeFetchResult =>
    refuse(
      "unreachable",
      signal.reason === timedOut
        ? `fetching ${String(url)} took longer than ${timeoutMs} ms, the time limit`
        : `fetching ${String(url)} was cancelled`
    )

  const follow = async (start: URL, signal: AbortSignal): Promise<SafeFetchResult> => {
    let url = start
    for (let redirects = 0; ; redirects++) {
      const to = await target(url, signal)
      if (!("addresses" in to)) return to
      const outcome = await exchange(url, to, signal)
      if (outcome.kind === "done") return outcome.result
      if (redirects >= maxRedirects)
        return refuse(
          "unreachable",
          `${start.href} redirected more than ${maxRedirects} times: at most ${maxRedirects} redirects are followed`
        )
      let next: URL
      try {
        next = new URL(outcome.location, url)
      } catch {
        return refuse("invalid_url", `${url.href} redirected to an invalid URL`)
      }
      if (next.protocol !== "https:")
        return refuse(
          "invalid_url",
          `${url.href} redirected to ${next.protocol} (${next.href}): only https URLs are fetched`
        )
      url = next
    }
  }

  return async (text, init) => {
    let start: URL
    try {
      start = new URL(text)
    } catch {
      return refuse("invalid_url", "the URL is not valid: an absolute https URL is expected")
    }
    if (start.protocol !== "https:")
      return refuse("invalid_url", `the URL must use https (not ${start.protocol})`)

    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(timedOut), timeoutMs)
    const outer = init?.signal
    const cancel = () => controller.abort(cancelled)
    if (outer?.aborted) cancel()
    outer?.addEventListener("abort", cancel, { once: true })
    let holding = false
    try {
      await slots.acquire(controller.signal)
      holding = true
      return await follow(start, controller.signal)
    } catch (error) {
      if (controller.signal.aborted) return stopped(controller.signal, start)
      return refuse("unreachable", `could not fetch ${start.href}: ${errorText(error)}`)
    } finally {
      if (holding) slots.release()
      clearTimeout(timer)
      outer?.removeEventListener("abort", cancel)
    }
  }
}
