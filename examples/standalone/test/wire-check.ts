/**
 * The wire check: what the end-to-end suites saw the engine answer, held
 * against two documents.
 *
 * 1. Drift, against the engine's own OpenAPI document (`openApiDocument()`,
 *    served at GET /openapi.json): every observed status must be a declared
 *    response of its operation, and where the declared schema for that status
 *    names `code` values (a `const` or `enum` on `code`, inside `anyOf`,
 *    `oneOf` or `allOf` members and behind `$ref`s), the observed `code` must
 *    be one of them.
 * 2. Conformance, against the reference documents (spec/reference-openapi, the
 *    hosted service the engine mirrors; picked by the response's `Pay-Version`
 *    header). On a route the reference documents (same method, same path
 *    template whatever its parameters are called): a status the reference
 *    documents is validated with ajv (JSON Schema 2020-12) against a copy of
 *    the reference's schema in which extra fields are allowed and
 *    `components.schemas.String` is a plain string (WIRE.md: the documents
 *    describe `unit` as an object by mistake), and its `code` must be one the
 *    reference names for that status; an error status the reference does not
 *    document must have WIRE.md section 3's shape, exactly
 *    `{code, message, issues?: [{field, message}]}`. Routes the reference does
 *    not cover (settlements, GET /v1/payments/{id}, POST /v1/refunds) are only
 *    drift-checked.
 *
 * Places where the engine differs from the reference on purpose are listed in
 * `DEVIATIONS`; everything else the check finds is a defect to fix.
 *
 * This module is plain: no vitest, no fetch, no engine. wire-check.setup.ts
 * records the traffic and runs it; wire-check.test.ts proves each rule.
 */
import { readFileSync } from "node:fs"
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"

// ---------------------------------------------------------------------------
// Documents

/** As much of an OpenAPI 3.1 document as the check reads. */
export interface OpenApiDocument {
  readonly paths: object
  readonly components?: object
}

type JsonObject = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const field = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined)

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

/** `{name}` segments made anonymous, so `/v1/merchants/{merchant_id}/payments` meets `{merchantId}`. */
export const normalizeTemplate = (template: string): string => template.replace(/\{[^}]*\}/g, "{}")

/** Follows local `$ref`s (`#/components/...`); returns the node and its JSON pointer. */
const follow = (
  document: OpenApiDocument,
  node: unknown,
  at: string
): { readonly node: unknown; readonly at: string } => {
  let current = { node, at }
  for (let hops = 0; hops < 32; hops++) {
    const ref = field(current.node, "$ref")
    if (typeof ref !== "string" || !ref.startsWith("#/")) return current
    let target: unknown = document
    for (const part of ref.slice(2).split("/")) {
      target = field(target, part.replaceAll("~1", "/").replaceAll("~0", "~"))
    }
    if (target === undefined) return current
    current = { node: target, at: ref.slice(1) }
  }
  return current
}

const resolve = (document: OpenApiDocument, node: unknown): unknown =>
  follow(document, node, "").node

/** A JSON pointer of document keys. */
const pointer = (...parts: ReadonlyArray<string>) =>
  parts.map((p) => `/${p.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("")

/** The operation of `method` on the path whose template normalizes as `template` does. */
const findOperation = (
  document: OpenApiDocument,
  method: string,
  template: string
):
  | { readonly template: string; readonly operation: JsonObject; readonly at: string }
  | undefined => {
  const wanted = normalizeTemplate(template)
  for (const [path, item] of Object.entries(document.paths)) {
    if (normalizeTemplate(path) !== wanted) continue
    const operation = field(item, method.toLowerCase())
    if (isObject(operation))
      return { template: path, operation, at: pointer("paths", path, method.toLowerCase()) }
  }
  return undefined
}

interface Declared {
  /** The JSON schema of the response body, if it has one. */
  readonly schema: unknown
  /** Where that schema is in the document (a JSON pointer), for ajv. */
  readonly at: string | undefined
}

/**
 * The response declared for `status` (exact, else its range `4XX`, else
 * `default`) and its JSON body schema; undefined when the status is not declared.
 */
const declaredResponse = (
  document: OpenApiDocument,
  found: { readonly operation: JsonObject; readonly at: string },
  status: number
): Declared | undefined => {
  const responses = field(found.operation, "responses")
  for (const key of [String(status), `${Math.floor(status / 100)}XX`, "default"]) {
    const response = follow(
      document,
      field(responses, key),
      `${found.at}${pointer("responses", key)}`
    )
    if (!isObject(response.node)) continue
    const content = field(response.node, "content")
    const type = isObject(content)
      ? "application/json" in content
        ? "application/json"
        : Object.keys(content).find((t) => /[/+]json\b/.test(t))
      : undefined
    if (type === undefined) return { schema: undefined, at: undefined }
    const schema = field(field(content, type), "schema")
    return {
      schema,
      at: schema === undefined ? undefined : `${response.at}${pointer("content", type, "schema")}`
    }
  }
  return undefined
}

const declaredStatuses = (operation: JsonObject): ReadonlyArray<string> =>
  Object.keys(field(operation, "responses") ?? {})

/**
 * The `code` values a response schema names: `const`/`enum` on a `code`
 * property, gathered over `anyOf`/`oneOf`/`allOf` members and `$ref`s.
 * Undefined when the schema names none, or when one of its members has a
 * `code` it does not restrict (then any code goes).
 */
export const namedCodes = (
  document: OpenApiDocument,
  schema: unknown
): ReadonlySet<string> | undefined => {
  const codes = new Set<string>()
  let open = false
  const valuesOf = (node: unknown, seen: Set<unknown>): ReadonlyArray<unknown> | undefined => {
    const resolved = resolve(document, node)
    if (seen.has(resolved)) return undefined
    seen.add(resolved)
    if (!isObject(resolved)) return undefined
    if ("const" in resolved) return [resolved.const]
    if (Array.isArray(resolved.enum)) return resolved.enum
    let found: Array<unknown> | undefined
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const members = resolved[key]
      if (!Array.isArray(members)) continue
      for (const member of members) {
        const values = valuesOf(member, seen)
        if (values === undefined) return undefined
        found = [...(found ?? []), ...values]
      }
    }
    return found
  }
  const visit = (node: unknown, seen: Set<unknown>) => {
    const resolved = resolve(document, node)
    if (!isObject(resolved) || seen.has(resolved)) return
    seen.add(resolved)
    const code = field(resolved.properties, "code")
    if (code !== undefined) {
      const values = valuesOf(code, new Set())
      if (values === undefined) open = true
      else for (const value of values) if (typeof value === "string") codes.add(value)
    }
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const members = resolved[key]
      if (Array.isArray(members)) for (const member of members) visit(member, seen)
    }
  }
  visit(schema, new Set())
  return open || codes.size === 0 ? undefined : codes
}

/** The reference documents in spec/reference-openapi, by the API version each describes. */
export const REFERENCE_FILES = {
  "2026-02-18": "2026-02-18.json",
  "2026-02-19.preview": "2026-02-19.preview.json"
} as const

/** The version of responses without a `Pay-Version` header (WIRE.md: the default pin). */
export const DEFAULT_REFERENCE_VERSION = "2026-02-18"

export const loadReferences = (): Readonly<Record<string, OpenApiDocument>> =>
  Object.fromEntries(
    Object.entries(REFERENCE_FILES).map(([version, file]) => [
      version,
      JSON.parse(
        readFileSync(new URL(`../../../spec/reference-openapi/${file}`, import.meta.url), "utf8")
      ) as OpenApiDocument
    ])
  )

// ---------------------------------------------------------------------------
// Routes

/** A route template of a document, split for matching. */
interface Template {
  readonly template: string
  readonly segments: ReadonlyArray<string>
  readonly methods: ReadonlySet<string>
}

export type RouteMatch =
  | { readonly _tag: "Found"; readonly template: string }
  | {
      readonly _tag: "WrongMethod"
      readonly template: string
      readonly allow: ReadonlyArray<string>
    }
  | { readonly _tag: "None" }

const isParameter = (segment: string) => segment.startsWith("{") && segment.endsWith("}")

/** Static segments before parameters, position by position: `/v1/merchants/payments` first. */
const bySpecificity = (a: Template, b: Template): number => {
  for (let i = 0; i < a.segments.length; i++) {
    const pa = isParameter(a.segments[i]!)
    const pb = isParameter(b.segments[i]!)
    if (pa !== pb) return pa ? 1 : -1
  }
  return 0
}

/**
 * Matches a raw request path (still percent-encoded, no query) against the
 * document's templates as the engine's router does: split on "/", a parameter
 * takes any non-empty segment, static segments win over parameters, and the
 * first template that matches and has the method is the route. A path that
 * matches only templates of other methods is a 405 (`WrongMethod`).
 */
export const routeMatcher = (
  document: OpenApiDocument
): ((method: string, path: string) => RouteMatch) => {
  const bySize = new Map<number, Array<Template>>()
  for (const [template, item] of Object.entries(document.paths)) {
    const methods = new Set(
      METHODS.filter((m) => isObject(field(item, m))).map((m) => m.toUpperCase())
    )
    const segments = template.split("/").slice(1)
    const list = bySize.get(segments.length) ?? []
    list.push({ template, segments, methods })
    bySize.set(segments.length, list)
  }
  for (const list of bySize.values()) list.sort(bySpecificity)
  return (method, path) => {
    const parts = path.split("/").slice(1)
    const upper = method.toUpperCase()
    let wrong: { template: string; allow: Array<string> } | undefined
    for (const candidate of bySize.get(parts.length) ?? []) {
      const matches = candidate.segments.every((segment, i) =>
        isParameter(segment) ? parts[i] !== "" : segment === parts[i]
      )
      if (!matches) continue
      if (candidate.methods.has(upper)) return { _tag: "Found", template: candidate.template }
      wrong ??= { template: candidate.template, allow: [] }
      wrong.allow.push(...candidate.methods)
    }
    return wrong === undefined ? { _tag: "None" } : { _tag: "WrongMethod", ...wrong }
  }
}

// ---------------------------------------------------------------------------
// Records, deviations, mismatches

/** One response an end-to-end suite received. */
export interface WireRecord {
  readonly method: string
  /** The raw request path, still percent-encoded, without the query. */
  readonly path: string
  /** The engine document's template the path matched. */
  readonly template: string
  readonly status: number
  /** The response's `Pay-Version` header. */
  readonly version: string | undefined
  /** The parsed JSON body; undefined when the body is not JSON. */
  readonly body: unknown
  /** The body as text (for excerpts). */
  readonly text: string
  /** The test file that made the request, and the test. */
  readonly suite: string
  readonly test?: string | undefined
}

/**
 * A place where the engine deliberately differs from the reference. It
 * matches records by method, route (either document's template form), status
 * and `code` (null: a body without one). With `field`, only the reference
 * failures at that JSON pointer pass (`*` stands for one segment, such as an
 * array index), and with `value` too, only where the field holds that value;
 * without `field` the whole record passes the reference check. The drift
 * check still applies.
 */
export interface Deviation {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly code: string | null
  readonly field?: string
  readonly value?: unknown
  /** Only for responses of this API version. */
  readonly version?: string
  readonly reason: string
}

/**
 * The deliberate deviations. Only what WIRE.md decides against the reference
 * goes here; any other difference is a defect to fix, not to table.
 */
export const DEVIATIONS: ReadonlyArray<Deviation> = [
  // The partner payment view (GET /v1/merchants/payments shares the schema of GET /v1/payments).
  ...(["/v1/payments", "/v1/merchants/payments"] as const).map(
    (route): Deviation => ({
      method: "GET",
      route,
      status: 200,
      code: null,
      field: "/data/*/status",
      value: "cancelled",
      version: "2026-02-18",
      reason:
        "SPEC.md wins over the reference (WIRE.md): its partner payment view has the six statuses of section 3, cancelled included (GET /v1/payments filters on it; only the legacy list leaves it out); 2026-02-18 of the reference lists five"
    })
  ),
  // An unknown version header is refused on every route, before anything else is read
  // (WIRE.md: versions by precedence); the reference lists unknown_api_version among the
  // 400s of GET /v1/payments and GET /v1/merchants/payments only.
  ...(
    [
      ["GET", "/v1/merchants"],
      ["POST", "/v1/merchants"],
      ["PATCH", "/v1/merchants/{merchantId}"],
      ["GET", "/v1/merchants/{merchant_id}/payments"]
    ] as const
  ).map(
    ([method, route]): Deviation => ({
      method,
      route,
      status: 400,
      code: "unknown_api_version",
      reason:
        "an unknown API version is 400 unknown_api_version on every route (the reference's code, which it lists on the payment lists' 400s only)"
    })
  ),
  {
    method: "GET",
    route: "/v1/merchants/payments",
    status: 400,
    code: "missing_merchant_id",
    reason:
      "a missing Merchant-Id is 400 missing_merchant_id on every route that requires it (as on POST /v1/payments and GET /v1/payments/{id}/status, where the reference allows it under 400); the reference puts it under 401 on this route only"
  }
]

export type CheckKind = "drift" | "reference" | "error-shape"

export interface Mismatch {
  readonly check: CheckKind
  readonly method: string
  readonly template: string
  readonly status: number
  readonly code: string | undefined
  readonly version: string | undefined
  readonly problem: string
  readonly excerpt: string
  readonly path: string
  readonly suite: string
  readonly test?: string | undefined
}

/** The `code` of a body, when it has a string one. */
export const bodyCode = (body: unknown): string | undefined => {
  const code = field(body, "code")
  return typeof code === "string" ? code : undefined
}

const EXCERPT_CHARS = 240

export const excerpt = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat
}

const list = (values: Iterable<string>) => [...values].join(", ")

const typeName = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value

// ---------------------------------------------------------------------------
// WIRE.md section 3's error shape

/** What is wrong with an error body against `{code, message, issues?: [{field, message}]}`. */
export const errorShapeProblems = (body: unknown): ReadonlyArray<string> => {
  if (!isObject(body)) return [`the body is ${body === undefined ? "not JSON" : typeName(body)}`]
  const problems: Array<string> = []
  const extra = Object.keys(body).filter((k) => !["code", "message", "issues"].includes(k))
  if (extra.length > 0) problems.push(`unexpected field(s) ${list(extra)}`)
  if (typeof body.code !== "string") problems.push(`code is ${typeName(body.code)}, not a string`)
  if (typeof body.message !== "string" || body.message.length === 0)
    problems.push(`message is ${JSON.stringify(body.message) ?? "missing"}, not a non-empty string`)
  if ("issues" in body) {
    if (!Array.isArray(body.issues))
      problems.push(`issues is ${typeName(body.issues)}, not an array`)
    else
      body.issues.forEach((issue, i) => {
        const keys = isObject(issue) ? Object.keys(issue).sort().join(",") : ""
        if (
          keys !== "field,message" ||
          typeof field(issue, "field") !== "string" ||
          typeof field(issue, "message") !== "string"
        )
          problems.push(
            `issues/${i} is not {field: string, message: string}: ${JSON.stringify(issue)}`
          )
      })
  }
  return problems
}

// ---------------------------------------------------------------------------
// The reference documents, patched

/**
 * A copy of a reference document fit to validate with: extra fields allowed
 * (`additionalProperties: false` and `unevaluatedProperties: false` removed)
 * and `components.schemas.String`, an object in the documents, a string as on
 * the wire (WIRE.md).
 */
export const patchReference = (document: OpenApiDocument): OpenApiDocument => {
  // Values, not schemas: copied as they are.
  const data = new Set(["example", "examples", "default", "const", "enum"])
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip)
    if (!isObject(node)) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      if ((key === "additionalProperties" || key === "unevaluatedProperties") && value === false)
        continue
      out[key] = data.has(key) ? value : strip(value)
    }
    return out
  }
  const copy = strip(document) as { paths: object; components?: Record<string, unknown> }
  const schemas = field(copy.components, "schemas")
  if (isObject(schemas) && "String" in schemas) {
    ;(schemas as Record<string, unknown>).String = {
      type: "string",
      description: `${field(schemas.String, "description") ?? ""} (patched: a plain string on the wire, WIRE.md)`
    }
  }
  return copy
}

/** Whether an error is at `path` or below it. */
const deeper = (e: ErrorObject, path: string) =>
  e.instancePath === path || e.instancePath.startsWith(`${path}/`)
const union = (e: ErrorObject) => e.keyword === "anyOf" || e.keyword === "oneOf"
const isNullBranch = (e: ErrorObject) =>
  e.keyword === "type" && (e.params as { type?: unknown }).type === "null"

/** An instance path with array indices as `*`, so one problem of many items reads once. */
const generalize = (instancePath: string) => instancePath.replace(/\/\d+(?=\/|$)/g, "/*")

const ajvProblem = (error: ErrorObject): string => {
  const path = generalize(error.instancePath)
  const at = path === "" ? "(body)" : path
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case "required":
      return `missing required field ${path}/${String(params.missingProperty)}`
    case "type":
      return `${at} must be ${String(params.type)}, is ${typeName(error.data)}`
    case "enum":
      return `${at} must be one of ${JSON.stringify(params.allowedValues)}, is ${JSON.stringify(error.data)}`
    case "const":
      return `${at} must be ${JSON.stringify(params.allowedValue)}, is ${JSON.stringify(error.data)}`
    default:
      return `${at} ${error.message ?? error.keyword}`
  }
}

/**
 * ajv's errors, fewer: a union's failure is shown by its branches' errors
 * (the `null` branch of a nullable union is dropped when another branch says
 * more), the union's own summary only when nothing else is left.
 */
const summarize = (errors: ReadonlyArray<ErrorObject>): ReadonlyArray<Problem> => {
  const kept = errors.filter((e) => {
    if (union(e)) return !errors.some((o) => o !== e && !union(o) && deeper(o, e.instancePath))
    if (isNullBranch(e))
      return !errors.some(
        (o) => o !== e && !union(o) && !isNullBranch(o) && deeper(o, e.instancePath)
      )
    return true
  })
  const problems = new Map<string, Problem>()
  for (const e of kept) {
    const problem = ajvProblem(e)
    // The object that holds the offending field (the object itself for a missing one).
    const at = e.keyword === "required" ? e.instancePath : e.instancePath.replace(/\/[^/]*$/, "")
    if (!problems.has(problem)) problems.set(problem, { problem, at })
  }
  return [...problems.values()]
}

/** What is wrong, and where in the body to look (a JSON pointer) when that helps. */
interface Problem {
  readonly problem: string
  readonly at?: string
}

/** The value at a JSON pointer of a body. */
const valueAt = (body: unknown, at: string): unknown =>
  at
    .split("/")
    .slice(1)
    .reduce<unknown>(
      (node, part) =>
        Array.isArray(node)
          ? node[Number(part)]
          : field(node, part.replaceAll("~1", "/").replaceAll("~0", "~")),
      body
    )

const pointerMatches = (pattern: string, path: string): boolean => {
  const a = pattern.split("/")
  const b = path.split("/")
  return a.length === b.length && a.every((p, i) => p === "*" || p === b[i])
}

// ---------------------------------------------------------------------------
// The checker

export interface CheckerOptions {
  /** The engine's own document (`openApiDocument()`). */
  readonly engine: OpenApiDocument
  /** The reference documents by API version, unpatched. */
  readonly references: Readonly<Record<string, OpenApiDocument>>
  /** The version assumed when a response carries no `Pay-Version` header. */
  readonly defaultVersion: string
  readonly deviations?: ReadonlyArray<Deviation>
}

export interface Checker {
  readonly match: (method: string, path: string) => RouteMatch
  readonly check: (record: WireRecord) => ReadonlyArray<Mismatch>
}

export const makeChecker = (options: CheckerOptions): Checker => {
  const deviations = options.deviations ?? DEVIATIONS
  const match = routeMatcher(options.engine)
  const patched = new Map<string, OpenApiDocument>()
  let ajv: Ajv2020 | undefined
  const validators = new Map<string, ValidateFunction>()

  const reference = (version: string): OpenApiDocument | undefined => {
    const original = options.references[version]
    if (original === undefined) return undefined
    let copy = patched.get(version)
    if (copy === undefined) {
      copy = patchReference(original)
      patched.set(version, copy)
    }
    return copy
  }

  /** Compiled once per (document, operation, status), on first use. */
  const validator = (version: string, at: string): ValidateFunction => {
    const key = `${version} ${at}`
    let validate = validators.get(key)
    if (validate === undefined) {
      if (ajv === undefined) {
        ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, validateSchema: false })
        addFormats(ajv)
      }
      const id = `https://reference.invalid/${encodeURIComponent(version)}.json`
      if (ajv.getSchema(id) === undefined) ajv.addSchema(reference(version)! as object, id)
      validate = ajv.compile({ $ref: `${id}#${at}` })
      validators.set(key, validate)
    }
    return validate
  }

  const drift = (record: WireRecord, code: string | undefined): ReadonlyArray<string> => {
    const found = findOperation(options.engine, record.method, record.template)
    if (found === undefined) return [`${record.method} ${record.template} is not in /openapi.json`]
    const response = declaredResponse(options.engine, found, record.status)
    if (response === undefined)
      return [
        `status ${record.status} is not declared (declared: ${list(declaredStatuses(found.operation))})`
      ]
    const codes = namedCodes(options.engine, response.schema)
    if (codes === undefined) return []
    if (code === undefined)
      return [`the body has no code; declared for ${record.status}: ${list(codes)}`]
    return codes.has(code)
      ? []
      : [`code ${code} is not declared for ${record.status} (declared: ${list(codes)})`]
  }

  const conformance = (
    record: WireRecord,
    code: string | undefined
  ): ReadonlyArray<Problem & { readonly check: CheckKind }> => {
    const version = record.version ?? options.defaultVersion
    const document = reference(version)
    if (document === undefined)
      return [{ check: "reference", problem: `unknown Pay-Version ${JSON.stringify(version)}` }]
    const found = findOperation(document, record.method, record.template)
    if (found === undefined) return [] // a route the reference does not cover
    const waived = deviations.filter(
      (d) =>
        d.method.toUpperCase() === record.method.toUpperCase() &&
        normalizeTemplate(d.route) === normalizeTemplate(record.template) &&
        d.status === record.status &&
        d.code === (code ?? null) &&
        (d.version === undefined || d.version === version)
    )
    if (waived.some((d) => d.field === undefined)) return []
    const response = declaredResponse(document, found, record.status)
    if (response === undefined) {
      if (record.status < 400)
        return [
          {
            check: "reference",
            problem: `status ${record.status} is not documented by the reference (documents: ${list(declaredStatuses(found.operation))})`
          }
        ]
      return errorShapeProblems(record.body).map((problem) => ({ check: "error-shape", problem }))
    }
    if (response.at === undefined) return []
    const problems: Array<Problem> = []
    const codes = namedCodes(document, response.schema)
    const codeRejected =
      codes !== undefined &&
      code !== undefined &&
      !codes.has(code) &&
      !waived.some((d) => d.field === "/code")
    if (codeRejected)
      problems.push({
        problem: `code ${code} is not one the reference names for ${record.status}: ${list(codes)}`
      })
    if (record.body === undefined) problems.push({ problem: "the body is not JSON" })
    else {
      const validate = validator(version, response.at)
      if (validate(record.body)) return problems.map((p) => ({ ...p, check: "reference" }))
      const all = validate.errors ?? []
      const isWaived = (e: ErrorObject) =>
        waived.some(
          (d) =>
            d.field !== undefined &&
            pointerMatches(d.field, e.instancePath) &&
            (!("value" in d) || JSON.stringify(d.value) === JSON.stringify(e.data))
        )
      const errors = all.filter(
        (e) =>
          !isWaived(e) &&
          // The code rule above already says it.
          !(
            e.instancePath === "/code" &&
            ["enum", "const"].includes(e.keyword) &&
            codes !== undefined
          ) &&
          // A union that failed only because of a waived field.
          !(
            union(e) &&
            all.some((o) => isWaived(o) && deeper(o, e.instancePath)) &&
            !all.some(
              (o) => !isWaived(o) && !union(o) && !isNullBranch(o) && deeper(o, e.instancePath)
            )
          )
      )
      problems.push(...summarize(errors))
    }
    return problems.map((p) => ({ ...p, check: "reference" }))
  }

  const check = (record: WireRecord): ReadonlyArray<Mismatch> => {
    const code = bodyCode(record.body)
    const base = {
      method: record.method,
      template: record.template,
      status: record.status,
      code,
      version: record.version,
      excerpt: excerpt(record.text),
      path: record.path,
      suite: record.suite,
      test: record.test
    }
    return [
      ...drift(record, code).map((problem) => ({ ...base, check: "drift" as const, problem })),
      ...conformance(record, code).map(({ check, problem, at }) => ({
        ...base,
        check,
        problem,
        // The offending part of a large body, rather than its first characters.
        ...(at !== undefined && at !== ""
          ? { excerpt: `at ${at}: ${excerpt(JSON.stringify(valueAt(record.body, at)) ?? "")}` }
          : {})
      }))
    ]
  }

  return { match, check }
}

// ---------------------------------------------------------------------------
// Reports

/** Mismatches folded by what is wrong, each with how often and where it was seen. */
export interface MismatchGroup {
  readonly check: CheckKind
  readonly method: string
  readonly template: string
  readonly status: number
  readonly code: string | undefined
  readonly problem: string
  readonly versions: ReadonlyArray<string>
  readonly count: number
  readonly suites: ReadonlyArray<string>
  readonly tests: ReadonlyArray<string>
  readonly excerpt: string
}

export const groupMismatches = (
  mismatches: ReadonlyArray<Mismatch>
): ReadonlyArray<MismatchGroup> => {
  const groups = new Map<
    string,
    {
      first: Mismatch
      count: number
      suites: Set<string>
      tests: Set<string>
      versions: Set<string>
    }
  >()
  for (const m of mismatches) {
    const key = JSON.stringify([m.check, m.method, m.template, m.status, m.code ?? null, m.problem])
    const group = groups.get(key) ?? {
      first: m,
      count: 0,
      suites: new Set(),
      tests: new Set(),
      versions: new Set()
    }
    group.count++
    group.suites.add(m.suite)
    if (m.test !== undefined) group.tests.add(m.test)
    group.versions.add(m.version ?? "(none)")
    groups.set(key, group)
  }
  return [...groups.values()]
    .map(({ first, count, suites, tests, versions }) => ({
      check: first.check,
      method: first.method,
      template: first.template,
      status: first.status,
      code: first.code,
      problem: first.problem,
      versions: [...versions].sort(),
      count,
      suites: [...suites].sort(),
      tests: [...tests],
      excerpt: first.excerpt
    }))
    .sort(
      (a, b) =>
        a.template.localeCompare(b.template) ||
        a.method.localeCompare(b.method) ||
        a.status - b.status ||
        (a.code ?? "").localeCompare(b.code ?? "") ||
        a.check.localeCompare(b.check) ||
        a.problem.localeCompare(b.problem)
    )
}

/** A readable list, one group a paragraph. */
export const formatMismatches = (mismatches: ReadonlyArray<Mismatch>): string =>
  groupMismatches(mismatches)
    .map((g) => {
      const head = `[${g.check}] ${g.method} ${g.template} ${g.status} ${g.code ?? "(no code)"}: ${g.problem}`
      const seen = `  seen ${g.count}x (Pay-Version ${list(g.versions)}), e.g. in "${g.tests[0] ?? g.suites[0]}"`
      return `${head}\n${seen}\n  body: ${g.excerpt}`
    })
    .join("\n")
