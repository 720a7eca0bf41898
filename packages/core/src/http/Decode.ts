/**
 * Schema decoding at the edge, with every offending field named in `issues`
 * (WIRE.md section 3) rather than only the first.
 */
import { SchemaAST as AST, Either, ParseResult, Schema } from "effect"
import type { FieldIssue } from "../shared/Errors.js"
import { RequestError } from "./RequestError.js"

/**
 * A schema annotation: the `code` of the issue a failure inside this schema
 * gives its field (`invalid_icon_url`), for clients that act on the kind of wrong.
 */
export const IssueCode: unique symbol = Symbol.for("@pay/core/IssueCode")

/**
 * A schema annotation: what the schema accepts, as a phrase that follows "must
 * be" ("a Unix time in seconds"), where its type alone says too little; read
 * inside unions too, whose own annotations Effect drops when it flattens them.
 */
export const Expects: unique symbol = Symbol.for("@pay/core/Expects")

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

// ---- messages in plain words

/**
 * What a schema accepts, in words a person reads ("a string", "one of: asc,
 * desc", "an object with unit and value"): what Effect's default messages say
 * in its own notation (`Expected { readonly unit: string }`, `Expected
 * NonNegativeInt`).
 */
export const expected = (ast: AST.AST): string => {
  const own = ast.annotations[Expects]
  if (typeof own === "string") return own
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null ? "null" : JSON.stringify(ast.literal)
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "BigIntKeyword":
      return "a whole number"
    case "Enums":
      return `one of: ${ast.enums.map(([, value]) => String(value)).join(", ")}`
    case "TypeLiteral": {
      const required = ast.propertySignatures
        .filter((p) => !p.isOptional)
        .map((p) => String(p.name))
      return required.length === 0 || required.length > 4
        ? "an object"
        : `an object with ${listed(required, "and")}`
    }
    case "TupleType":
      return "a list"
    case "Union":
      return unionExpected(ast)
    case "Refinement":
      // A value of the wrong kind is told the kind: what the checks on it need is said when it fails one.
      return expected(ast.from)
    case "Transformation":
      return expected(ast.to)
    case "Suspend":
      return expected(ast.f())
    default:
      return "a valid value"
  }
}

const listed = (items: ReadonlyArray<string>, conjunction: string): string =>
  items.length <= 1
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} ${conjunction} ${items[items.length - 1]}`

const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  if (AST.isLiteral(ast)) return [ast.literal]
  if (!AST.isUnion(ast)) return undefined
  const all: Array<AST.LiteralValue> = []
  for (const member of ast.types) {
    const literals = literalsOf(member)
    if (literals === undefined) return undefined
    all.push(...literals)
  }
  return all
}

/**
 * A union in words. Its literals are one list, and so is a list of those same
 * literals beside them (a repeatable query parameter: `status=a&status=b`);
 * an optional field's `undefined` is left unsaid.
 */
const unionExpected = (ast: AST.Union): string => {
  const literals: Array<AST.LiteralValue> = []
  const others: Array<AST.AST> = []
  for (const member of ast.types) {
    const own = literalsOf(member)
    if (own !== undefined && !own.includes(null)) literals.push(...own)
    else if (!AST.isUndefinedKeyword(member)) others.push(member)
  }
  const names = literals.map(String)
  const rest = others
    .filter(
      (other) =>
        !(
          AST.isTupleType(other) &&
          other.elements.length === 0 &&
          other.rest.length === 1 &&
          literalsOf(other.rest[0]!.type)?.every((l) => literals.includes(l))
        )
    )
    .map(expected)
  const parts = [...(names.length === 0 ? [] : [`one of: ${names.join(", ")}`]), ...rest]
  return parts.length === 0 ? "left out" : parts.join(" or ")
}

/** What a failed check needs: Effect's own checks describe themselves ("an integer"). */
const checked = (ast: AST.Refinement): string => {
  const own = ast.annotations[Expects]
  if (typeof own === "string") return own
  const description = ast.annotations[AST.DescriptionAnnotationId]
  return typeof description === "string" && /^an? /.test(description)
    ? description
    : expected(ast.from)
}

// Effect's default wordings, which name its types: replaced by `expected`.
const DEFAULT_MESSAGE = /^(Expected |Unable to decode )/

const hasMessage = (ast: AST.Annotated): boolean =>
  ast.annotations[AST.MessageAnnotationId] !== undefined

const isUndefined = (issue: ParseResult.ParseIssue): boolean =>
  issue._tag === "Type" && AST.isUndefinedKeyword(issue.ast)

/** A member of a union the value is not even the kind of (a string given for an object). */
const isShallow = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return true
    case "Refinement":
      return issue.kind === "From" && isShallow(issue.issue)
    case "Transformation":
      return issue.kind === "Encoded" && isShallow(issue.issue)
    case "Composite":
      // A union nested in a union: a value none of its members is the kind of.
      return (
        AST.isUnion(issue.ast) &&
        (Array.isArray(issue.issues) ? issue.issues : [issue.issues]).every(isShallow)
      )
    default:
      return false
  }
}

interface RawIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A failure's own message (its schema's `message` annotation first), else `must be …` of `ast`. */
const leaf = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  ast: AST.AST
): Array<RawIssue> =>
  ParseResult.ArrayFormatter.formatIssueSync(issue).map((formatted) => ({
    path: [...path, ...formatted.path],
    message:
      formatted._tag === "Missing"
        ? "is required"
        : formatted._tag === "Unexpected"
          ? "is not a known field"
          : DEFAULT_MESSAGE.test(formatted.message)
            ? `must be ${AST.isRefinement(ast) ? checked(ast) : expected(ast)}`
            : formatted.message
  }))

/**
 * Every offending field of a failure, each said once in plain words: a union
 * the value is not even the kind of is one issue naming every kind it takes
 * (`must be one of: asc, desc`), not one issue per member; a union the value
 * is the kind of but wrong inside names the inner fields.
 */
const walk = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Array<RawIssue> => {
  switch (issue._tag) {
    case "Pointer":
      return walk(issue.issue, [
        ...path,
        ...(Array.isArray(issue.path) ? issue.path : [issue.path])
      ])
    case "Composite": {
      const inner: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(issue.issues)
        ? issue.issues
        : [issue.issues as ParseResult.ParseIssue]
      if (hasMessage(issue.ast)) return leaf(issue, path, issue.ast)
      if (AST.isUnion(issue.ast)) {
        const deep = inner.filter((member) => !isShallow(member))
        if (deep.length > 0) return deep.flatMap((member) => walk(member, path))
        // An optional field's one type: its own message says it best (an id's form).
        const kinds = inner.filter((member) => !isUndefined(member))
        return kinds.length === 1
          ? walk(kinds[0]!, path)
          : [{ path, message: `must be ${expected(issue.ast)}` }]
      }
      return inner.flatMap((member) => walk(member, path))
    }
    case "Refinement": {
      if (issue.kind === "Predicate") return leaf(issue, path, issue.ast)
      // A check whose message overrides its base's (`override: true`) says it for both.
      if (hasMessage(issue.ast)) {
        const own = ParseResult.ArrayFormatter.formatIssueSync(issue)
        const only = own[0]
        if (own.length === 1 && only?.path.length === 0 && !DEFAULT_MESSAGE.test(only.message)) {
          return [{ path, message: only.message }]
        }
      }
      return walk(issue.issue, path)
    }
    case "Transformation":
      return issue.kind === "Transformation"
        ? leaf(issue, path, issue.ast.to)
        : walk(issue.issue, path)
    case "Unexpected":
      return [{ path, message: "is not a known field" }]
    case "Missing":
      return [{ path, message: "is required" }]
    default:
      return leaf(issue, path, issue.ast)
  }
}

/** Every offending field of a decode error; a failure of the whole input is named `root`. */
export const toFieldIssues = (
  error: ParseResult.ParseError,
  root = "body"
): ReadonlyArray<FieldIssue> => {
  const codes = issueCodes(error.issue)
  const issues = walk(error.issue, []).map((issue): FieldIssue => {
    const code = codes.get(issue.path.map(String).join("."))
    return {
      field: issue.path.length === 0 ? root : issue.path.map(String).join("."),
      message: issue.message,
      ...(code === undefined ? {} : { code })
    }
  })
  return issues.filter(
    (issue, i) =>
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
