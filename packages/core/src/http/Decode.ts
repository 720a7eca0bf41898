/**
 * Schema decoding at the edge, with every offending field named in `issues`
 * (WIRE.md section 3) rather than only the first.
 */
import { type SchemaAST as AST, Either, ParseResult, Schema } from "effect"
import type { FieldIssue } from "../shared/Errors.js"
import { RequestError } from "./RequestError.js"

/**
 * A schema annotation: the `code` of the issue a failure inside this schema
 * gives its field (`invalid_icon_url`), for clients that act on the kind of wrong.
 */
export const IssueCode: unique symbol = Symbol.for("@pay/core/IssueCode")

const codeOf = (ast: AST.Annotated): string | undefined => {
  const code = ast.annotations[IssueCode]
  return typeof code === "string" ? code : undefined
}

/** The fields whose failures lie inside a schema annotated with an IssueCode, and that code. */
const issueCodes = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey> = [],
  inherited: string | undefined = undefined,
  found = new Map<string, string>()
): Map<string, string> => {
  const code = ("ast" in issue ? codeOf(issue.ast) : undefined) ?? inherited
  switch (issue._tag) {
    case "Pointer":
      return issueCodes(
        issue.issue,
        [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])],
        code,
        found
      )
    case "Composite":
      for (const inner of Array.isArray(issue.issues) ? issue.issues : [issue.issues]) {
        issueCodes(inner as ParseResult.ParseIssue, path, code, found)
      }
      return found
    case "Refinement":
    case "Transformation":
      return issueCodes(issue.issue, path, code, found)
    default:
      if (code !== undefined) found.set(path.map(String).join("."), code)
      return found
  }
}

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
  const codes = issueCodes(error.issue)
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue): FieldIssue => {
    const code = codes.get(issue.path.map(String).join("."))
    return {
      field: issue.path.length === 0 ? root : issue.path.map(String).join("."),
      message: describe(issue),
      ...(code === undefined ? {} : { code })
    }
  })
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
