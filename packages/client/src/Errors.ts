/**
 * How the Promise facade rejects. Three cases, told apart with `instanceof`
 * (or `_tag`):
 * - `PayApiError`: the engine answered one of the errors the definition
 *   declares for the endpoint (`{code, message, issues?}`), or the client
 *   refused the request before sending it because it breaks the definition's
 *   schemas (then `source` is "client", status 400, and the code the engine
 *   gives the same mistake: `params_validation` for a body,
 *   `invalid_params` for a path, query or header).
 * - `PayNetworkError`: no answer (connection refused or reset, DNS, abort).
 * - `PayResponseError`: an answer the definition does not describe for the
 *   endpoint (an undeclared status such as a proxy's 502, or a body that does
 *   not match the declared schema).
 * Every one names the `operation` ("group.endpoint" of the definition) and,
 * for a create, the `idempotencyKey` that was sent, so the call can be
 * retried later with the same key.
 */

export interface FieldIssue {
  /** A dotted path into the request part, e.g. `settlements.0.asset`. */
  readonly field: string
  readonly message: string
}

interface ErrorContext {
  readonly operation: string
  readonly idempotencyKey?: string | undefined
}

export class PayApiError<Code extends string = string> extends Error {
  readonly _tag = "PayApiError"
  override readonly name = "PayApiError"
  readonly status: number
  readonly code: Code
  readonly issues: ReadonlyArray<FieldIssue>
  /** "server" when the engine answered it; "client" when the request was refused before sending. */
  readonly source: "server" | "client"
  readonly operation: string
  readonly idempotencyKey: string | undefined

  constructor(
    args: ErrorContext & {
      readonly status: number
      readonly code: Code
      readonly message: string
      readonly issues?: ReadonlyArray<FieldIssue> | undefined
      readonly source: "server" | "client"
    }
  ) {
    super(args.message)
    this.status = args.status
    this.code = args.code
    this.issues = args.issues ?? []
    this.source = args.source
    this.operation = args.operation
    this.idempotencyKey = args.idempotencyKey
  }
}

export class PayNetworkError extends Error {
  readonly _tag = "PayNetworkError"
  override readonly name = "PayNetworkError"
  /** "transport": the request got no answer; "aborted": the caller's signal ended it. */
  readonly reason: "transport" | "aborted"
  readonly operation: string
  readonly idempotencyKey: string | undefined

  constructor(
    args: ErrorContext & {
      readonly reason: "transport" | "aborted"
      readonly message: string
      readonly cause?: unknown
    }
  ) {
    super(args.message, { cause: args.cause })
    this.reason = args.reason
    this.operation = args.operation
    this.idempotencyKey = args.idempotencyKey
  }
}

export class PayResponseError extends Error {
  readonly _tag = "PayResponseError"
  override readonly name = "PayResponseError"
  readonly status: number
  /** The body, parsed as JSON when it is JSON, else its text; undefined when it could not be read. */
  readonly body: unknown
  readonly operation: string
  readonly idempotencyKey: string | undefined

  constructor(
    args: ErrorContext & {
      readonly status: number
      readonly body: unknown
      readonly message: string
      readonly cause?: unknown
    }
  ) {
    super(args.message, { cause: args.cause })
    this.status = args.status
    this.body = args.body
    this.operation = args.operation
    this.idempotencyKey = args.idempotencyKey
  }
}

export type PayClientError = PayApiError | PayNetworkError | PayResponseError
