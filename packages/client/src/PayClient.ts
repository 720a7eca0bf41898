/**
 * The Effect form of the client: `HttpApiClient.make(PayApi)`, every request
 * carrying the partner key in `Api-Key`. Methods are the definition's
 * (`client.merchants.create({ payload, headers })`), take the schemas' decoded
 * types (branded ids, parsed amounts) and fail with the declared error bodies,
 * `HttpClientError` or `ParseError`. Runtime-neutral: provide any
 * `HttpClient` (`FetchHttpClient.layer` works on Node, Bun, Deno and browsers).
 */
import { type HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { PayApi } from "@pay/core/api"
import { Context, type Effect, Layer, Redacted } from "effect"

type Definition = typeof PayApi
type GroupsOf<A> =
  A extends HttpApi.HttpApi<string, infer Groups, infer _E, infer _R> ? Groups : never
type ErrorOf<A> = A extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never

/**
 * The client `makePayClient` builds: one object per group, one method per endpoint. Spelled out
 * from the definition's type, so the published declarations name it through `@pay/core/api`.
 */
export interface PayApiClient
  extends HttpApiClient.Client<GroupsOf<Definition>, ErrorOf<Definition>, never> {}

export interface PayClientOptions {
  /** The engine's address, e.g. `https://pay.example.com` (no trailing path is needed). */
  readonly baseUrl: string | URL
  /** The partner key, sent as `Api-Key` on every request. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** Applied after the key is set (retries, tracing, a response tap). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

const trimBaseUrl = (baseUrl: string | URL): string => baseUrl.toString().replace(/\/+$/, "")

export const makePayClient = (
  options: PayClientOptions
): Effect.Effect<PayApiClient, never, HttpClient.HttpClient> => {
  const apiKey = Redacted.isRedacted(options.apiKey)
    ? Redacted.value(options.apiKey)
    : options.apiKey
  // No trace headers (b3, traceparent) unless the caller asks for them in transformClient:
  // a partner's trace ids are not the engine's business.
  const withKey = (client: HttpClient.HttpClient) =>
    HttpClient.withTracerPropagation(
      HttpClient.mapRequest(client, HttpClientRequest.setHeader("api-key", apiKey)),
      false
    )
  return HttpApiClient.make(PayApi, {
    baseUrl: trimBaseUrl(options.baseUrl),
    transformClient: (client) =>
      options.transformClient ? options.transformClient(withKey(client)) : withKey(client)
  })
}

/** The client as a service, for programs that take it from their context. */
export class PayClient extends Context.Tag("@pay/client/PayClient")<PayClient, PayApiClient>() {
  /** Needs an `HttpClient` (e.g. `FetchHttpClient.layer`). */
  static readonly layer = (
    options: PayClientOptions
  ): Layer.Layer<PayClient, never, HttpClient.HttpClient> =>
    Layer.effect(PayClient, makePayClient(options))
}
