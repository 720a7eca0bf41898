/**
 * Routes served by the engine, built from the HttpApi definition so that the
 * served paths, the decoding, the authentication and the declared errors come
 * from one place: each endpoint's path, header, URL-parameter and payload
 * schemas decode the request, its group's or its own middleware says who may
 * call it, and its handler receives typed values.
 */
import {
  HttpApi,
  type HttpApiEndpoint,
  type HttpApiGroup,
  type HttpApiMiddleware
} from "@effect/platform"
import { Context, Effect, Either, Option, Schema, SchemaAST } from "effect"
import type { ApiVersion } from "../shared/ApiVersion.js"
import {
  ErrorsDeclared,
  HEADER_RULES,
  headerName,
  pathNotFoundOf,
  structFields,
  UnknownBodyFields,
  VERSION_HEADER_NAMES
} from "./ApiDocs.js"
import { makeDecoder, toFieldIssues } from "./Decode.js"
import { ApiErrors, type ApiFailure } from "./ErrorResponses.js"
import type { EngineRequest, Reply } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import type { RequestCaller } from "./RequestOutcome.js"

/** A route's immediate answer: a reply, a promise of one, or undefined for its effect to answer. */
export type ImmediateReply = Reply | Promise<Reply | undefined> | undefined

/** What the engine hands a route after matching, authenticating and reading the body. */
export interface Exchange {
  readonly request: EngineRequest
  /** The decoded URL path. */
  readonly path: string
  readonly pathParams: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** Parsed JSON body (undefined when there was none), or the text of a form. */
  readonly body: unknown
  readonly version: ApiVersion
}

/** Who the middleware says the caller is: the service it provides, and a pinned API version. */
export interface Authenticated {
  readonly service: unknown
  readonly pinnedVersion?: ApiVersion | undefined
  /**
   * More of the caller for the request's context, beside the middleware's
   * service (the key a partner request acts with). The engine keeps one
   * context per pair of `service` and `extra` objects: hand out the same
   * object for the same caller, not a new one per request.
   */
  readonly extra?: Context.Context<never> | undefined
  /** Who it is, by id, for the request's log line and metrics (never a key): the same object each time. */
  readonly caller?: RequestCaller | undefined
}

/** Runs a middleware's check: given to the engine for each middleware the definition uses. */
export interface Authenticator<R = never> {
  /** The middleware class of the definition (`PartnerApiKey`): what routes declare. */
  readonly middleware: object
  readonly authenticate: (request: EngineRequest) => Effect.Effect<Authenticated, ApiFailure, R>
  /** The caller when known without any work (a key verified a moment ago), else undefined. */
  readonly known?: (request: EngineRequest) => Authenticated | undefined
  /**
   * Whether an authenticated caller may go on to `route` (a key's scopes, a
   * rate limit): undefined admits, a failure refuses. Run once per request,
   * after authentication (a wrong key is still refused as such) and before
   * the route, without I/O.
   */
  readonly admit?:
    | ((
        caller: Authenticated,
        route: { readonly method: string; readonly path: string }
      ) => ApiFailure | undefined)
    | undefined
}

export interface Route<R> {
  readonly method: string
  /** Template with `:name` segments, as in the endpoint definition. */
  readonly path: string
  /** The middleware that authenticates callers; none for public routes. */
  readonly middleware: HttpApiMiddleware.TagClassAny | undefined
  /** Whether the engine reads a body for this route: JSON, or a form (`application/x-www-form-urlencoded`, passed as text). */
  readonly takesBody: boolean | "form"
  readonly handle: (exchange: Exchange) => Effect.Effect<Reply, ApiFailure, R>
  /**
   * The answer given without running an effect (no fiber): on the spot, or
   * one promise away (a single query). The engine tries it first for a caller
   * known at once (`Authenticator.known`), with that caller's service.
   * Undefined, or a promise of it (or a rejected one), hands the request to
   * `handle`, which answers every request, refusals included. Only routes
   * without a body.
   */
  readonly immediate?: ((exchange: Exchange, caller: unknown) => ImmediateReply) | undefined
  /**
   * Whether the route answers this request at all, given its path parameters: one it does
   * not is passed over as if its path did not match (not even a 405). The buyer's page at a
   * payment's link answers browsers only; every other request there gets the 404 it got
   * before the page existed.
   */
  readonly accepts?:
    | ((params: Readonly<Record<string, string>>, request: EngineRequest) => boolean)
    | undefined
}

export interface RouteInput<E extends HttpApiEndpoint.HttpApiEndpoint.Any> {
  readonly path: HttpApiEndpoint.HttpApiEndpoint.PathParsed<E>
  readonly urlParams: HttpApiEndpoint.HttpApiEndpoint.UrlParams<E>
  readonly payload: HttpApiEndpoint.HttpApiEndpoint.Payload<E>
  readonly headers: HttpApiEndpoint.HttpApiEndpoint.Headers<E>
  readonly version: ApiVersion
  readonly method: string
  /** `METHOD /template`: the route part of an idempotency scope. */
  readonly routeKey: string
  /** The path as requested, parameters filled in (`/v1/merchants/mrch_…/settlements/crypto`). */
  readonly requestPath: string
  /** The body as parsed, before decoding: what an idempotency fingerprint covers. */
  readonly body: unknown
}

export type EndpointHandler<E extends HttpApiEndpoint.HttpApiEndpoint.Any, R> = (
  input: RouteInput<E>
) => Effect.Effect<Reply, ApiFailure, R>

/**
 * An endpoint's immediate answer (Route.immediate), from the same decoded
 * input as its handler (no body: routes that take one have none) and the
 * service its middleware provides (the Partner on the partner API). The
 * request is there for an answer held without a fiber (a long-poll), to
 * learn that its client went away (whenAbandoned).
 */
export type ImmediateHandler<E extends HttpApiEndpoint.HttpApiEndpoint.Any> = (
  input: Omit<RouteInput<E>, "payload" | "body"> & { readonly request: EngineRequest },
  caller: unknown
) => ImmediateReply

/** Immediate answers for some endpoints of a group, by endpoint name. */
export type GroupImmediateHandlers<G extends HttpApiGroup.HttpApiGroup.Any> = {
  readonly [Name in HttpApiEndpoint.HttpApiEndpoint.Name<
    HttpApiGroup.HttpApiGroup.Endpoints<G>
  >]?: ImmediateHandler<
    HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<G>, Name>
  >
}

/** A handler for every endpoint of a group, by endpoint name. */
export type GroupHandlers<G extends HttpApiGroup.HttpApiGroup.Any, R> = {
  readonly [Name in HttpApiEndpoint.HttpApiEndpoint.Name<
    HttpApiGroup.HttpApiGroup.Endpoints<G>
  >]: EndpointHandler<
    HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<G>, Name>,
    R
  >
}

export interface GroupImplementation<out R> {
  readonly group: string
  readonly handlers: Readonly<Record<string, EndpointHandler<never, R>>>
  readonly immediate?: Readonly<Record<string, ImmediateHandler<never>>> | undefined
}

/** The services a group's handlers need. */
export type ImplementationContext<I> = I extends GroupImplementation<infer R> ? R : never

/** The services the handlers of a record need. */
type HandlersContext<H> = {
  // biome-ignore lint/suspicious/noExplicitAny: only the context of each handler's effect is read
  [K in keyof H]: H[K] extends (input: any) => Effect.Effect<any, any, infer R> ? R : never
}[keyof H]

/** The handlers of one group of the definition, checked against its endpoints. */
export const implement = <
  G extends HttpApiGroup.HttpApiGroup.Any,
  // biome-ignore lint/suspicious/noExplicitAny: each handler's own context is inferred
  H extends GroupHandlers<G, any>
>(
  group: G,
  handlers: H,
  immediate?: GroupImmediateHandlers<G>
): GroupImplementation<HandlersContext<H>> => ({
  group: (group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps).identifier,
  handlers: handlers as unknown as Record<string, EndpointHandler<never, HandlersContext<H>>>,
  immediate: immediate as unknown as Record<string, ImmediateHandler<never>> | undefined
})

/** URL parameters as a record: a repeated name becomes an array. */
export const queryRecord = (query: URLSearchParams): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  for (const [name, value] of query) {
    const seen = out[name]
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

type Decoder<A = unknown> = (input: unknown) => Either.Either<A, RequestError>

const NO_INPUT: Decoder = () => Either.right(undefined)

// Endpoint schemas here need no services: their context is never.
const asSchema = (s: Schema.Schema.Any) => s as Schema.Schema<unknown, unknown>

/** Path parameters that do not decode name nothing: 404 with the path's code, whatever their shape. */
const pathDecoder = (schema: Option.Option<Schema.Schema.Any>): Decoder => {
  if (Option.isNone(schema)) return NO_INPUT
  const notFound = pathNotFoundOf(schema.value)
  if (notFound === undefined) throw new Error("a path schema needs pathOf(...)")
  const decode = Schema.decodeUnknownEither(asSchema(schema.value), { errors: "first" })
  return (input) =>
    Either.mapLeft(decode(input), (error) => {
      const field = toFieldIssues(error)[0]?.field ?? ""
      const value = (input as Record<string, string>)[field] ?? ""
      const noun = notFound.nouns[field] ?? "resource"
      return RequestError.of(notFound.error, notFound.message ?? `No ${noun} ${value}`)
    })
}

/**
 * Headers by their declared names (lower case), a value sent empty counted as
 * absent; a missing or invalid one answers its rule (ApiDocs.ts). Each header
 * is decoded on its own, and a plain string not at all: this runs on every
 * request. The version headers are settled by the engine before authentication.
 */
const headersDecoder = (schema: Option.Option<Schema.Schema.Any>) => {
  if (Option.isNone(schema)) return (_request: EngineRequest) => Either.right(undefined)
  const versions = VERSION_HEADER_NAMES as ReadonlyArray<string>
  const fields = structFields(schema.value)
    .filter((f) => !versions.includes(f.name))
    .map((f) => {
      const rule = HEADER_RULES[f.name]
      const header = headerName(f.name)
      const decode = SchemaAST.isStringKeyword(f.type)
        ? undefined
        : Schema.decodeUnknownEither(Schema.make<unknown, unknown, never>(f.type))
      return { ...f, rule, header, decode }
    })
  return (request: EngineRequest): Either.Either<Record<string, unknown>, RequestError> => {
    const out: Record<string, unknown> = {}
    for (const field of fields) {
      const value = request.header(field.name)?.trim()
      if (value === undefined || value === "") {
        if (field.optional) continue
        return Either.left(
          RequestError.missingHeader(
            field.rule?.missing ?? ApiErrors.InvalidParams,
            field.header,
            field.rule?.wanted
          )
        )
      }
      if (field.decode === undefined) {
        out[field.name] = value
        continue
      }
      const decoded = field.decode(value)
      if (Either.isLeft(decoded)) {
        const message = toFieldIssues(decoded.left)[0]?.message ?? "is invalid"
        return Either.left(
          RequestError.invalid(
            field.rule?.invalid ?? ApiErrors.InvalidParams,
            field.header,
            message
          )
        )
      }
      out[field.name] = decoded.right
    }
    return Either.right(out)
  }
}

const optionalDecoder = (
  schema: Option.Option<Schema.Schema.Any>,
  source: "body" | "query",
  unknownFields: "reject" | "ignore"
): Decoder =>
  Option.match(schema, {
    onNone: () => NO_INPUT,
    onSome: (s) => makeDecoder(asSchema(s), { source, unknownFields })
  })

/** The route of one endpoint: its request decoded by its own schemas, then its handler. */
const endpointRoute = <R>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
  handler: EndpointHandler<never, R>,
  options: {
    readonly unknownFields: "reject" | "ignore"
    readonly middleware: HttpApiMiddleware.TagClassAny | undefined
    readonly immediate: ImmediateHandler<never> | undefined
  }
): Route<R> => {
  const routeKey = `${endpoint.method} ${endpoint.path}`
  const decodePath = pathDecoder(endpoint.pathSchema)
  const decodeHeaders = headersDecoder(endpoint.headersSchema)
  const decodeQuery = optionalDecoder(endpoint.urlParamsSchema, "query", "ignore")
  const decodeBody = optionalDecoder(endpoint.payloadSchema, "body", options.unknownFields)
  const takesBody =
    Option.isSome(endpoint.payloadSchema) &&
    endpoint.method !== "GET" &&
    endpoint.method !== "DELETE"
  if (takesBody && options.immediate !== undefined) {
    throw new Error(`${routeKey}: a route that takes a body has no immediate answer`)
  }
  const answerAtOnce = options.immediate
  // Any input that does not decode goes to `handle`, which answers its refusal.
  const immediate =
    answerAtOnce === undefined
      ? undefined
      : (exchange: Exchange, caller: unknown): ImmediateReply => {
          const path = decodePath(exchange.pathParams)
          if (Either.isLeft(path)) return undefined
          const headers = decodeHeaders(exchange.request)
          if (Either.isLeft(headers)) return undefined
          const urlParams = decodeQuery(queryRecord(exchange.query))
          if (Either.isLeft(urlParams)) return undefined
          return answerAtOnce(
            {
              path: path.right,
              headers: headers.right,
              urlParams: urlParams.right,
              version: exchange.version,
              method: endpoint.method,
              routeKey,
              requestPath: exchange.path,
              request: exchange.request
            } as never,
            caller
          )
        }
  return {
    method: endpoint.method,
    path: endpoint.path,
    middleware: options.middleware,
    immediate,
    takesBody,
    handle: (exchange) => {
      const path = decodePath(exchange.pathParams)
      if (Either.isLeft(path)) return Effect.fail(path.left)
      const headers = decodeHeaders(exchange.request)
      if (Either.isLeft(headers)) return Effect.fail(headers.left)
      const urlParams = decodeQuery(queryRecord(exchange.query))
      if (Either.isLeft(urlParams)) return Effect.fail(urlParams.left)
      const payload = decodeBody(exchange.body)
      if (Either.isLeft(payload)) return Effect.fail(payload.left)
      return handler({
        path: path.right,
        headers: headers.right,
        urlParams: urlParams.right,
        payload: payload.right,
        version: exchange.version,
        method: endpoint.method,
        routeKey,
        requestPath: exchange.path,
        body: exchange.body
      } as never)
    }
  }
}

/**
 * Every endpoint of `api` as a route, each with its group's handler. An
 * endpoint without a handler, or whose errors were not declared with
 * `failsWith`, is refused here, at start.
 */
export const apiRoutes = <Implementations extends ReadonlyArray<GroupImplementation<unknown>>>(
  api: HttpApi.HttpApi.Any,
  implementations: Implementations
): ReadonlyArray<Route<ImplementationContext<Implementations[number]>>> => {
  type R = ImplementationContext<Implementations[number]>
  const byGroup = new Map(
    implementations.map((i) => [i.group, i.handlers as Record<string, EndpointHandler<never, R>>])
  )
  const immediateByGroup = new Map(implementations.map((i) => [i.group, i.immediate]))
  const answeredAtOnce = new Set<string>()
  const routes: Array<Route<R>> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint, middleware, mergedAnnotations }) => {
      const where = `${endpoint.method} ${endpoint.path} (${group.identifier}.${endpoint.name})`
      const handler = byGroup.get(group.identifier)?.[endpoint.name]
      if (handler === undefined) throw new Error(`${where} has no handler`)
      if (Option.isNone(Context.getOption(endpoint.annotations, ErrorsDeclared))) {
        throw new Error(`${where} does not declare its errors (failsWith)`)
      }
      if (immediateByGroup.get(group.identifier)?.[endpoint.name] !== undefined) {
        answeredAtOnce.add(`${group.identifier}.${endpoint.name}`)
      }
      // The endpoint's own middleware comes last and wins over its group's.
      const auth = [...middleware].filter((m) => m.provides !== undefined).at(-1)
      routes.push(
        endpointRoute(
          endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
          handler,
          {
            unknownFields: Option.getOrElse(
              Context.getOption(mergedAnnotations, UnknownBodyFields),
              () => "reject" as const
            ),
            middleware: auth,
            immediate: immediateByGroup.get(group.identifier)?.[endpoint.name]
          }
        )
      )
    }
  })
  for (const { group, immediate } of implementations) {
    for (const name of Object.keys(immediate ?? {})) {
      if (!answeredAtOnce.has(`${group}.${name}`)) {
        throw new Error(`${group}.${name}: an immediate answer for no endpoint of the group`)
      }
    }
  }
  return routes
}

/**
 * A route outside the API definition (health, documents, the sandbox): no key,
 * no decoding; with `takesBody`, the engine reads and parses a JSON body for it.
 */
export const publicRoute = <R>(
  method: string,
  path: string,
  handle: (exchange: Exchange) => Effect.Effect<Reply, ApiFailure, R>,
  options: {
    readonly takesBody?: boolean | "form"
    readonly accepts?: Route<R>["accepts"]
  } = {}
): Route<R> => ({
  method,
  path,
  middleware: undefined,
  takesBody: options.takesBody ?? false,
  handle,
  ...(options.accepts === undefined ? {} : { accepts: options.accepts })
})
