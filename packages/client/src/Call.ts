/**
 * One call of the Promise facade, as an Effect: the wire request (plain
 * strings, as JSON and query strings carry them) decoded with the endpoint's
 * own schemas from the definition, sent through the Effect client, and any
 * failure turned into one of the facade's errors (Errors.ts). A call that
 * carries an idempotency key is retried with that same key (see `retryable`).
 */
import { type HttpApiEndpoint, HttpClient, HttpClientError } from "@effect/platform"
import { HEADER_RULES, headerName, pathNotFoundOf, toFieldIssues } from "@pay/core/api"
import { Duration, Effect, FiberRef, Option, ParseResult, Schedule, Schema } from "effect"
import { endpointByName, type GroupName } from "./Definition.js"
import {
  type FieldIssue,
  PayApiError,
  type PayClientError,
  PayNetworkError,
  PayResponseError
} from "./Errors.js"

/** A request as the wire has it; each part is decoded with the endpoint's schema for it. */
export interface WireRequest {
  readonly path?: Readonly<Record<string, string>>
  readonly urlParams?: object
  readonly payload?: unknown
  readonly headers?: Readonly<Record<string, string | undefined>>
}

export interface CallSpec {
  readonly group: GroupName
  readonly name: string
  readonly request: WireRequest
  /**
   * Set on creates (the request's `idempotency-key` header carries it): it makes
   * a retry safe, and every error of the call reports it.
   */
  readonly idempotencyKey?: string | undefined
}

export interface RetryPolicy {
  /** Further attempts after the first, for calls with an idempotency key. */
  readonly retries: number
  /** The delay before the first retry; it doubles for each further one. */
  readonly retryDelayMs: number
}

/** The Effect client seen by name: group, then endpoint. */
export type DynamicClient = Readonly<
  Record<string, Readonly<Record<string, (request: object) => Effect.Effect<unknown, unknown>>>>
>

// ---- the status of the answer a failure came with

/**
 * The Effect client fails with the declared error body alone, without the
 * response; the facade's HttpClient records each response's status here so a
 * `PayApiError` can carry it (409 and 400 share `invalid_state`).
 */
const LastStatus = FiberRef.unsafeMake<number | undefined>(undefined)

/** For `transformClient`: remembers the status of every response in the calling fiber. */
export const recordStatus = HttpClient.tap((response) => FiberRef.set(LastStatus, response.status))

// ---- decoding the wire request with the definition's schemas

type Part = "path" | "urlParams" | "payload" | "headers"

// The codes the engine answers to the same mistakes (its router decodes a body to
// `params_validation`, a query to `invalid_params`; paths and headers follow their own rules).
const PART_CODE = {
  path: "invalid_params",
  urlParams: "invalid_params",
  payload: "params_validation",
  headers: "invalid_params"
} as const

const PART_NAME: Record<Part, string> = {
  path: "path",
  urlParams: "query",
  payload: "body",
  headers: "headers"
}

/** The engine's issue shape, the whole input named by its part (`body`, `query`, ...). */
const toIssues = (part: Part, error: ParseResult.ParseError): ReadonlyArray<FieldIssue> =>
  toFieldIssues(error, PART_NAME[part])

const localError = (
  part: Part,
  error: ParseResult.ParseError,
  context: { readonly operation: string; readonly idempotencyKey?: string | undefined },
  endpoint?: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
) => {
  const issues = toIssues(part, error)
  // As the engine answers: a path id that does not decode names nothing (404, the path's code);
  // a header follows its rule (a missing Merchant-Id is missing_merchant_id).
  const notFound =
    part === "path" && endpoint && Option.isSome(endpoint.pathSchema)
      ? pathNotFoundOf(endpoint.pathSchema.value)
      : undefined
  if (notFound !== undefined) {
    const field = issues[0]?.field ?? ""
    return new PayApiError({
      status: notFound.error.status,
      code: notFound.error.code,
      message: notFound.message ?? `No ${notFound.nouns[field] ?? "resource"}`,
      source: "client",
      ...context
    })
  }
  const rule = part === "headers" ? HEADER_RULES[issues[0]?.field ?? ""] : undefined
  if (rule !== undefined) {
    const missing = issues[0]?.message === "is required"
    const header = headerName(issues[0]?.field ?? "")
    return new PayApiError({
      status: 400,
      code: (missing ? rule.missing : rule.invalid).code,
      message: missing
        ? `Missing ${header} header: send ${rule.wanted}`
        : `${header}: ${issues[0]?.message}`,
      issues: issues.map((i) => ({ field: headerName(i.field), message: i.message })),
      source: "client",
      ...context
    })
  }
  return new PayApiError({
    status: 400,
    code: PART_CODE[part],
    message: `Invalid ${PART_NAME[part]}: ${issues.map((i) => `${i.field} ${i.message}`).join("; ")}`,
    issues,
    source: "client",
    ...context
  })
}

/** Query values are strings on the wire; numbers are accepted for convenience and written out. */
const stringifyNumbers = (params: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(params)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [
        k,
        typeof v === "number"
          ? String(v)
          : Array.isArray(v)
            ? v.map((x) => (typeof x === "number" ? String(x) : x))
            : v
      ])
  )

const withoutUndefined = (headers: Readonly<Record<string, string | undefined>>) =>
  Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined))

const decodeRequest = (spec: CallSpec, operation: string) =>
  Effect.gen(function* () {
    const endpoint = endpointByName(spec.group, spec.name)
    const wire: Record<Part, unknown> = {
      path: spec.request.path ?? {},
      urlParams: stringifyNumbers(spec.request.urlParams ?? {}),
      payload: spec.request.payload,
      headers: withoutUndefined(spec.request.headers ?? {})
    }
    // The definition's schemas need no services (the Effect client runs them without any).
    const schemas = {
      path: endpoint.pathSchema,
      urlParams: endpoint.urlParamsSchema,
      payload: endpoint.payloadSchema,
      headers: endpoint.headersSchema
    } as Record<Part, Option.Option<Schema.Schema<unknown, unknown>>>
    const decoded: Partial<Record<Part, unknown>> = {}
    for (const part of ["path", "urlParams", "payload", "headers"] as const) {
      const schema = schemas[part]
      if (Option.isNone(schema)) continue
      decoded[part] = yield* Schema.decodeUnknown(schema.value, {
        errors: "all",
        // The engine refuses unknown body fields (they are usually typos); do the same.
        onExcessProperty: part === "payload" ? "error" : "ignore"
      })(wire[part]).pipe(
        Effect.mapError((error) =>
          localError(part, error, { operation, idempotencyKey: spec.idempotencyKey }, endpoint)
        )
      )
    }
    return decoded
  })

// ---- failures of the Effect client, as the facade's errors

const readBody = (response: { readonly text: Effect.Effect<string, unknown> }) =>
  Effect.map(Effect.option(response.text), (text) => {
    if (Option.isNone(text)) return undefined
    try {
      return JSON.parse(text.value) as unknown
    } catch {
      return text.value
    }
  })

const isErrorBody = (
  u: unknown
): u is {
  readonly code: string
  readonly message: string
  readonly issues?: ReadonlyArray<FieldIssue>
} =>
  typeof u === "object" &&
  u !== null &&
  typeof (u as { code?: unknown }).code === "string" &&
  typeof (u as { message?: unknown }).message === "string"

const toClientError = (
  error: unknown,
  status: number | undefined,
  context: { readonly operation: string; readonly idempotencyKey?: string | undefined }
): Effect.Effect<PayClientError> => {
  if (error instanceof PayApiError) return Effect.succeed(error)
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return Effect.succeed(
        new PayNetworkError({
          reason: "transport",
          message: `${context.operation}: no answer from ${error.request.url} (${error.reason})`,
          cause: error,
          ...context
        })
      )
    }
    // The definition declares no answer of this status for the endpoint.
    return Effect.map(
      readBody(error.response),
      (body) =>
        new PayResponseError({
          status: error.response.status,
          body,
          message: `${context.operation}: an undeclared ${error.response.status} answer${
            isErrorBody(body) ? ` (${body.code}: ${body.message})` : ""
          }`,
          cause: error,
          ...context
        })
    )
  }
  if (ParseResult.isParseError(error)) {
    return Effect.succeed(
      status === undefined
        ? // Not sent: the request could not be encoded (the decode above normally catches it first).
          localError("payload", error, context)
        : new PayResponseError({
            status,
            body: undefined,
            message: `${context.operation}: the ${status} answer does not match the definition: ${error.message}`,
            cause: error,
            ...context
          })
    )
  }
  if (isErrorBody(error)) {
    return Effect.succeed(
      new PayApiError({
        status: status ?? 0,
        code: error.code,
        message: error.message,
        issues: error.issues,
        source: "server",
        ...context
      })
    )
  }
  return Effect.succeed(
    new PayResponseError({
      status: status ?? 0,
      body: error,
      message: `${context.operation}: an answer the client cannot read`,
      cause: error,
      ...context
    })
  )
}

// ---- retries

/**
 * Worth another attempt with the same idempotency key: no answer at all (the
 * first attempt may or may not have reached the engine; the key makes the
 * retry return its result instead of acting twice), a 5xx (the engine stores
 * no idempotent result for those, so the retry runs the request again), and
 * 409 `idempotency_conflict` (the first attempt with this key is still
 * running; a retry waits for its result). A key reused with a different
 * request also answers `idempotency_conflict`; retrying it answers the same,
 * so it costs only the bounded delay. Validation and other 4xx answers are
 * final.
 */
export const retryable = (error: PayClientError): boolean => {
  switch (error._tag) {
    case "PayNetworkError":
      return error.reason === "transport"
    case "PayApiError":
      return (
        error.source === "server" && (error.status >= 500 || error.code === "idempotency_conflict")
      )
    case "PayResponseError":
      return error.status >= 500
  }
}

/**
 * The call as an Effect that fails only with a `PayClientError`. Calls with an
 * idempotency key are retried by `policy`; the others are sent once.
 */
export const runCall = (
  client: DynamicClient,
  spec: CallSpec,
  policy: RetryPolicy
): Effect.Effect<unknown, PayClientError> => {
  const operation = `${spec.group}.${spec.name}`
  const context = { operation, idempotencyKey: spec.idempotencyKey }
  const method = client[spec.group]?.[spec.name]
  if (method === undefined) return Effect.die(new Error(`The client has no method ${operation}`))
  const attempt = Effect.flatMap(decodeRequest(spec, operation), (request) =>
    Effect.locally(
      method(request).pipe(
        Effect.catchAll((error) =>
          Effect.flatMap(FiberRef.get(LastStatus), (status) =>
            Effect.flip(toClientError(error, status, context))
          )
        )
      ),
      LastStatus,
      undefined
    )
  )
  if (spec.idempotencyKey === undefined || policy.retries <= 0) return attempt
  return Effect.retry(attempt, {
    schedule: Schedule.exponential(Duration.millis(policy.retryDelayMs)).pipe(
      Schedule.intersect(Schedule.recurs(policy.retries))
    ),
    while: retryable
  })
}
