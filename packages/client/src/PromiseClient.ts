/**
 * The Promise facade, for callers who do not use Effect:
 *
 *   const pay = createPayClient({ baseUrl, apiKey })
 *   const { merchant } = await pay.merchants.create({ merchantName: "Shop", merchantEmail: "a@shop.example" })
 *
 * Inputs are the wire's (plain string ids, `{unit, value}` amounts, query
 * values as strings or numbers); each is decoded with the definition's schema
 * for it before anything is sent. Results are the success schemas' decoded
 * types. Failures reject with a `PayApiError` (typed by the endpoint's declared
 * codes: narrow with the method's `isError`), a `PayNetworkError` or a
 * `PayResponseError` (Errors.ts).
 *
 * Idempotency and retries: every create (merchants, settlements, payments,
 * refunds) sends an `Idempotency-Key`: the caller's `idempotencyKey` option, or
 * one generated with `crypto.randomUUID()` per call. The facade itself retries
 * a create with that same key when the first attempt got no answer, a 5xx, or
 * 409 `idempotency_conflict` (an attempt with the key still running), up to
 * `retries` more times (default 2) with a doubling delay from `retryDelayMs`
 * (default 250 ms). The engine answers a replay with the first result, so a
 * create acts once however many attempts it took. When the retries are spent,
 * the rejection carries the key (`error.idempotencyKey`): call again with
 * `{ idempotencyKey: error.idempotencyKey }` to keep that guarantee. To survive
 * a crash of your own process, derive the key from your own record (an order
 * id) and pass it. Reads, updates, deletes and cancels are sent once.
 */
import { FetchHttpClient, type HttpClient } from "@effect/platform"
import type { CreateApiKeyRequest, RotateApiKeyRequest } from "@pay/core/api/keys"
import type {
  CreateMerchantRequest,
  ListMerchantsParams,
  UpdateMerchantRequest
} from "@pay/core/api/merchants"
import type {
  CreatePaymentRequest,
  ListPaymentsParams,
  MerchantPaymentsParams
} from "@pay/core/api/payments"
import type { CreateCryptoSettlementsRequest } from "@pay/core/api/settlements"
import { Cause, Effect, Exit, Layer, Option, type Schema } from "effect"
import {
  type CallSpec,
  type DynamicClient,
  recordStatus,
  runCall,
  type WireRequest
} from "./Call.js"
import type {
  Assert,
  Endpoint,
  EndpointName,
  Equals,
  ErrorCode,
  GroupName,
  LocalValidationCode,
  Success
} from "./Definition.js"
import { PayApiError, PayNetworkError } from "./Errors.js"
import { makePayClient } from "./PayClient.js"

export interface CreatePayClientOptions {
  /** The engine's address, e.g. `https://pay.example.com`. */
  readonly baseUrl: string | URL
  /** The partner key, sent as `Api-Key`. */
  readonly apiKey: string
  /** A fetch to send with (tests, proxies, older runtimes); default: the global one. */
  readonly fetch?: typeof globalThis.fetch | undefined
  /** Further attempts of a create, with the same idempotency key. Default 2; 0 turns retries off. */
  readonly retries?: number | undefined
  /** The delay before a create's first retry, doubling for each further one. Default 250 ms. */
  readonly retryDelayMs?: number | undefined
}

export interface CallOptions {
  /** Ends the call (and any retry) early; it then rejects with a `PayNetworkError` "aborted". */
  readonly signal?: AbortSignal | undefined
}

export interface CreateOptions extends CallOptions {
  /**
   * At most 255 characters. Default: a fresh `crypto.randomUUID()` for this
   * call, which the facade's own retries reuse and every rejection reports.
   */
  readonly idempotencyKey?: string | undefined
}

/** A request part on the wire: the schema's encoded side. */
type Wire<S extends Schema.Schema.Any> = Schema.Schema.Encoded<S>

/** Query values: the encoded strings, or a number where the decoded value is one (`limit: 20`). */
type Query<S extends Schema.Schema.Any> = Loosen<Schema.Schema.Encoded<S>, Schema.Schema.Type<S>>
type Loosen<E, T> = {
  readonly [K in keyof E]: K extends keyof T
    ? NonNullable<T[K]> extends number
      ? E[K] | number
      : E[K]
    : E[K]
}

// The wire types above come from the groups' schema modules; these checks fail to compile if
// an endpoint of the definition stops using the schema its facade method is typed with.
export type _WireSchemasMatchTheDefinition = [
  Assert<Equals<Schema.Schema.Type<typeof CreateMerchantRequest>, Payload<"merchants", "create">>>,
  Assert<Equals<Schema.Schema.Type<typeof UpdateMerchantRequest>, Payload<"merchants", "update">>>,
  Assert<Equals<Schema.Schema.Type<typeof ListMerchantsParams>, UrlParams<"merchants", "list">>>,
  Assert<
    Equals<
      Schema.Schema.Type<typeof CreateCryptoSettlementsRequest>,
      Payload<"settlements", "createCrypto">
    >
  >,
  Assert<Equals<Schema.Schema.Type<typeof CreatePaymentRequest>, Payload<"payments", "create">>>,
  Assert<Equals<Schema.Schema.Type<typeof CreateApiKeyRequest>, Payload<"apiKeys", "create">>>,
  Assert<Equals<Schema.Schema.Type<typeof RotateApiKeyRequest>, Payload<"apiKeys", "rotate">>>,
  Assert<Equals<Schema.Schema.Type<typeof ListPaymentsParams>, UrlParams<"payments", "list">>>,
  Assert<
    Equals<
      Schema.Schema.Type<typeof MerchantPaymentsParams>,
      UrlParams<"payments", "merchantPayments">
    >
  >
]
type Payload<G extends GroupName, N extends EndpointName<G>> =
  Endpoint<G, N> extends {
    readonly payloadSchema: Option.Option<Schema.Schema<infer P, infer _I, infer _R>>
  }
    ? P
    : never
type UrlParams<G extends GroupName, N extends EndpointName<G>> =
  Endpoint<G, N> extends {
    readonly urlParamsSchema: Option.Option<Schema.Schema<infer P, infer _I, infer _R>>
  }
    ? P
    : never

/** The rejection of a method whose server-side failures are its endpoint's declared errors. */
export type ApiErrorOf<G extends GroupName, N extends EndpointName<G>> = PayApiError<
  ErrorCode<G, N> | LocalValidationCode
>

/** A facade method: the call itself, and a guard that narrows a rejection to its typed `PayApiError`. */
export type Method<
  G extends GroupName,
  N extends EndpointName<G>,
  Args extends ReadonlyArray<unknown>
> = ((...args: Args) => Promise<Success<G, N>>) & {
  /** The definition's "group.endpoint" this method calls. */
  readonly operation: `${G}.${N}`
  readonly isError: (error: unknown) => error is ApiErrorOf<G, N>
}

interface Built extends CallOptions {
  readonly request: WireRequest
  readonly idempotencyKey?: string | undefined
}

const keyOf = (options: CreateOptions | undefined): string =>
  options?.idempotencyKey ?? globalThis.crypto.randomUUID()

/**
 * The Promise facade over `makePayClient`. The client is built once; each call
 * runs its own Effect.
 */
export const createPayClient = (options: CreatePayClientOptions) => {
  const httpClient: Layer.Layer<HttpClient.HttpClient> =
    options.fetch === undefined
      ? FetchHttpClient.layer
      : FetchHttpClient.layer.pipe(
          Layer.provide(Layer.succeed(FetchHttpClient.Fetch, options.fetch))
        )
  const client = Effect.runSync(
    makePayClient({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      transformClient: recordStatus
    }).pipe(Effect.provide(httpClient))
  ) as unknown as DynamicClient
  const policy = {
    retries: options.retries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 250
  }

  const run = async (spec: CallSpec, signal: AbortSignal | undefined): Promise<unknown> => {
    const exit = await Effect.runPromiseExit(
      runCall(client, spec, policy),
      signal === undefined ? {} : { signal }
    )
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) throw failure.value
    if (Cause.isInterruptedOnly(exit.cause)) {
      throw new PayNetworkError({
        reason: "aborted",
        message: `${spec.group}.${spec.name}: aborted`,
        operation: `${spec.group}.${spec.name}`,
        idempotencyKey: spec.idempotencyKey
      })
    }
    throw Cause.squash(exit.cause)
  }

  const method = <
    G extends GroupName,
    N extends EndpointName<G>,
    Args extends ReadonlyArray<unknown>
  >(
    group: G,
    name: N,
    build: (...args: Args) => Built
  ): Method<G, N, Args> => {
    const operation = `${group}.${name}` as const
    const call = (...args: Args) => {
      const built = build(...args)
      return run(
        { group, name, request: built.request, idempotencyKey: built.idempotencyKey },
        built.signal
      ) as Promise<Success<G, N>>
    }
    return Object.assign(call, {
      operation,
      isError: (error: unknown): error is ApiErrorOf<G, N> =>
        error instanceof PayApiError && error.operation === operation
    })
  }

  const created = (options: CreateOptions | undefined, request: (key: string) => WireRequest) => {
    const idempotencyKey = keyOf(options)
    return { request: request(idempotencyKey), idempotencyKey, signal: options?.signal }
  }

  return {
    merchants: {
      create: method(
        "merchants",
        "create",
        (body: Wire<typeof CreateMerchantRequest>, options?: CreateOptions) =>
          created(options, (key) => ({ payload: body, headers: { "idempotency-key": key } }))
      ),
      list: method(
        "merchants",
        "list",
        (params: Query<typeof ListMerchantsParams> = {}, options?: CallOptions) => ({
          request: { urlParams: params },
          signal: options?.signal
        })
      ),
      get: method("merchants", "get", (merchantId: string, options?: CallOptions) => ({
        request: { path: { merchantId } },
        signal: options?.signal
      })),
      update: method(
        "merchants",
        "update",
        (merchantId: string, patch: Wire<typeof UpdateMerchantRequest>, options?: CallOptions) => ({
          request: { path: { merchantId }, payload: patch },
          signal: options?.signal
        })
      ),
      delete: method("merchants", "delete", (merchantId: string, options?: CallOptions) => ({
        request: { path: { merchantId } },
        signal: options?.signal
      }))
    },
    settlements: {
      create: method(
        "settlements",
        "createCrypto",
        (
          merchantId: string,
          settlements: Wire<typeof CreateCryptoSettlementsRequest>["settlements"],
          options?: CreateOptions
        ) =>
          created(options, (key) => ({
            path: { merchantId },
            payload: { settlements },
            headers: { "idempotency-key": key }
          }))
      ),
      list: method("settlements", "list", (merchantId: string, options?: CallOptions) => ({
        request: { path: { merchantId } },
        signal: options?.signal
      })),
      update: method(
        "settlements",
        "updateCrypto",
        (merchantId: string, id: string, destination: string, options?: CallOptions) => ({
          request: { path: { merchantId, id }, payload: { destination } },
          signal: options?.signal
        })
      ),
      delete: method(
        "settlements",
        "deleteCrypto",
        (merchantId: string, id: string, options?: CallOptions) => ({
          request: { path: { merchantId, id } },
          signal: options?.signal
        })
      )
    },
    payments: {
      create: method(
        "payments",
        "create",
        (merchantId: string, body: Wire<typeof CreatePaymentRequest>, options?: CreateOptions) =>
          created(options, (key) => ({
            payload: body,
            headers: { "merchant-id": merchantId, "idempotency-key": key }
          }))
      ),
      get: method("payments", "get", (paymentId: string, options?: CallOptions) => ({
        request: { path: { id: paymentId } },
        signal: options?.signal
      })),
      /**
       * The status; with `maxPollMs`, the engine holds the answer until the
       * status changes or that time passes (capped by the engine, 30 s by default).
       */
      status: method(
        "payments",
        "status",
        (
          paymentId: string,
          options: CallOptions & { readonly merchantId: string; readonly maxPollMs?: number }
        ) => ({
          request: {
            path: { id: paymentId },
            urlParams: options.maxPollMs === undefined ? {} : { maxPollMs: options.maxPollMs },
            headers: { "merchant-id": options.merchantId }
          },
          signal: options.signal
        })
      ),
      cancel: method(
        "payments",
        "cancel",
        (paymentId: string, options: CallOptions & { readonly merchantId: string }) => ({
          request: { path: { id: paymentId }, headers: { "merchant-id": options.merchantId } },
          signal: options.signal
        })
      ),
      list: method(
        "payments",
        "list",
        (params: Query<typeof ListPaymentsParams> = {}, options?: CallOptions) => ({
          request: { urlParams: params },
          signal: options?.signal
        })
      ),
      /** A merchant's payments (`GET /v1/merchants/payments` with `Merchant-Id`). */
      listForMerchant: method(
        "payments",
        "merchantPayments",
        (
          merchantId: string,
          params: Query<typeof MerchantPaymentsParams> = {},
          options?: CallOptions
        ) => ({
          request: { urlParams: params, headers: { "merchant-id": merchantId } },
          signal: options?.signal
        })
      )
    },
    refunds: {
      create: method("payments", "refund", (paymentId: string, options?: CreateOptions) =>
        created(options, (key) => ({
          payload: { paymentId },
          headers: { "idempotency-key": key }
        }))
      )
    },
    /** The partner's own API keys: a new key's `secret` is in the create's and rotate's answer only. */
    apiKeys: {
      create: method(
        "apiKeys",
        "create",
        (body: Wire<typeof CreateApiKeyRequest> = {}, options?: CreateOptions) =>
          created(options, (key) => ({ payload: body, headers: { "idempotency-key": key } }))
      ),
      list: method("apiKeys", "list", (options?: CallOptions) => ({
        request: {},
        signal: options?.signal
      })),
      revoke: method("apiKeys", "revoke", (id: string, options?: CallOptions) => ({
        request: { path: { id } },
        signal: options?.signal
      })),
      rotate: method(
        "apiKeys",
        "rotate",
        (id: string, body: Wire<typeof RotateApiKeyRequest> = {}, options?: CreateOptions) =>
          created(options, (key) => ({
            path: { id },
            payload: body,
            headers: { "idempotency-key": key }
          }))
      )
    }
  }
}

/** The Promise facade's type. */
export type PayPromiseClient = ReturnType<typeof createPayClient>
