/**
 * Schema decoding at the edge, with every offending field named in `issues`
 * (WIRE.md section 3) rather than only the first.
 */
import { Either, ParseResult, Schema } from "effect"
import type { FieldIssue } from "../shared/Errors.js"
import { RequestError } from "./RequestError.js"

const describe = (issue: ParseResult.ArrayFormatterIssue): string => {
  switch (issue._tag) {
    case "Missing":
      return "is required"
    case "Unexpected":
      return "is not a known field"
    default:
      return issue.message
  }
}

// A value failing `NullOr(X)` or `optional(X)` also reports "Expected null/undefined": noise
// beside X's own message, which says what the field needs.
const UNION_NOISE = /^Expected (null|undefined), actual /

/** Every offending field of a decode error; a failure of the whole input is named `root`. */
export const toFieldIssues = (
  error: ParseResult.ParseError,
  root = "body"
): ReadonlyArray<FieldIssue> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    field: issue.path.length === 0 ? root : issue.path.map(String).join("."),
    message: describe(issue)
  }))
  return issues.filter(
    (issue, i) =>
      !(
        UNION_NOISE.test(issue.message) &&
        issues.some(
          (other, j) => j !== i && other.field === issue.field && !UNION_NOISE.test(other.message)
        )
      ) &&
      issues.findIndex(
        (other) => other.field === issue.field && other.message === issue.message
      ) === i
  )
}

export interface DecodeOptions {
  /** Where the input came from, for messages: "body", "query", "path". */
  readonly source: "body" | "query" | "path"
  readonly unknownFields: "reject" | "ignore"
}

/** A decoder built once: every offending field becomes an issue of one RequestError. */
export const makeDecoder = <A, I>(
  schema: Schema.Schema<A, I>,
  options: DecodeOptions
): ((input: unknown) => Either.Either<A, RequestError>) => {
  const decode = Schema.decodeUnknownEither(schema, {
    errors: "all",
    onExcessProperty: options.unknownFields === "reject" ? "error" : "ignore"
  })
  return (input) =>
    Either.mapLeft(decode(input), (error) => {
      const issues = toFieldIssues(error)
      const summary = issues
        .slice(0, 3)
        .map((i) => `${i.field} ${i.message}`)
        .join("; ")
      return new RequestError({
        status: 400,
        code: options.source === "body" ? "params_validation" : "invalid_params",
        message: `Invalid ${options.source}: ${summary}${issues.length > 3 ? "; …" : ""}`,
        issues
      })
    })
}
