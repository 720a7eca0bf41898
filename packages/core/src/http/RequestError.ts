/**
 * Failures of the HTTP exchange itself, before any domain rule runs: an
 * unknown route, a body that is not JSON or too large, a bad header. Unlike
 * domain errors these know their status, since they only exist at the edge.
 */
import { Schema } from "effect"
import { FieldIssue } from "../shared/Errors.js"

export class RequestError extends Schema.TaggedError<RequestError>()("RequestError", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  issues: Schema.optional(Schema.Array(FieldIssue)),
  allow: Schema.optional(Schema.String)
}) {
  /** A required header that was not sent, e.g. `Merchant-Id`. */
  static missingHeader(code: string, header: string): RequestError {
    return new RequestError({
      status: 400,
      code,
      message: `Missing ${header} header`,
      issues: [{ field: header, message: "is required" }]
    })
  }

  static invalid(code: string, field: string, message: string): RequestError {
    return new RequestError({
      status: 400,
      code,
      message: `${field}: ${message}`,
      issues: [{ field, message }]
    })
  }
}
