/**
 * Routes served by the engine, built from the HttpApi endpoint definitions so
 * that the served paths, the decoding and the OpenAPI document cannot drift:
 * the endpoint's own path, URL-parameter and payload schemas decode the
 * request, and the handler receives typed values.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import { Effect, Either, Option, type Schema } from "effect"
import type { WalletIdentity } from "../gateway/Gateway.js"
import type { Partner } from "../partners/Partner.js"
import type { ApiVersion } from "../shared/ApiVersion.js"
import { makeDecoder } from "./Decode.js"
import type { ApiFailure } from "./ErrorResponses.js"
import type { EngineRequest, Reply } from "./Exchange.js"
import type { RequestError } from "./RequestError.js"

/** What the engine hands a route after matching, authenticating and reading the body. */
export interface Exchange {
  readonly request: EngineRequest
  /** The decoded URL path. */
  readonly path: string
  readonly pathParams: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** Parsed JSON body; undefined when there was none. */
  readonly body: unknown
  readonly partner: Partner | undefined
  /** The wallet app of a gateway request. */
  readonly wallet: WalletIdentity | undefined
  readonly version: ApiVersion
}

/**
 * `partner-legacy` also takes the key from `X-Api-Key` (the deprecated legacy
 * route); `wallet` is a wallet app's `Api-Key` or `App-Id` (the gateway).
 */
export type Auth = "partner" | "partner-legacy" | "wallet" | "none"

export interface Route<R> {
  readonly method: string
  /** Template with `:name` segments, as in the endpoint definition. */
  readonly path: string
  readonly auth: Auth
  /** Whether the engine reads a body for this route: JSON, or a form (`application/x-www-form-urlencoded`, passed as text). */
  readonly takesBody: boolean | "form"
  readonly handle: (exchange: Exchange) => Effect.Effect<Reply, ApiFailure, R>
}

export interface RouteInput<E extends HttpApiEndpoint.HttpApiEndpoint.Any> {
  readonly path: HttpApiEndpoint.HttpApiEndpoint.PathParsed<E>
  readonly urlParams: HttpApiEndpoint.HttpApiEndpoint.UrlParams<E>
  readonly payload: HttpApiEndpoint.HttpApiEndpoint.Payload<E>
  /** The partner of a partner route (undefined on wallet routes). */
  readonly partner: Partner
  /** The wallet app of a wallet route (undefined on partner routes). */
  readonly wallet: WalletIdentity
  readonly version: ApiVersion
  readonly method: string
  /** `METHOD /template`: the route part of an idempotency scope. */
  readonly routeKey: string
  /** The path as requested, parameters filled in (`/v1/merchants/mrch_…/settlements/crypto`). */
  readonly requestPath: string
  readonly header: (name: string) => string | undefined
  readonly body: unknown
}

export interface RouteOptions {
  /** Partner routes reject unknown body fields; wallet routes ignore them (WIRE.md). */
  readonly unknownFields?: "reject" | "ignore"
  readonly auth?: "partner" | "partner-legacy"
}

/** URL parameters as a record: a repeated name becomes an array. */
export const queryRecord = (query: URLSearchParams): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  for (const [name, value] of query) {
    const seen = out[name]
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

type Decoder = (input: unknown) => Either.Either<unknown, RequestError>

const decoderFor = (
  schema: Option.Option<Schema.Schema.Any>,
  source: "body" | "query" | "path",
  unknownFields: "reject" | "ignore"
): Decoder =>
  Option.match(schema, {
    onNone: () => () => Either.right(undefined),
    // Endpoint schemas here need no services: their context is never.
    onSome: (s) => makeDecoder(s as Schema.Schema<unknown, unknown>, { source, unknownFields })
  })

/** A route for one endpoint of the HttpApi definition, its request decoded by the endpoint's schemas. */
const endpointRoute = <E extends HttpApiEndpoint.HttpApiEndpoint.Any, R>(
  endpoint: E,
  handler: (input: RouteInput<E>) => Effect.Effect<Reply, ApiFailure, R>,
  options: { readonly unknownFields: "reject" | "ignore"; readonly auth: Auth }
): Route<R> => {
  const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  const unknownFields = options.unknownFields
  const routeKey = `${e.method} ${e.path}`
  const decodePath = decoderFor(e.pathSchema, "path", "ignore")
  const decodeQuery = decoderFor(e.urlParamsSchema, "query", "ignore")
  const decodeBody = decoderFor(e.payloadSchema, "body", unknownFields)
  return {
    method: e.method,
    path: e.path,
    auth: options.auth,
    takesBody: Option.isSome(e.payloadSchema) && e.method !== "GET" && e.method !== "DELETE",
    handle: (exchange) => {
      const path = decodePath(exchange.pathParams)
      if (Either.isLeft(path)) return Effect.fail(path.left)
      const urlParams = decodeQuery(queryRecord(exchange.query))
      if (Either.isLeft(urlParams)) return Effect.fail(urlParams.left)
      const payload = decodeBody(exchange.body)
      if (Either.isLeft(payload)) return Effect.fail(payload.left)
      return handler({
        path: path.right,
        urlParams: urlParams.right,
        payload: payload.right,
        partner: exchange.partner as Partner,
        wallet: exchange.wallet as WalletIdentity,
        version: exchange.version,
        method: e.method,
        routeKey,
        requestPath: exchange.path,
        header: exchange.request.header,
        body: exchange.body
      } as RouteInput<E>)
    }
  }
}

/** A partner-authenticated route for one endpoint of the HttpApi definition. */
export const partnerRoute = <E extends HttpApiEndpoint.HttpApiEndpoint.Any, R>(
  endpoint: E,
  handler: (input: RouteInput<E>) => Effect.Effect<Reply, ApiFailure, R>,
  options: RouteOptions = {}
): Route<R> =>
  endpointRoute(endpoint, handler, {
    unknownFields: options.unknownFields ?? "reject",
    auth: options.auth ?? "partner"
  })

/** A wallet route of the gateway: a wallet app's key or id; unknown body fields are ignored. */
export const walletRoute = <E extends HttpApiEndpoint.HttpApiEndpoint.Any, R>(
  endpoint: E,
  handler: (input: RouteInput<E>) => Effect.Effect<Reply, ApiFailure, R>
): Route<R> => endpointRoute(endpoint, handler, { unknownFields: "ignore", auth: "wallet" })

/**
 * A route outside the partner API (health, documents, the sandbox): no key,
 * no decoding; with `takesBody`, the engine reads and parses a JSON body for it.
 */
export const publicRoute = <R>(
  method: string,
  path: string,
  handle: (exchange: Exchange) => Effect.Effect<Reply, ApiFailure, R>,
  options: { readonly takesBody?: boolean | "form" } = {}
): Route<R> => ({ method, path, auth: "none", takesBody: options.takesBody ?? false, handle })
