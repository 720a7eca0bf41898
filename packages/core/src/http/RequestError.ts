/**
 * Failures of the HTTP exchange itself, before any domain rule runs: an
 * unknown route, a body that is not JSON or too large, a bad header. Unlike
 * domain errors these know their status, since they only exist at the edge;
 * each is made from a row of the error table (ErrorResponses.ts).
 */
import { Schema } from "effect"
import { FieldIssue } from "../shared/Errors.js"

/** What a row of the error table (ErrorResponses.ts) gives an error: its status and code. */
export interface ErrorRow {
  readonly status: number
  readonly code: string
}

export class RequestError extends Schema.TaggedError<RequestError>()("RequestError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  issues: Schema.optional(Schema.Array(FieldIssue)),
  allow: Schema.optional(Schema.String)
}) {
  static of(
    spec: ErrorRow,
    message: string,
    extra: { readonly issues?: ReadonlyArray<FieldIssue>; readonly allow?: string } = {}
  ): RequestError {
    return new RequestError({ status: spec.status, code: spec.code, message, ...extra })
  }

  /** A required header that was not sent, e.g. `Merchant-Id`, and what to send in it. */
  static missingHeader(spec: ErrorRow, header: string, wanted?: string): RequestError {
    return RequestError.of(
      spec,
      `Missing ${header} header${wanted === undefined ? "" : `: send ${wanted}`}`,
      { issues: [{ field: header, message: "is required" }] }
    )
  }

  /** One offending field. */
  static invalid(spec: ErrorRow, field: string, message: string): RequestError {
    return RequestError.of(spec, `${field}: ${message}`, { issues: [{ field, message }] })
  }
}
