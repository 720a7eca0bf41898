/**
 * The engine's request handler: matches a route, authenticates the partner,
 * settles the API version, reads and parses the body, runs the route and
 * turns every outcome, including defects, into a JSON response. Adapters turn
 * their server's requests into `EngineRequest`s and call it.
 */
import {
  Cause,
  Context,
  Effect,
  Exit,
  FiberId,
  FiberRef,
  FiberRefs,
  HashMap,
  Runtime
} from "effect"
import {
  API_VERSIONS,
  type ApiVersion,
  DEFAULT_API_VERSION,
  isApiVersion
} from "../shared/ApiVersion.js"
import { headerName, VERSION_HEADER_NAMES } from "./ApiDocs.js"
import {
  ApiErrors,
  type ApiFailure,
  type ErrorReply,
  INTERNAL_ERROR,
  requestErrorReply
} from "./ErrorResponses.js"
import type { EngineRequest, EngineResponse, Reply } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import type { RequestCaller, RequestObserver, RequestOutcome } from "./RequestOutcome.js"
import type { Authenticated, Authenticator, ImmediateReply, Route } from "./Route.js"

export type EngineHandler = (request: EngineRequest) => Promise<EngineResponse>

export interface EngineOptions<R> {
  /** Larger bodies are refused with 413 before they are buffered. */
  readonly maxBodyBytes: number
  /** The check of each middleware the routes declare (the partner key, a wallet app's). */
  readonly authenticators: ReadonlyArray<Authenticator<R>>
  /** Each failure a route may answer with, as its reply (the API's ApiFailures.ts); an exchange's own are answered here. */
  readonly errorReply?: (failure: ApiFailure) => ErrorReply
  /**
   * The path prefix every request arrives with (`/pay`), taken off before routes
   * are matched; a request outside it is 404. Default: none.
   */
  readonly basePath?: string
  /**
   * Told of every answered request, once, synchronously (the request log line,
   * the request metrics): see RequestOutcome.ts. Default: none.
   */
  readonly observers?: ReadonlyArray<RequestObserver>
}

interface CompiledRoute<R> {
  readonly route: Route<R>
  readonly segments: ReadonlyArray<string>
}

type Match<R> =
  | { readonly _tag: "Found"; readonly route: Route<R>; readonly params: Record<string, string> }
  | { readonly _tag: "WrongMethod"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "None" }

/**
 * The routes a path can match, by its number of segments and its first two (most routes
 * start with two literal ones, `/v1/payments/…`): a request looks at those alone, not at
 * every route of its length. Each list keeps the order of `bySize`.
 */
interface CompiledRoutes<R> {
  readonly byPrefix: Map<string, ReadonlyArray<CompiledRoute<R>>>
  /** For a path whose prefix no list has: the routes with a parameter in their first two. */
  readonly bySize: Map<number, ReadonlyArray<CompiledRoute<R>>>
}

const prefixKey = (size: number, first: string | undefined, second: string | undefined) =>
  `${size} ${first} ${second}`

const isParam = (segment: string | undefined) => segment === undefined || segment.startsWith(":")

const compile = <R>(routes: ReadonlyArray<Route<R>>): CompiledRoutes<R> => {
  const bySize = new Map<number, Array<CompiledRoute<R>>>()
  const params = (segments: ReadonlyArray<string>) =>
    segments.filter((s) => s.startsWith(":")).length
  for (const route of routes) {
    const segments = route.path.split("/").slice(1)
    bySize.set(segments.length, [...(bySize.get(segments.length) ?? []), { route, segments }])
  }
  // /v1/merchants/payments before /v1/merchants/:merchantId.
  for (const list of bySize.values()) list.sort((a, b) => params(a.segments) - params(b.segments))
  const byPrefix = new Map<string, ReadonlyArray<CompiledRoute<R>>>()
  const wild = new Map<number, ReadonlyArray<CompiledRoute<R>>>()
  const isWild = (segments: ReadonlyArray<string>) => isParam(segments[0]) || isParam(segments[1])
  for (const [size, list] of bySize) {
    wild.set(
      size,
      list.filter((c) => isWild(c.segments))
    )
    for (const { segments } of list) {
      const key = prefixKey(size, segments[0], segments[1])
      if (isWild(segments) || byPrefix.has(key)) continue
      byPrefix.set(
        key,
        list.filter(
          (c) =>
            isWild(c.segments) || (c.segments[0] === segments[0] && c.segments[1] === segments[1])
        )
      )
    }
  }
  return { byPrefix, bySize: wild }
}

const paramsOf = (
  segments: ReadonlyArray<string>,
  parts: ReadonlyArray<string>
): Record<string, string> => {
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (!segment.startsWith(":")) continue
    // A segment that is not valid percent-encoding is kept as sent: it names nothing (404).
    try {
      params[segment.slice(1)] = decodeURIComponent(parts[i]!)
    } catch {
      params[segment.slice(1)] = parts[i]!
    }
  }
  return params
}

const matchRoute = <R>(
  compiled: CompiledRoutes<R>,
  request: EngineRequest,
  pathname: string
): Match<R> => {
  const method = request.method.toUpperCase()
  const parts = pathname.split("/").slice(1)
  const allow: Array<string> = []
  const candidates =
    compiled.byPrefix.get(prefixKey(parts.length, parts[0], parts[1])) ??
    compiled.bySize.get(parts.length) ??
    []
  for (const { route, segments } of candidates) {
    let matches = true
    for (let i = 0; i < segments.length && matches; i++) {
      const segment = segments[i]!
      matches = segment.startsWith(":") ? parts[i] !== "" : segment === parts[i]
    }
    if (!matches) continue
    const accepted = route.accepts === undefined ? undefined : paramsOf(segments, parts)
    if (accepted !== undefined && !route.accepts!(accepted, request)) continue
    if (route.method !== method) {
      allow.push(route.method)
      continue
    }
    return { _tag: "Found", route, params: accepted ?? paramsOf(segments, parts) }
  }
  return allow.length > 0 ? { _tag: "WrongMethod", allow } : { _tag: "None" }
}

// Shared by every request without a query string; routes only read it.
const NO_QUERY = new URLSearchParams()

/** Path and query of a request target; origin-form (`/path?query`) without a URL parser. */
const splitTarget = (target: string): { pathname: string; query: URLSearchParams } => {
  if (!target.startsWith("/")) {
    const url = new URL(target, "http://engine")
    return { pathname: url.pathname, query: url.searchParams }
  }
  const mark = target.indexOf("?")
  return mark === -1
    ? { pathname: target, query: NO_QUERY }
    : { pathname: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) }
}

/** The path under `basePath` (`/pay/v1/x` under `/pay` is `/v1/x`), or undefined outside it. */
const withinBase = (basePath: string, pathname: string): string | undefined => {
  if (!pathname.startsWith(basePath)) return undefined
  if (pathname.length === basePath.length) return "/"
  return pathname[basePath.length] === "/" ? pathname.slice(basePath.length) : undefined
}

/** The strongest version header sent, with its name (WIRE.md section 3). */
const requestedVersion = (request: EngineRequest) => {
  for (const key of VERSION_HEADER_NAMES) {
    const value = request.header(key)?.trim()
    if (value !== undefined && value !== "") return { name: headerName(key), value }
  }
  return undefined
}

// A body without a Content-Type is not taken as JSON: a browser may POST one cross-site with no
// preflight (as it may text/plain), which would open the public checkout and sandbox routes to
// cross-site requests. Only an empty body may come without one.
const isJsonContentType = (value: string | undefined): boolean =>
  value !== undefined && /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(value.trim())

const isFormContentType = (value: string | undefined): boolean =>
  value === undefined || /^application\/x-www-form-urlencoded\s*(;|$)/i.test(value.trim())

/** The whole body, refused past `limit` bytes. */
const readBytes = (request: EngineRequest, limit: number) =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => request.readBody(limit),
      catch: () => RequestError.of(ApiErrors.ParamsValidation, "The body could not be read")
    }),
    (bytes) =>
      bytes === "too_large"
        ? Effect.fail(
            RequestError.of(ApiErrors.PayloadTooLarge, `The body is larger than ${limit} bytes`)
          )
        : Effect.succeed(bytes)
  )

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** The body as text, for a form route. */
const readFormBody = (request: EngineRequest, limit: number) =>
  Effect.flatMap(readBytes(request, limit), (bytes) =>
    bytes.length > 0 && !isFormContentType(request.header("content-type"))
      ? Effect.fail(
          RequestError.of(
            ApiErrors.UnsupportedMediaType,
            "The body must be a form, sent with Content-Type: application/x-www-form-urlencoded"
          )
        )
      : Effect.succeed(utf8.decode(bytes))
  )

const readJsonBody = (request: EngineRequest, limit: number) =>
  Effect.gen(function* () {
    const bytes = yield* readBytes(request, limit)
    if (bytes.length === 0) return undefined
    if (!isJsonContentType(request.header("content-type"))) {
      return yield* RequestError.of(
        ApiErrors.UnsupportedMediaType,
        "The body must be JSON, sent with Content-Type: application/json"
      )
    }
    const text = utf8.decode(bytes)
    try {
      return JSON.parse(text) as unknown
    } catch (cause) {
      return yield* RequestError.invalid(
        ApiErrors.ParamsValidation,
        "body",
        `is not valid JSON (${cause instanceof Error ? cause.message : "parse error"})`
      )
    }
  })

const fromError = (error: ErrorReply): Reply => ({
  status: error.status,
  body: JSON.stringify(error.body),
  ...(error.headers ? { headers: error.headers } : {})
})

const respond = (reply: Reply, version: ApiVersion | undefined): EngineResponse => {
  const contentType = reply.contentType ?? "application/json"
  const headers: Record<string, string> = {
    "content-type": reply.bytes === undefined ? `${contentType}; charset=utf-8` : contentType,
    "cache-control": "no-store",
    ...reply.headers
  }
  if (version !== undefined) {
    headers["pay-version"] = version
    headers["wcp-version"] = version
  }
  return { status: reply.status, headers, body: reply.bytes ?? reply.body }
}

/** A usable `X-Request-Id`: 1 to 128 printable ASCII characters, no spaces. */
const USABLE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/

/**
 * Request ids for requests that sent none: a random prefix per handler and a counter, unique
 * enough across instances and far cheaper than a UUID per request.
 */
const requestIds = () => {
  const random = new Uint8Array(8)
  globalThis.crypto.getRandomValues(random)
  let prefix = ""
  for (const byte of random) prefix += (byte % 36).toString(36)
  let counter = 0
  return (request: EngineRequest): string => {
    const sent = request.header("x-request-id")
    return sent !== undefined && USABLE_REQUEST_ID.test(sent)
      ? sent
      : `${prefix}-${(++counter).toString(36)}`
  }
}

/**
 * A request's fiber starts with its requestId among its log annotations, set as the fiber is
 * made (no effect of its own on the request path): every line its work logs carries it.
 */
const withRequestId = (requestId: string) => ({
  updateRefs: (refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime) =>
    FiberRefs.updateAs(refs, {
      fiberId,
      fiberRef: FiberRef.currentLogAnnotations,
      value: HashMap.set(
        FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations),
        "requestId",
        requestId as unknown
      )
    })
})

/**
 * The outcome of a request whose client went away before its answer (its signal aborted the
 * fiber): nobody reads it, and nothing failed, so it is no 500 (nginx's "client closed
 * request", for the log and the metrics).
 */
const CLIENT_GONE: Reply = { status: 499, body: "" }

const clientGone = (request: EngineRequest, cause: Cause.Cause<unknown>) =>
  request.signal?.aborted === true && Cause.isInterruptedOnly(cause)

/** What `handle` returns for a request it answered in `Start.answer`: never run. */
const ANSWERED: Effect.Effect<EngineResponse> = Effect.die("answered immediately")

export const makeEngineHandler = <R>(
  routes: ReadonlyArray<Route<R>>,
  options: EngineOptions<R>
): Effect.Effect<EngineHandler, never, R> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<R>()
    const compiled = compile(routes)
    const authenticators = new Map<object, Authenticator<R>>(
      options.authenticators.map((a) => [a.middleware, a])
    )
    for (const route of routes) {
      if (route.middleware !== undefined && !authenticators.has(route.middleware)) {
        throw new Error(
          `${route.method} ${route.path}: no authenticator for ${route.middleware.key}`
        )
      }
    }
    const PUBLIC: Effect.Effect<Authenticated | undefined> = Effect.succeed(undefined)

    // The engine's services plus the caller, made once per caller (the verified-key caches
    // hand out the same partner or app object for a while), and a runner whose fibers start
    // with it: a context copied or set on every request costs the hot routes measurably.
    // With `extra` (Authenticated.extra), one per pair of objects.
    type Caller = { readonly context: Context.Context<R>; readonly runFork: typeof runFork }
    const callers = new WeakMap<object, Caller>()
    const callersWithExtra = new WeakMap<object, WeakMap<object, Caller>>()
    const callerOf = (tag: Context.Tag<unknown, unknown>, { service, extra }: Authenticated) => {
      let cache = callers
      let key = service as object
      if (extra !== undefined) {
        let byExtra = callersWithExtra.get(key)
        if (byExtra === undefined) {
          byExtra = new WeakMap()
          callersWithExtra.set(key, byExtra)
        }
        cache = byExtra
        key = extra
      }
      let caller = cache.get(key)
      if (caller === undefined) {
        const withCaller = Context.add(runtime.context, tag, service)
        const context = (
          extra === undefined ? withCaller : Context.merge(withCaller, extra)
        ) as Context.Context<R>
        caller = {
          context,
          runFork: Runtime.runFork(
            Runtime.make({
              context,
              fiberRefs: runtime.fiberRefs,
              runtimeFlags: runtime.runtimeFlags
            })
          )
        }
        cache.set(key, caller)
      }
      return caller
    }
    const callerContext = (tag: Context.Tag<unknown, unknown>, caller: Authenticated) =>
      callerOf(tag, caller).context
    const runFork = Runtime.runFork(runtime)
    /** How `handle` set up a request: its runner, or the answer it gave (Route.immediate). */
    interface Start {
      runFork?: typeof runFork
      answer?: EngineResponse
      /**
       * An immediate answer one promise away (or held: a long-poll), in `version`; undefined
       * from it, or a failure: the route's effect answers. Mapped in `run`, not here: a
       * callback made in `handle` would keep `handle`'s whole context (the parsed target,
       * the match) alive for as long as a long-poll is held.
       */
      later?: Promise<Reply | undefined>
      version?: ApiVersion
      /** For the request's outcome: the matched route's template, the caller, a 500's cause. */
      route?: string
      caller?: RequestCaller | undefined
      cause?: Cause.Cause<unknown>
    }
    const basePath = options.basePath ?? ""

    // Without a mapping, a failure that is not the exchange's own is a defect to answer 500.
    const errorReply = options.errorReply ?? (() => INTERNAL_ERROR)
    const failed = (failure: ApiFailure, version: ApiVersion | undefined) =>
      respond(
        fromError(
          failure._tag === "RequestError" ? requestErrorReply(failure) : errorReply(failure)
        ),
        version
      )

    /**
     * Everything before the route runs is synchronous; the route's work is the one effect.
     * A caller known at once (a verified key) is put in `start.context`, the context the
     * request's fiber starts with, rather than set by the effect: the cheapest way to hand
     * the hot routes their `CurrentPartner`.
     */
    const handle = (
      request: EngineRequest,
      start: Start,
      tryImmediate: boolean
    ): Effect.Effect<EngineResponse, never, R> => {
      const url = splitTarget(request.url)
      const sent = url.pathname
      if (basePath !== "") url.pathname = withinBase(basePath, sent) ?? ""
      const match: Match<R> =
        url.pathname === "" ? { _tag: "None" } : matchRoute(compiled, request, url.pathname)
      if (match._tag === "None") {
        return Effect.succeed(
          failed(
            RequestError.of(ApiErrors.NotFound, `No route for ${request.method} ${sent}`),
            undefined
          )
        )
      }
      if (match._tag === "WrongMethod") {
        const allow = match.allow.join(", ")
        return Effect.succeed(
          failed(
            RequestError.of(
              ApiErrors.MethodNotAllowed,
              `${request.method} is not allowed here; use ${allow}`,
              { allow }
            ),
            undefined
          )
        )
      }
      const { route, params } = match
      start.route = route.path
      const requested = requestedVersion(request)
      if (requested !== undefined && !isApiVersion(requested.value)) {
        return Effect.succeed(
          failed(
            RequestError.of(
              ApiErrors.UnknownApiVersion,
              `${requested.name}: unknown API version ${JSON.stringify(requested.value)}; send one of ${API_VERSIONS.join(", ")}, or leave the header out for the account's pinned version`,
              {
                issues: [
                  { field: requested.name, message: `must be one of: ${API_VERSIONS.join(", ")}` }
                ]
              }
            ),
            undefined
          )
        )
      }
      let version = requested?.value as ApiVersion | undefined
      const middleware = route.middleware
      const authenticator = middleware === undefined ? undefined : authenticators.get(middleware)
      const known = authenticator?.known?.(request)
      if (known !== undefined) start.caller = known.caller
      const admit = authenticator?.admit
      // A caller known at once is admitted here, before any immediate answer; on the second try
      // of a request whose immediate answer fell through (`tryImmediate` false), it was already.
      if (tryImmediate && known !== undefined && admit !== undefined) {
        const refused = admit(known, route)
        if (refused !== undefined) {
          start.answer = failed(refused, version)
          return ANSWERED
        }
      }
      // A route that can answer without waiting does, for a caller known at once: no fiber.
      if (tryImmediate && known !== undefined && route.immediate !== undefined) {
        const answeredIn = version ?? known.pinnedVersion ?? DEFAULT_API_VERSION
        let reply: ImmediateReply
        try {
          reply = route.immediate(
            {
              request,
              path: url.pathname,
              pathParams: params,
              query: url.query,
              body: undefined,
              version: answeredIn
            },
            known.service
          )
        } catch {
          // A throw (the database, a bug) is the effect's to meet again and answer, logged.
          reply = undefined
        }
        if (reply instanceof Promise) {
          start.later = reply
          start.version = answeredIn
          return ANSWERED
        }
        if (reply !== undefined) {
          start.answer = respond(reply, answeredIn)
          return ANSWERED
        }
      }
      if (known !== undefined && middleware?.provides !== undefined) {
        start.runFork = callerOf(middleware.provides, known).runFork
      }
      const authenticated: Effect.Effect<Authenticated | undefined, ApiFailure, R> =
        authenticator === undefined
          ? PUBLIC
          : known !== undefined
            ? Effect.succeed(known)
            : admit === undefined || !tryImmediate
              ? authenticator.authenticate(request)
              : Effect.flatMap(authenticator.authenticate(request), (caller) => {
                  const refused = admit(caller, route)
                  return refused === undefined ? Effect.succeed(caller) : Effect.fail(refused)
                })
      return authenticated.pipe(
        Effect.flatMap((caller) => {
          start.caller = caller?.caller
          version ??= caller?.pinnedVersion ?? DEFAULT_API_VERSION
          const exchange = (body: unknown) => {
            const handled = route.handle({
              request,
              path: url.pathname,
              pathParams: params,
              query: url.query,
              body,
              version: version as ApiVersion
            })
            // The caller, as the middleware provides it (CurrentPartner, CurrentWalletApp).
            return caller === undefined ||
              middleware?.provides === undefined ||
              start.runFork !== undefined
              ? handled
              : // Set, not scoped with `locally` (whose acquire/release costs the hot routes a few
                // microseconds): the fiber is this request's own and ends with it.
                Effect.zipRight(
                  FiberRef.set(FiberRef.currentContext, callerContext(middleware.provides, caller)),
                  handled
                )
          }
          return route.takesBody === "form"
            ? Effect.flatMap(readFormBody(request, options.maxBodyBytes), exchange)
            : route.takesBody
              ? Effect.flatMap(readJsonBody(request, options.maxBodyBytes), exchange)
              : exchange(undefined)
        }),
        Effect.matchCauseEffect({
          onSuccess: (reply) => Effect.succeed(respond(reply, version)),
          onFailure: (cause) => {
            const failure = Cause.failureOption(cause)
            return failure._tag === "Some" && !Cause.isDie(cause) && !Cause.isInterrupted(cause)
              ? Effect.succeed(failed(failure.value, version))
              : clientGone(request, cause)
                ? Effect.succeed(respond(CLIENT_GONE, version))
                : // Logged with the request's line (the outcome's cause), at error.
                  Effect.sync(() => {
                    start.cause = cause
                    return respond(fromError(INTERNAL_ERROR), version)
                  })
          }
        })
      )
    }

    // A fiber runs synchronously until it has to wait, and most requests never do (SQLite
    // is synchronous): those are answered at once, without a promise-backed runner. One
    // that waits (a long-poll, a body) goes on in its fiber and is awaited.
    const settled = (exit: Exit.Exit<EngineResponse>, start: Start, request: EngineRequest) => {
      if (Exit.isSuccess(exit)) return exit.value
      if (clientGone(request, exit.cause)) return respond(CLIENT_GONE, undefined)
      start.cause = exit.cause
      return respond(fromError(INTERNAL_ERROR), undefined)
    }
    const observers = options.observers ?? []
    const nextRequestId = requestIds()
    /** Every answer goes out through here: its request id added, the observers told. */
    const answered = (
      response: EngineResponse,
      request: EngineRequest,
      start: Start,
      requestId: string,
      arrival: number
    ): EngineResponse => {
      // Each response's headers are its own object (`respond`).
      ;(response.headers as Record<string, string>)["x-request-id"] = requestId
      if (observers.length > 0) {
        const outcome: RequestOutcome = {
          requestId,
          method: request.method,
          route: start.route,
          status: response.status,
          durationMs: performance.now() - arrival,
          caller: start.caller,
          cause: start.cause
        }
        for (const observer of observers) {
          try {
            observer(outcome)
          } catch {
            // An observer must not throw; if one does, the answer still goes out.
          }
        }
      }
      return response
    }
    const run = (
      request: EngineRequest,
      tryImmediate: boolean,
      requestId: string,
      arrival: number
    ): Promise<EngineResponse> => {
      const start: Start = {}
      const effect = handle(request, start, tryImmediate)
      if (start.answer !== undefined) {
        return Promise.resolve(answered(start.answer, request, start, requestId, arrival))
      }
      if (start.later !== undefined) {
        const version = start.version
        // A failed promise (the database) is the effect's to answer, as is undefined.
        return start.later.then(
          (reply) =>
            reply === undefined
              ? run(request, false, requestId, arrival)
              : answered(respond(reply, version), request, start, requestId, arrival),
          () => run(request, false, requestId, arrival)
        )
      }
      const fiber = (start.runFork ?? runFork)(effect, withRequestId(requestId))
      const exit = fiber.unsafePoll()
      if (exit !== null) {
        return Promise.resolve(
          answered(settled(exit, start, request), request, start, requestId, arrival)
        )
      }
      const signal = request.signal
      // The client went away: its request's work stops (a long-poll's waiter is let go at once).
      const abandon = () => fiber.unsafeInterruptAsFork(FiberId.none)
      if (signal?.aborted) abandon()
      else signal?.addEventListener("abort", abandon, { once: true })
      return new Promise<EngineResponse>((resolve) =>
        fiber.addObserver((done) => {
          signal?.removeEventListener("abort", abandon)
          resolve(answered(settled(done, start, request), request, start, requestId, arrival))
        })
      )
    }
    return (request) => run(request, true, nextRequestId(request), performance.now())
  })
