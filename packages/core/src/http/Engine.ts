/**
 * The engine's request handler: matches a route, authenticates the partner,
 * settles the API version, reads and parses the body, runs the route and
 * turns every outcome, including defects, into a JSON response. Adapters turn
 * their server's requests into `EngineRequest`s and call it.
 */
import { Cause, Effect, Exit, Runtime } from "effect"
import type { WalletIdentity } from "../gateway/Gateway.js"
import type { Partner } from "../partners/Partner.js"
import { Partners } from "../partners/Partners.js"
import {
  API_VERSIONS,
  type ApiVersion,
  DEFAULT_API_VERSION,
  isApiVersion,
  VERSION_HEADERS
} from "../shared/ApiVersion.js"
import { type ApiFailure, type ErrorReply, errorReply, INTERNAL_ERROR } from "./ErrorResponses.js"
import type { EngineRequest, EngineResponse, Reply } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import type { Route } from "./Route.js"

export type EngineHandler = (request: EngineRequest) => Promise<EngineResponse>

export interface EngineOptions {
  /** Larger bodies are refused with 413 before they are buffered. */
  readonly maxBodyBytes: number
  /** Who a gateway request comes from: a wallet app, by its `Api-Key` or `App-Id`. */
  readonly authenticateWallet: (presented: {
    readonly apiKey: string | undefined
    readonly appId: string | undefined
    readonly clientId: string | undefined
  }) => Effect.Effect<WalletIdentity, ApiFailure>
}

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024

interface CompiledRoute<R> {
  readonly route: Route<R>
  readonly segments: ReadonlyArray<string>
}

type Match<R> =
  | { readonly _tag: "Found"; readonly route: Route<R>; readonly params: Record<string, string> }
  | { readonly _tag: "WrongMethod"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "None" }

/** Routes by their number of path segments, static segments before parameters. */
const compile = <R>(
  routes: ReadonlyArray<Route<R>>
): Map<number, ReadonlyArray<CompiledRoute<R>>> => {
  const bySize = new Map<number, Array<CompiledRoute<R>>>()
  const params = (segments: ReadonlyArray<string>) =>
    segments.filter((s) => s.startsWith(":")).length
  for (const route of routes) {
    const segments = route.path.split("/").slice(1)
    bySize.set(segments.length, [...(bySize.get(segments.length) ?? []), { route, segments }])
  }
  // /v1/merchants/payments before /v1/merchants/:merchantId.
  for (const list of bySize.values()) list.sort((a, b) => params(a.segments) - params(b.segments))
  return bySize
}

const matchRoute = <R>(
  compiled: Map<number, ReadonlyArray<CompiledRoute<R>>>,
  method: string,
  pathname: string
): Match<R> | RequestError => {
  const parts = pathname.split("/").slice(1)
  const allow: Array<string> = []
  for (const { route, segments } of compiled.get(parts.length) ?? []) {
    let matches = true
    for (let i = 0; i < segments.length && matches; i++) {
      const segment = segments[i]!
      matches = segment.startsWith(":") ? parts[i] !== "" : segment === parts[i]
    }
    if (!matches) continue
    if (route.method !== method) {
      allow.push(route.method)
      continue
    }
    const params: Record<string, string> = {}
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!
      if (!segment.startsWith(":")) continue
      try {
        params[segment.slice(1)] = decodeURIComponent(parts[i]!)
      } catch {
        return RequestError.invalid(
          "invalid_params",
          segment.slice(1),
          "is not a valid percent-encoded value"
        )
      }
    }
    return { _tag: "Found", route, params }
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

const VERSION_HEADER_KEYS = VERSION_HEADERS.map((name) => [name, name.toLowerCase()] as const)

const requestedVersion = (request: EngineRequest) => {
  for (const [name, key] of VERSION_HEADER_KEYS) {
    const value = request.header(key)?.trim()
    if (value !== undefined && value !== "") return { name, value }
  }
  return undefined
}

/** The presented partner key: `Api-Key`, or the `Authorization: Bearer` form (or `X-Api-Key`). */
export const presentedApiKey = (request: EngineRequest, legacy = false): string | undefined => {
  const apiKey = request.header("api-key") ?? (legacy ? request.header("x-api-key") : undefined)
  if (apiKey !== undefined) return apiKey.trim()
  const authorization = request.header("authorization")
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)
  return bearer?.[1] ?? (authorization === undefined ? undefined : "")
}

const isJsonContentType = (value: string | undefined): boolean =>
  value === undefined || /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(value.trim())

const isFormContentType = (value: string | undefined): boolean =>
  value === undefined || /^application\/x-www-form-urlencoded\s*(;|$)/i.test(value.trim())

/** The whole body, refused past `limit` bytes. */
const readBytes = (request: EngineRequest, limit: number) =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => request.readBody(limit),
      catch: () =>
        new RequestError({
          status: 400,
          code: "invalid_params",
          message: "The body could not be read"
        })
    }),
    (bytes) =>
      bytes === "too_large"
        ? Effect.fail(
            new RequestError({
              status: 413,
              code: "payload_too_large",
              message: `The body is larger than ${limit} bytes`
            })
          )
        : Effect.succeed(bytes)
  )

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** The body as text, for a form route. */
const readFormBody = (request: EngineRequest, limit: number) =>
  Effect.flatMap(readBytes(request, limit), (bytes) =>
    bytes.length > 0 && !isFormContentType(request.header("content-type"))
      ? Effect.fail(
          new RequestError({
            status: 415,
            code: "unsupported_media_type",
            message:
              "The body must be a form, sent with Content-Type: application/x-www-form-urlencoded"
          })
        )
      : Effect.succeed(utf8.decode(bytes))
  )

const readJsonBody = (request: EngineRequest, limit: number) =>
  Effect.gen(function* () {
    const bytes = yield* readBytes(request, limit)
    if (bytes.length === 0) return undefined
    if (!isJsonContentType(request.header("content-type"))) {
      return yield* new RequestError({
        status: 415,
        code: "unsupported_media_type",
        message: "The body must be JSON, sent with Content-Type: application/json"
      })
    }
    const text = utf8.decode(bytes)
    try {
      return JSON.parse(text) as unknown
    } catch (cause) {
      return yield* RequestError.invalid(
        "invalid_params",
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
  const headers: Record<string, string> = {
    "content-type": `${reply.contentType ?? "application/json"}; charset=utf-8`,
    "cache-control": "no-store",
    ...reply.headers
  }
  if (version !== undefined) {
    headers["pay-version"] = version
    headers["wcp-version"] = version
  }
  return { status: reply.status, headers, body: reply.body }
}

export const makeEngineHandler = <R>(
  routes: ReadonlyArray<Route<R>>,
  options: EngineOptions
): Effect.Effect<EngineHandler, never, R | Partners> =>
  Effect.gen(function* () {
    const partners = yield* Partners
    const runtime = yield* Effect.runtime<R | Partners>()
    const compiled = compile(routes)

    const failed = (failure: ApiFailure, version: ApiVersion | undefined) =>
      respond(fromError(errorReply(failure)), version)

    /** Everything before the route runs is synchronous; the route's work is the one effect. */
    const handle = (request: EngineRequest): Effect.Effect<EngineResponse, never, R | Partners> => {
      const url = splitTarget(request.url)
      const match = matchRoute(compiled, request.method.toUpperCase(), url.pathname)
      if (match instanceof RequestError) return Effect.succeed(failed(match, undefined))
      if (match._tag === "None") {
        return Effect.succeed(
          failed(
            new RequestError({
              status: 404,
              code: "not_found",
              message: `No route for ${request.method} ${url.pathname}`
            }),
            undefined
          )
        )
      }
      if (match._tag === "WrongMethod") {
        return Effect.succeed(
          failed(
            new RequestError({
              status: 405,
              code: "method_not_allowed",
              message: `${request.method} is not allowed here; use ${match.allow.join(", ")}`,
              allow: match.allow.join(", ")
            }),
            undefined
          )
        )
      }
      const { route, params } = match
      const requested = requestedVersion(request)
      if (requested !== undefined && !isApiVersion(requested.value)) {
        return Effect.succeed(
          failed(
            new RequestError({
              status: 400,
              code: "unknown_api_version",
              message: `Unknown API version ${JSON.stringify(requested.value)}; known: ${API_VERSIONS.join(", ")}`,
              issues: [{ field: requested.name, message: "is not a known API version" }]
            }),
            undefined
          )
        )
      }
      let version = requested?.value as ApiVersion | undefined
      const authenticated: Effect.Effect<
        { readonly partner?: Partner; readonly wallet?: WalletIdentity },
        ApiFailure
      > =
        route.auth === "none"
          ? Effect.succeed({})
          : route.auth === "wallet"
            ? Effect.map(
                options.authenticateWallet({
                  apiKey: request.header("api-key")?.trim(),
                  appId: request.header("app-id")?.trim(),
                  clientId: request.header("client-id")?.trim()
                }),
                (wallet) => ({ wallet })
              )
            : Effect.map(
                partners.authenticate(presentedApiKey(request, route.auth === "partner-legacy")),
                (partner) => ({ partner })
              )
      return authenticated.pipe(
        Effect.flatMap(({ partner, wallet }) => {
          version ??= partner?.apiVersion ?? DEFAULT_API_VERSION
          const exchange = (body: unknown) =>
            route.handle({
              request,
              path: url.pathname,
              pathParams: params,
              query: url.query,
              body,
              partner,
              wallet,
              version: version as ApiVersion
            })
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
              : Effect.as(
                  Effect.logError("request failed", Cause.pretty(cause)),
                  respond(fromError(INTERNAL_ERROR), version)
                )
          }
        })
      )
    }

    // A fiber runs synchronously until it has to wait, and most requests never do (SQLite
    // is synchronous): those are answered at once, without a promise-backed runner. One
    // that waits (a long-poll, a body) goes on in its fiber and is awaited.
    const runFork = Runtime.runFork(runtime)
    const settled = (exit: Exit.Exit<EngineResponse>) =>
      Exit.isSuccess(exit) ? exit.value : respond(fromError(INTERNAL_ERROR), undefined)
    return (request) => {
      const fiber = runFork(handle(request))
      const exit = fiber.unsafePoll()
      return exit !== null
        ? Promise.resolve(settled(exit))
        : new Promise<EngineResponse>((resolve) =>
            fiber.addObserver((done) => resolve(settled(done)))
          )
    }
  })
