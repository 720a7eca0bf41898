/**
 * Pieces of the HttpApi definition shared by every group, and the rules that
 * make the definition the single truth of the HTTP edge: the router decodes
 * each request with its endpoint's schemas and answers with the table's
 * errors (ErrorResponses.ts), and `failsWith` declares on each endpoint every
 * error it can answer, those its handler names and those its shape implies
 * (a body can be malformed, a path id can name nothing, a header can be
 * missing), so the document and the typed client cannot drift from the
 * engine.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import { Context, Option, Schema, SchemaAST } from "effect"
import { API_VERSIONS } from "../shared/ApiVersion.js"
import { type ApiErrorSpec, ApiErrors, type ErrorBodyOf } from "./ErrorResponses.js"

/** The error body schemas of several rows, answered with one status (a middleware's failure). */
export const failureOf = (...specs: ReadonlyArray<ApiErrorSpec>) =>
  Schema.Union(...specs.map((s) => s.schema))

// ---- headers

/** The header that picks a version, strongest first (WIRE.md section 3). */
export const VERSION_HEADER_NAMES = ["pay-version", "wcp-version", "api-version"] as const

const Version = Schema.optional(
  Schema.Literal(...API_VERSIONS).annotations({
    description: "API version for this request; defaults to the partner's pinned version"
  })
)

/**
 * Headers every route reads (names are case-insensitive on the wire). The
 * engine settles the version before authenticating (an unknown one is 400
 * `unknown_api_version`), by precedence: only the strongest one sent counts.
 */
export const VersionHeaders = Schema.Struct({
  "pay-version": Version,
  "wcp-version": Version,
  "api-version": Version
})

/** What a missing or invalid value of a header answers; one rule per header name. */
export interface HeaderRule {
  readonly missing: ApiErrorSpec
  readonly invalid: ApiErrorSpec
  /** What to send, said when it is missing: "the merchant's id (mrch_…)". */
  readonly wanted: string
}

/** The longest `Idempotency-Key` accepted (SPEC.md section 8). */
export const MAX_KEY_LENGTH = 255

export const HEADER_RULES: Readonly<Record<string, HeaderRule>> = {
  "merchant-id": {
    missing: ApiErrors.MissingMerchantId,
    invalid: ApiErrors.InvalidParams,
    wanted: "the id of the merchant the request is for (mrch_…)"
  },
  "idempotency-key": {
    missing: ApiErrors.MissingIdempotencyKey,
    invalid: ApiErrors.ParamsValidation,
    wanted: `a new unique string of at most ${MAX_KEY_LENGTH} characters for each request (a UUID), the same one when retrying it`
  }
}

export const IdempotencyKeyHeader = Schema.String.pipe(
  Schema.maxLength(MAX_KEY_LENGTH, {
    message: () => `must be at most ${MAX_KEY_LENGTH} characters`
  })
)

export const IdempotentHeaders = Schema.Struct({
  "idempotency-key": IdempotencyKeyHeader.annotations({
    description:
      "Required. A replay with the same key and request returns the first response; the same key with another request is 409 idempotency_conflict."
  }),
  ...VersionHeaders.fields
})

/** Header names as documents show them: `Merchant-Id`, `WCP-Version`. */
export const headerName = (name: string): string =>
  name === "wcp-version"
    ? "WCP-Version"
    : name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())

// ---- paths

/** What a path whose parameters name nothing answers: 404 with this row's code. */
export interface PathNotFound {
  readonly error: ApiErrorSpec
  /** Per parameter, what it names (`merchant`): the message says "No merchant …". */
  readonly nouns: Readonly<Record<string, string>>
  /** Said instead of "No <noun> <value>". */
  readonly message?: string
}

export const PathNotFoundId: unique symbol = Symbol.for("@pay/core/PathNotFound")

/** A path schema whose values, when they do not decode, name nothing (404, whatever their shape). */
export const pathOf = <Fields extends Schema.Struct.Fields>(
  fields: Fields,
  notFound: PathNotFound
): Schema.Struct<Fields> => Schema.Struct(fields).annotations({ [PathNotFoundId]: notFound })

export const pathNotFoundOf = (schema: Schema.Schema.Any): PathNotFound | undefined =>
  SchemaAST.getAnnotation<PathNotFound>(PathNotFoundId)(schema.ast).pipe(Option.getOrUndefined)

// ---- bodies

/**
 * Partner routes reject unknown body fields (400 naming them: it catches typos);
 * the gateway ignores them (wallets add their own) (WIRE.md section 3).
 */
export class UnknownBodyFields extends Context.Tag("@pay/core/UnknownBodyFields")<
  UnknownBodyFields,
  "reject" | "ignore"
>() {}

// ---- declaring errors

/** Marks an endpoint whose errors were declared with `failsWith`; the router refuses others. */
export class ErrorsDeclared extends Context.Tag("@pay/core/ErrorsDeclared")<
  ErrorsDeclared,
  true
>() {}

/** The property names of a struct schema, with whether each is optional. */
export const structFields = (
  schema: Schema.Schema.Any
): ReadonlyArray<{
  readonly name: string
  readonly optional: boolean
  /** What a present value decodes with (an optional field's `undefined` left out). */
  readonly type: SchemaAST.AST
}> => {
  let ast = schema.ast
  while (SchemaAST.isTransformation(ast)) ast = ast.to
  if (!SchemaAST.isTypeLiteral(ast)) return []
  return ast.propertySignatures.map((p) => {
    const present = SchemaAST.isUnion(p.type)
      ? p.type.types.filter((t) => !SchemaAST.isUndefinedKeyword(t))
      : [p.type]
    return {
      name: String(p.name),
      optional: p.isOptional,
      type: present.length === 1 ? present[0]! : p.type
    }
  })
}

/** The errors an endpoint's shape implies, answered by the router before its handler runs. */
export const impliedErrors = (
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): ReadonlyArray<ApiErrorSpec> => {
  const errors: Array<ApiErrorSpec> = [ApiErrors.UnknownApiVersion, ApiErrors.InternalError]
  if (Option.isSome(endpoint.payloadSchema)) {
    errors.push(
      ApiErrors.ParamsValidation,
      ApiErrors.PayloadTooLarge,
      ApiErrors.UnsupportedMediaType
    )
  }
  if (Option.isSome(endpoint.urlParamsSchema)) errors.push(ApiErrors.InvalidParams)
  if (Option.isSome(endpoint.pathSchema)) {
    const notFound = pathNotFoundOf(endpoint.pathSchema.value)
    if (notFound === undefined) {
      throw new Error(`${endpoint.method} ${endpoint.path}: its path schema needs pathOf(...)`)
    }
    errors.push(notFound.error)
  }
  if (Option.isSome(endpoint.headersSchema)) {
    for (const field of structFields(endpoint.headersSchema.value)) {
      const rule = HEADER_RULES[field.name]
      if (rule === undefined) continue
      if (!field.optional) errors.push(rule.missing)
      errors.push(rule.invalid)
    }
  }
  return errors
}

/** The codes some endpoints' shapes imply: typed on every endpoint, declared where they apply. */
type ImpliedCode =
  | "params_validation"
  | "invalid_params"
  | "missing_idempotency_key"
  | "missing_merchant_id"
  | "unknown_api_version"
  | "not_found"
  | "payment_not_found"
  | "payload_too_large"
  | "unsupported_media_type"
  | "internal_error"

type Added<
  E extends HttpApiEndpoint.HttpApiEndpoint.Any,
  Specs extends ReadonlyArray<ApiErrorSpec>
> = HttpApiEndpoint.HttpApiEndpoint.AddError<
  E,
  ErrorBodyOf<Specs[number]["code"] | ImpliedCode>,
  never
>

/**
 * Declares every error an endpoint answers: `specs`, the rows its handler can
 * fail with, and the rows its shape implies. Last in an endpoint's chain.
 */
export const failsWith =
  <const Specs extends ReadonlyArray<ApiErrorSpec>>(...specs: Specs) =>
  <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E): Added<E, Specs> => {
    const props = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
    const all = new Set([...impliedErrors(props), ...specs])
    let declared = props
    for (const spec of all) declared = declared.addError(spec.schema)
    return declared.annotate(ErrorsDeclared, true) as unknown as Added<E, Specs>
  }
