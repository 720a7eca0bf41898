/**
 * Renders the engine's OpenAPI 3.1 document as the human-readable API reference served at `/docs`.
 *
 * The page is one self-contained HTML string: styles are inline and there is no script, font or
 * CDN, because the machines running the engine have no internet and the page must work offline.
 * Every string taken from the document is HTML-escaped: descriptions are written by people and
 * must never be able to inject markup into the page.
 */

/**
 * A JSON Schema node as it appears in the document. Deliberately loose (every field optional and
 * read-only) so that both hand-written documents and `OpenApi.fromApi` output are assignable.
 */
export interface JsonSchemaObject {
  readonly $ref?: string
  readonly $id?: string
  readonly $comment?: string
  readonly type?: string | ReadonlyArray<string>
  readonly title?: string
  readonly description?: string
  readonly format?: string
  readonly pattern?: string
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly default?: unknown
  readonly examples?: ReadonlyArray<unknown>
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number | boolean
  readonly exclusiveMaximum?: number | boolean
  readonly multipleOf?: number
  readonly minItems?: number
  readonly maxItems?: number
  readonly uniqueItems?: boolean
  readonly minProperties?: number
  readonly maxProperties?: number
  readonly items?: JsonSchemaObject | ReadonlyArray<JsonSchemaObject> | boolean
  readonly prefixItems?: ReadonlyArray<JsonSchemaObject>
  readonly additionalItems?: JsonSchemaObject | boolean
  readonly properties?: { readonly [name: string]: JsonSchemaObject }
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: JsonSchemaObject | boolean
  readonly patternProperties?: { readonly [pattern: string]: JsonSchemaObject }
  readonly anyOf?: ReadonlyArray<JsonSchemaObject>
  readonly oneOf?: ReadonlyArray<JsonSchemaObject>
  readonly allOf?: ReadonlyArray<JsonSchemaObject>
  readonly not?: unknown
  readonly nullable?: boolean
  readonly deprecated?: boolean
  readonly readOnly?: boolean
  readonly writeOnly?: boolean
  readonly contentMediaType?: string
}

export interface OpenApiInfo {
  readonly title: string
  readonly version?: string
  readonly summary?: string
  readonly description?: string
}

export interface OpenApiServer {
  readonly url: string
  readonly description?: string
}

export interface OpenApiTag {
  readonly name: string
  readonly description?: string
}

export interface OpenApiParameter {
  readonly name: string
  readonly in: string
  readonly required?: boolean
  readonly description?: string
  readonly deprecated?: boolean
  readonly schema?: JsonSchemaObject
}

export interface OpenApiMediaType {
  readonly schema?: JsonSchemaObject
}

/** `undefined` is allowed because `fromApi` types content as a mapped type of optional keys. */
export interface OpenApiContent {
  readonly [mediaType: string]: OpenApiMediaType | undefined
}

export interface OpenApiRequestBody {
  readonly description?: string
  readonly required?: boolean
  readonly content?: OpenApiContent
}

export interface OpenApiResponse {
  readonly description?: string
  readonly content?: OpenApiContent
}

/** `fromApi` keys responses by number, hand-written documents by string ("200", "default"). */
export type OpenApiResponses =
  | { readonly [status: string]: OpenApiResponse }
  | { readonly [status: number]: OpenApiResponse }

export interface OpenApiSecurityRequirement {
  readonly [scheme: string]: ReadonlyArray<string>
}

export interface OpenApiOperation {
  readonly operationId?: string
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly deprecated?: boolean
  readonly parameters?: ReadonlyArray<OpenApiParameter>
  readonly requestBody?: OpenApiRequestBody
  readonly responses?: OpenApiResponses
  readonly security?: ReadonlyArray<OpenApiSecurityRequirement>
}

export interface OpenApiPathItem {
  readonly summary?: string
  readonly description?: string
  readonly parameters?: ReadonlyArray<OpenApiParameter>
  readonly get?: OpenApiOperation
  readonly put?: OpenApiOperation
  readonly post?: OpenApiOperation
  readonly delete?: OpenApiOperation
  readonly options?: OpenApiOperation
  readonly head?: OpenApiOperation
  readonly patch?: OpenApiOperation
  readonly trace?: OpenApiOperation
}

export interface OpenApiSecurityScheme {
  readonly type: string
  readonly description?: string
  readonly name?: string
  readonly in?: string
  readonly scheme?: string
  readonly bearerFormat?: string
}

export interface OpenApiComponents {
  readonly schemas?: { readonly [name: string]: JsonSchemaObject }
  readonly securitySchemes?: { readonly [name: string]: OpenApiSecurityScheme }
}

export interface OpenApiDocument {
  readonly openapi?: string
  readonly info: OpenApiInfo
  readonly servers?: ReadonlyArray<OpenApiServer>
  readonly paths?: { readonly [path: string]: OpenApiPathItem }
  readonly components?: OpenApiComponents
  readonly security?: ReadonlyArray<OpenApiSecurityRequirement>
  readonly tags?: ReadonlyArray<OpenApiTag>
}

export interface ApiReferencePageOptions {
  readonly title?: string
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)

// Quotes are escaped too, so the result is safe inside attribute values as well as text.
const esc = (value: unknown): string =>
  escapeHtml(typeof value === "string" ? value : String(value))

// Ids are derived from document strings, so they are encoded injectively ("." is itself encoded)
// to keep anchors unique and free of anything that would need escaping.
const anchor = (prefix: string, raw: string): string =>
  `${prefix}-${raw.replace(/[^A-Za-z0-9_-]/g, (c) => `.${c.charCodeAt(0).toString(16)}`)}`

// Only schemes that cannot execute anything; `javascript:` and friends fall back to plain text.
const isSafeUrl = (url: string): boolean => /^(https?:\/\/|mailto:|#|\/(?!\/)|\.{1,2}\/)/i.test(url)

const INLINE_TOKEN =
  /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w*])\*(?![\s*])([^*]+?)(?<!\s)\*(?![\w*])/g

/** Inline Markdown subset: `code`, **bold**, *emphasis* and links with safe URLs. */
export const renderInline = (text: string): string => {
  let html = ""
  let last = 0
  for (const match of text.matchAll(INLINE_TOKEN)) {
    const index = match.index ?? 0
    html += escapeHtml(text.slice(last, index))
    last = index + match[0].length
    const [, code, bold, boldAlt, linkText, linkUrl, emphasis] = match
    if (code !== undefined) {
      html += `<code>${escapeHtml(code)}</code>`
    } else if (bold !== undefined || boldAlt !== undefined) {
      html += `<strong>${renderInline(bold ?? boldAlt ?? "")}</strong>`
    } else if (linkText !== undefined && linkUrl !== undefined) {
      html += isSafeUrl(linkUrl)
        ? `<a href="${escapeHtml(linkUrl)}" rel="noopener noreferrer">${renderInline(linkText)}</a>`
        : renderInline(linkText)
    } else if (emphasis !== undefined) {
      html += `<em>${renderInline(emphasis)}</em>`
    }
  }
  return html + escapeHtml(text.slice(last))
}

const BULLET = /^\s*[-*+]\s+(.*)$/
const ORDERED = /^\s*\d+[.)]\s+(.*)$/
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/
const FENCE = /^\s*(```|~~~)/

/**
 * Block Markdown subset: paragraphs, bullet and numbered lists, headings (rendered as bold
 * paragraphs so they cannot outrank the page's own headings) and fenced code.
 */
export const renderMarkdown = (text: string | undefined): string => {
  if (text === undefined || text.trim() === "") return ""
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  const out: Array<string> = []
  let paragraph: Array<string> = []
  let list: { readonly tag: "ul" | "ol"; readonly items: Array<string> } | undefined

  const flushParagraph = () => {
    if (paragraph.length > 0) out.push(`<p>${renderInline(paragraph.join(" "))}</p>`)
    paragraph = []
  }
  const flushList = () => {
    if (list !== undefined) {
      const items = list.items.map((item) => `<li>${renderInline(item)}</li>`).join("")
      out.push(`<${list.tag}>${items}</${list.tag}>`)
    }
    list = undefined
  }

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ""
    const fence = FENCE.exec(line)
    if (fence) {
      flushParagraph()
      flushList()
      const code: Array<string> = []
      i++
      while (i < lines.length && !(lines[i] ?? "").trim().startsWith(fence[1] ?? "```")) {
        code.push(lines[i] ?? "")
        i++
      }
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`)
      continue
    }
    if (line.trim() === "") {
      flushParagraph()
      flushList()
      continue
    }
    const bullet = BULLET.exec(line)
    const ordered = bullet ? null : ORDERED.exec(line)
    const item = bullet ?? ordered
    if (item) {
      flushParagraph()
      const tag = bullet ? "ul" : "ol"
      if (list?.tag !== tag) {
        flushList()
        list = { tag, items: [] }
      }
      list.items.push(item[1] ?? "")
      continue
    }
    const heading = HEADING.exec(line)
    if (heading) {
      flushParagraph()
      flushList()
      out.push(`<p class="md-heading"><strong>${renderInline(heading[1] ?? "")}</strong></p>`)
      continue
    }
    if (list !== undefined && /^\s+/.test(line)) {
      // An indented line continues the previous list item rather than starting a paragraph.
      const items = list.items
      items[items.length - 1] = `${items[items.length - 1] ?? ""} ${line.trim()}`
      continue
    }
    flushList()
    paragraph.push(line.trim())
  }
  flushParagraph()
  flushList()
  return out.join("\n")
}

interface RenderContext {
  readonly schemas: { readonly [name: string]: JsonSchemaObject }
}

// Refs are rendered as links rather than expanded, so recursion only follows inline structure;
// the cap guards against pathological (or maliciously deep) inline schemas.
const MAX_DEPTH = 24

// Generic so that typed document parts keep their types once checked at runtime.
const isRecord = <T>(value: T): value is T & Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const asSchema = (value: unknown): JsonSchemaObject | undefined =>
  isRecord(value) ? (value as JsonSchemaObject) : undefined

const kw = (name: string): string => `<span class="t">${esc(name)}</span>`
const PIPE = ' <span class="op">|</span> '

const literal = (value: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return `<span class="lit">${esc(text)}</span>`
}

const COMPONENT_SCHEMA_PREFIX = "#/components/schemas/"

const refName = (ref: string): string | undefined => {
  if (!ref.startsWith(COMPONENT_SCHEMA_PREFIX)) return undefined
  const pointer = ref.slice(COMPONENT_SCHEMA_PREFIX.length)
  let decoded = pointer
  try {
    decoded = decodeURIComponent(pointer)
  } catch {
    // A malformed escape is shown as written rather than failing the whole page.
  }
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~")
}

const resolveRef = (ref: string, ctx: RenderContext): JsonSchemaObject | undefined => {
  const name = refName(ref)
  return name !== undefined && Object.hasOwn(ctx.schemas, name)
    ? asSchema(ctx.schemas[name])
    : undefined
}

const renderRef = (ref: string, ctx: RenderContext): string => {
  const name = refName(ref)
  if (name !== undefined && Object.hasOwn(ctx.schemas, name)) {
    return `<a class="ref" href="#${anchor("schema", name)}">${esc(name)}</a>`
  }
  return `<span class="ref unresolved" title="unresolved reference">${esc(name ?? ref)}</span>`
}

const typesOf = (schema: JsonSchemaObject): ReadonlyArray<string> =>
  typeof schema.type === "string"
    ? [schema.type]
    : Array.isArray(schema.type)
      ? schema.type.filter((t): t is string => typeof t === "string")
      : []

const isNullSchema = (schema: JsonSchemaObject): boolean =>
  schema.type === "null" ||
  (Array.isArray(schema.enum) && schema.enum.length === 1 && schema.enum[0] === null) ||
  ("const" in schema && schema.const === null)

const STRUCTURAL_KEYS = [
  "$ref",
  "type",
  "properties",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
  "enum",
  "const"
] as const

// Effect emits stacked refinements (e.g. minLength + pattern) as `allOf` members that carry only
// constraints; those are folded into the parent's constraint list instead of shown as `A & B`.
const isConstraintOnly = (schema: JsonSchemaObject): boolean =>
  !STRUCTURAL_KEYS.some((key) => key in schema)

const EFFECT_SPECIAL_IDS: Record<string, string> = {
  "/schemas/unknown": "unknown",
  "/schemas/any": "any",
  "/schemas/void": "void",
  "/schemas/never": "never",
  "/schemas/object": "object",
  "/schemas/%7B%7D": "{}"
}

const renderUnion = (
  members: ReadonlyArray<unknown>,
  ctx: RenderContext,
  depth: number,
  nullable: boolean
): string => {
  let hasNull = nullable
  const parts: Array<string> = []
  for (const raw of members) {
    const member = asSchema(raw)
    if (member !== undefined && isNullSchema(member)) {
      hasNull = true
      continue
    }
    parts.push(renderTypeWithConstraints(raw, ctx, depth + 1))
  }
  if (parts.length === 0) parts.push(kw("never"))
  if (hasNull) parts.push(kw("null"))
  return parts.join(PIPE)
}

const renderObject = (schema: JsonSchemaObject, ctx: RenderContext, depth: number): string => {
  const properties = isRecord(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const rows: Array<string> = []
  for (const [name, property] of Object.entries(properties)) {
    rows.push(renderPropertyRow(name, required.has(name), property, ctx, depth))
  }
  if (isRecord(schema.patternProperties)) {
    for (const [pattern, property] of Object.entries(schema.patternProperties)) {
      const key = `[key matching <span class="lit">/${esc(pattern)}/</span>]`
      rows.push(renderPropertyRow(key, false, property, ctx, depth, true))
    }
  }
  const additional = schema.additionalProperties
  if (isRecord(additional)) {
    rows.push(
      renderPropertyRow('[key: <span class="t">string</span>]', false, additional, ctx, depth, true)
    )
  }
  if (rows.length === 0) {
    return additional === false ? kw("{}") : kw("object")
  }
  return `<span class="brace">{</span><div class="props">${rows.join("")}</div><span class="brace">}</span>`
}

const renderPropertyRow = (
  name: string,
  required: boolean,
  property: unknown,
  ctx: RenderContext,
  depth: number,
  nameIsHtml = false
): string => {
  const schema = asSchema(property)
  const marker = nameIsHtml
    ? ""
    : required
      ? '<span class="req" title="required">*</span>'
      : '<span class="opt" title="optional">?</span>'
  const description = schema?.description ?? ""
  const desc =
    description.trim() === "" ? "" : ` <span class="pdesc">${renderInline(description)}</span>`
  return (
    `<div class="prop"><span class="pname">${nameIsHtml ? name : esc(name)}</span>${marker}: ` +
    `${renderTypeWithConstraints(property, ctx, depth + 1)}${desc}</div>`
  )
}

const renderArray = (schema: JsonSchemaObject, ctx: RenderContext, depth: number): string => {
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined
  if (tuple !== undefined) {
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items
    const parts = tuple.map((item) => renderTypeWithConstraints(item, ctx, depth + 1))
    if (isRecord(rest)) parts.push(`...${renderTypeWithConstraints(rest, ctx, depth + 1)}[]`)
    return `[${parts.join(", ")}]`
  }
  const items = schema.items
  const inner = isRecord(items) ? renderTypeWithConstraints(items, ctx, depth + 1) : kw("unknown")
  return `${kw("array")}&lt;${inner}&gt;`
}

const renderSingleType = (
  type: string,
  schema: JsonSchemaObject,
  ctx: RenderContext,
  depth: number
): string => {
  switch (type) {
    case "object":
      return renderObject(schema, ctx, depth)
    case "array":
      return renderArray(schema, ctx, depth)
    default:
      return kw(type)
  }
}

/** The type of a schema without its constraints, e.g. `string`, `"a" | "b"`, `{ ... }`. */
const renderType = (value: unknown, ctx: RenderContext, depth: number): string => {
  if (value === undefined || value === true) return kw("any")
  if (value === false) return kw("never")
  const schema = asSchema(value)
  if (schema === undefined) return kw("unknown")
  if (depth > MAX_DEPTH) return '<span class="muted">…</span>'

  const types = typesOf(schema)
  const nullable = schema.nullable === true || types.includes("null")
  const withNull = (html: string): string => (nullable ? `${html}${PIPE}${kw("null")}` : html)

  if (typeof schema.$ref === "string") return withNull(renderRef(schema.$ref, ctx))
  const special = typeof schema.$id === "string" ? EFFECT_SPECIAL_IDS[schema.$id] : undefined
  if (special !== undefined) return withNull(kw(special))
  if ("const" in schema) return literal(schema.const)
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((v) => v !== null)
    const hasNull = values.length !== schema.enum.length || nullable
    const parts = values.map(literal)
    if (hasNull) parts.push(kw("null"))
    return parts.length === 0 ? kw("never") : parts.join(PIPE)
  }
  const union = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined
  if (union !== undefined) return renderUnion(union, ctx, depth, nullable)
  if (Array.isArray(schema.allOf)) {
    const structural = schema.allOf.filter((m) => isRecord(m) && !isConstraintOnly(m))
    if (structural.length > 0 && types.length === 0 && schema.properties === undefined) {
      return withNull(
        structural
          .map((m) => renderTypeWithConstraints(m, ctx, depth + 1))
          .join(' <span class="op">&amp;</span> ')
      )
    }
  }

  const concrete = types.filter((t) => t !== "null")
  if (concrete.length > 0) {
    return withNull(concrete.map((t) => renderSingleType(t, schema, ctx, depth)).join(PIPE))
  }
  if (types.length > 0) return kw("null")
  if (isRecord(schema.properties) || isRecord(schema.additionalProperties)) {
    return withNull(renderObject(schema, ctx, depth))
  }
  if (schema.items !== undefined || schema.prefixItems !== undefined) {
    return withNull(renderArray(schema, ctx, depth))
  }
  if (isRecord(schema.not) && Object.keys(schema.not).length === 0) return kw("never")
  return withNull(kw("any"))
}

const formatNumber = (value: unknown): string => (typeof value === "number" ? String(value) : "")

const constraintsOf = (schema: JsonSchemaObject): Array<string> => {
  const sources: Array<JsonSchemaObject> = [schema]
  if (Array.isArray(schema.allOf)) {
    for (const member of schema.allOf) {
      if (isRecord(member) && isConstraintOnly(member)) sources.push(member)
    }
  }
  const out: Array<string> = []
  for (const s of sources) {
    if (typeof s.format === "string") out.push(`format: ${esc(s.format)}`)
    if (typeof s.contentMediaType === "string") out.push(`content: ${esc(s.contentMediaType)}`)
    if (typeof s.pattern === "string") out.push(`pattern: <code>${esc(s.pattern)}</code>`)
    if (typeof s.minLength === "number") out.push(`minLength: ${formatNumber(s.minLength)}`)
    if (typeof s.maxLength === "number") out.push(`maxLength: ${formatNumber(s.maxLength)}`)
    if (typeof s.minimum === "number") {
      out.push(s.exclusiveMinimum === true ? `&gt; ${s.minimum}` : `≥ ${s.minimum}`)
    }
    if (typeof s.exclusiveMinimum === "number") out.push(`&gt; ${s.exclusiveMinimum}`)
    if (typeof s.maximum === "number") {
      out.push(s.exclusiveMaximum === true ? `&lt; ${s.maximum}` : `≤ ${s.maximum}`)
    }
    if (typeof s.exclusiveMaximum === "number") out.push(`&lt; ${s.exclusiveMaximum}`)
    if (typeof s.multipleOf === "number") out.push(`multipleOf: ${formatNumber(s.multipleOf)}`)
    if (typeof s.minItems === "number") out.push(`minItems: ${formatNumber(s.minItems)}`)
    if (typeof s.maxItems === "number") out.push(`maxItems: ${formatNumber(s.maxItems)}`)
    if (s.uniqueItems === true) out.push("unique items")
    if (typeof s.minProperties === "number") {
      out.push(`minProperties: ${formatNumber(s.minProperties)}`)
    }
    if (typeof s.maxProperties === "number") {
      out.push(`maxProperties: ${formatNumber(s.maxProperties)}`)
    }
  }
  if ("default" in schema) out.push(`default: ${literal(schema.default)}`)
  if (Array.isArray(schema.examples) && schema.examples.length > 0) {
    out.push(`example: ${literal(schema.examples[0])}`)
  }
  if (schema.readOnly === true) out.push("read-only")
  if (schema.writeOnly === true) out.push("write-only")
  if (schema.deprecated === true) out.push('<span class="warn">deprecated</span>')
  return out
}

const renderConstraints = (value: unknown): string => {
  const schema = asSchema(value)
  if (schema === undefined) return ""
  const constraints = constraintsOf(schema)
  return constraints.length === 0
    ? ""
    : ` ${constraints.map((c) => `<span class="c">${c}</span>`).join(" ")}`
}

const renderTypeWithConstraints = (value: unknown, ctx: RenderContext, depth: number): string =>
  `${renderType(value, ctx, depth)}${renderConstraints(value)}`

/** A schema as a standalone block: its outline, plus its description unless it is a bare ref. */
const renderSchemaBlock = (
  value: unknown,
  ctx: RenderContext,
  withDescription: boolean
): string => {
  const schema = asSchema(value)
  const description =
    withDescription && schema !== undefined && typeof schema.$ref !== "string"
      ? renderMarkdown(schema.description)
      : ""
  const descHtml = description === "" ? "" : `<div class="sdesc">${description}</div>`
  return `<div class="schema">${renderTypeWithConstraints(value, ctx, 0)}</div>${descHtml}`
}

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"])

interface OperationEntry {
  readonly method: string
  readonly path: string
  readonly pathItem: OpenApiPathItem
  readonly operation: OpenApiOperation
  readonly id: string
  readonly tags: ReadonlyArray<string>
}

const collectOperations = (document: OpenApiDocument): Array<OperationEntry> => {
  const entries: Array<OperationEntry> = []
  const usedIds = new Set<string>()
  const paths = isRecord(document.paths) ? document.paths : {}
  for (const [path, pathItem] of Object.entries(paths)) {
    if (!isRecord(pathItem)) continue
    // Object.entries keeps the document's method order, which the page promises to follow.
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!HTTP_METHODS.has(method) || !isRecord(operation)) continue
      const op = operation as OpenApiOperation
      const base = anchor(
        "op",
        typeof op.operationId === "string" ? op.operationId : `${method}-${path}`
      )
      let id = base
      for (let n = 2; usedIds.has(id); n++) id = `${base}-${n}`
      usedIds.add(id)
      const tags = Array.isArray(op.tags) ? op.tags.filter((t) => typeof t === "string") : []
      entries.push({ method, path, pathItem: pathItem as OpenApiPathItem, operation: op, id, tags })
    }
  }
  return entries
}

const methodBadge = (method: string): string =>
  `<span class="method m-${esc(method)}">${esc(method.toUpperCase())}</span>`

// Path templates like `/payments/{id}` get their parameters highlighted.
const renderPath = (path: string): string =>
  path
    .split(/(\{[^}]*\})/)
    .map((part) =>
      part.startsWith("{") && part.endsWith("}")
        ? `<span class="pp">${esc(part)}</span>`
        : esc(part)
    )
    .join("")

const describeScheme = (name: string, scheme: OpenApiSecurityScheme | undefined): string => {
  if (scheme === undefined) return `<code>${esc(name)}</code>`
  const label = ` <span class="muted">(${esc(name)})</span>`
  const where = (location: string | undefined, key: string | undefined): string => {
    const keyHtml = `<code>${esc(key ?? name)}</code>`
    switch (location) {
      case "query":
        return `query parameter ${keyHtml}`
      case "cookie":
        return `cookie ${keyHtml}`
      default:
        return `header ${keyHtml}`
    }
  }
  switch (scheme.type) {
    case "apiKey":
      return `${where(scheme.in, scheme.name)}${label}`
    case "http": {
      const httpScheme = (scheme.scheme ?? "").toLowerCase()
      const value =
        httpScheme === "bearer"
          ? `Bearer &lt;${esc(scheme.bearerFormat ?? "token")}&gt;`
          : httpScheme === "basic"
            ? "Basic &lt;base64(user:password)&gt;"
            : `${esc(scheme.scheme ?? "")} &lt;credentials&gt;`
      return `header <code>Authorization: ${value}</code>${label}`
    }
    case "oauth2":
    case "openIdConnect":
      return `header <code>Authorization: Bearer &lt;token&gt;</code>${label}`
    case "mutualTLS":
      return `client TLS certificate${label}`
    default:
      return `<code>${esc(name)}</code>`
  }
}

const renderSecurity = (
  requirements: ReadonlyArray<OpenApiSecurityRequirement> | undefined,
  schemes: { readonly [name: string]: OpenApiSecurityScheme }
): string => {
  if (requirements === undefined || requirements.length === 0) {
    return '<p class="muted">None: no authentication required.</p>'
  }
  const alternatives = requirements.map((requirement) => {
    const names = isRecord(requirement) ? Object.keys(requirement) : []
    if (names.length === 0) return "no authentication"
    return names
      .map((name) => {
        const scopes = requirement[name]
        const scopeHtml =
          Array.isArray(scopes) && scopes.length > 0
            ? ` <span class="muted">scopes: ${scopes.map(esc).join(", ")}</span>`
            : ""
        return `${describeScheme(name, Object.hasOwn(schemes, name) ? schemes[name] : undefined)}${scopeHtml}`
      })
      .join(" <em>and</em> ")
  })
  if (alternatives.length === 1) return `<p>${alternatives[0]}</p>`
  return `<p>Any one of:</p><ul>${alternatives.map((a) => `<li>${a}</li>`).join("")}</ul>`
}

const mergeParameters = (entry: OperationEntry): Array<OpenApiParameter> => {
  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, OpenApiParameter>()
  for (const list of [entry.pathItem.parameters, entry.operation.parameters]) {
    if (!Array.isArray(list)) continue
    for (const parameter of list) {
      if (isRecord(parameter)) byKey.set(`${parameter.in}\u0000${parameter.name}`, parameter)
    }
  }
  return [...byKey.values()]
}

const renderParameters = (parameters: ReadonlyArray<OpenApiParameter>, ctx: RenderContext) => {
  if (parameters.length === 0) return ""
  const rows = parameters.map((p) => {
    const required = p.required === true || p.in === "path"
    // Generated documents often put the only description on a referenced component schema.
    const referenced =
      typeof p.schema?.$ref === "string" ? resolveRef(p.schema.$ref, ctx) : undefined
    const description = p.description ?? p.schema?.description ?? referenced?.description ?? ""
    const deprecated = p.deprecated === true ? ' <span class="warn">deprecated</span>' : ""
    return (
      `<tr><td><code>${esc(p.name)}</code>${deprecated}</td><td>${esc(p.in)}</td>` +
      `<td>${required ? '<span class="req">required</span>' : '<span class="muted">optional</span>'}</td>` +
      `<td class="type">${renderTypeWithConstraints(p.schema, ctx, 0)}</td>` +
      `<td>${renderInline(description)}</td></tr>`
    )
  })
  return (
    '<h4>Parameters</h4><div class="table-wrap"><table class="params"><thead><tr>' +
    "<th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Description</th>" +
    `</tr></thead><tbody>${rows.join("")}</tbody></table></div>`
  )
}

const renderContent = (content: OpenApiContent | undefined, ctx: RenderContext): string => {
  if (!isRecord(content)) return ""
  return Object.entries(content)
    .map(([mediaType, media]) => {
      const schema = isRecord(media) ? media.schema : undefined
      return (
        `<div class="media"><span class="mt">${esc(mediaType)}</span>` +
        `${schema === undefined ? "" : renderSchemaBlock(schema, ctx, true)}</div>`
      )
    })
    .join("")
}

const renderRequestBody = (body: OpenApiRequestBody | undefined, ctx: RenderContext): string => {
  if (!isRecord(body)) return ""
  const required = body.required === true ? ' <span class="req">required</span>' : ""
  return (
    `<h4>Request body${required}</h4>${renderMarkdown(body.description)}` +
    renderContent(body.content, ctx)
  )
}

const statusClass = (status: string): string => {
  const first = status.charAt(0)
  return first >= "1" && first <= "5" ? `s-${first}xx` : "s-default"
}

const renderResponses = (responses: OpenApiResponses | undefined, ctx: RenderContext): string => {
  if (!isRecord(responses)) return ""
  // Numeric and string keys are both enumerated as strings; integer-like keys come out in
  // ascending order, which is the order readers expect for status codes.
  const entries = Object.entries(responses as { readonly [status: string]: OpenApiResponse })
  if (entries.length === 0) return ""
  const items = entries.map(([status, response]) => {
    const description = isRecord(response) ? renderMarkdown(response.description) : ""
    const content = isRecord(response) ? renderContent(response.content, ctx) : ""
    return (
      `<div class="response"><div class="rhead"><span class="status ${statusClass(status)}">` +
      `${esc(status)}</span><div class="rdesc">${description}</div></div>${content}</div>`
    )
  })
  return `<h4>Responses</h4>${items.join("")}`
}

const renderOperation = (
  entry: OperationEntry,
  document: OpenApiDocument,
  ctx: RenderContext,
  schemes: { readonly [name: string]: OpenApiSecurityScheme }
): string => {
  const op = entry.operation
  const deprecated = op.deprecated === true
  const summary = op.summary ?? entry.pathItem.summary
  const description = op.description ?? entry.pathItem.description
  const tags = entry.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join("")
  const operationId =
    typeof op.operationId === "string"
      ? `<span class="opid" title="operationId">${esc(op.operationId)}</span>`
      : ""
  return [
    `<section class="operation${deprecated ? " deprecated" : ""}" id="${entry.id}">`,
    `<h3 class="op-title">${methodBadge(entry.method)} <code class="path">${renderPath(entry.path)}</code>`,
    deprecated ? ' <span class="warn">deprecated</span>' : "",
    "</h3>",
    `<div class="op-meta">${operationId}${tags}</div>`,
    summary === undefined ? "" : `<p class="summary">${renderInline(summary)}</p>`,
    renderMarkdown(description),
    "<h4>Security</h4>",
    renderSecurity(Array.isArray(op.security) ? op.security : document.security, schemes),
    renderParameters(mergeParameters(entry), ctx),
    renderRequestBody(op.requestBody, ctx),
    renderResponses(op.responses, ctx),
    "</section>"
  ].join("")
}

const UNTAGGED = "Other"

interface TagGroup {
  readonly name: string
  readonly description: string | undefined
  readonly operations: Array<OperationEntry>
}

const groupByTag = (
  document: OpenApiDocument,
  operations: ReadonlyArray<OperationEntry>
): Array<TagGroup> => {
  const groups = new Map<string, TagGroup>()
  const declared = Array.isArray(document.tags) ? document.tags : []
  for (const tag of declared) {
    if (isRecord(tag) && typeof tag.name === "string" && !groups.has(tag.name)) {
      groups.set(tag.name, { name: tag.name, description: tag.description, operations: [] })
    }
  }
  const untagged: Array<OperationEntry> = []
  for (const entry of operations) {
    if (entry.tags.length === 0) untagged.push(entry)
    for (const tag of entry.tags) {
      let group = groups.get(tag)
      if (group === undefined) {
        group = { name: tag, description: undefined, operations: [] }
        groups.set(tag, group)
      }
      group.operations.push(entry)
    }
  }
  const result = [...groups.values()].filter((g) => g.operations.length > 0)
  if (untagged.length > 0) {
    result.push({ name: UNTAGGED, description: undefined, operations: untagged })
  }
  return result
}

const tagAnchor = (name: string): string => anchor("tag", name)

const renderNav = (
  title: string,
  groups: ReadonlyArray<TagGroup>,
  headedTags: ReadonlySet<string>,
  schemaNames: ReadonlyArray<string>
): string => {
  const groupHtml = groups.map((group) => {
    const heading = headedTags.has(group.name)
      ? `<a href="#${tagAnchor(group.name)}">${esc(group.name)}</a>`
      : esc(group.name)
    const items = group.operations.map((entry) => {
      const label = entry.operation.summary ?? ""
      const titleAttr = label === "" ? "" : ` title="${esc(label)}"`
      return (
        `<li><a href="#${entry.id}"${titleAttr}>${methodBadge(entry.method)}` +
        `<span class="nav-path">${esc(entry.path)}</span></a></li>`
      )
    })
    return `<div class="nav-group"><div class="nav-tag">${heading}</div><ul>${items.join("")}</ul></div>`
  })
  const schemas =
    schemaNames.length === 0
      ? ""
      : '<div class="nav-group"><div class="nav-tag"><a href="#schemas">Schemas</a></div><ul>' +
        schemaNames
          .map((n) => `<li><a class="nav-schema" href="#${anchor("schema", n)}">${esc(n)}</a></li>`)
          .join("") +
        "</ul></div>"
  return (
    `<nav class="sidebar" aria-label="Table of contents"><div class="nav-title">` +
    `<a href="#top">${esc(title)}</a></div>${groupHtml.join("")}${schemas}</nav>`
  )
}

const renderSecuritySchemes = (schemes: {
  readonly [name: string]: OpenApiSecurityScheme
}): string => {
  const names = Object.keys(schemes)
  if (names.length === 0) return ""
  const items = names.map((name) => {
    const scheme = schemes[name]
    const description = isRecord(scheme) ? renderInline(scheme.description ?? "") : ""
    return `<li>${describeScheme(name, scheme)}${description === "" ? "" : `: ${description}`}</li>`
  })
  return `<section class="intro-block"><h2>Authentication</h2><ul>${items.join("")}</ul></section>`
}

const renderServers = (servers: ReadonlyArray<OpenApiServer> | undefined): string => {
  if (!Array.isArray(servers) || servers.length === 0) return ""
  const items = servers
    .filter(isRecord)
    .map(
      (s) =>
        `<li><code>${esc(s.url)}</code>${s.description === undefined ? "" : ` ${renderInline(s.description)}`}</li>`
    )
  return `<section class="intro-block"><h2>Servers</h2><ul>${items.join("")}</ul></section>`
}

const renderSchemasSection = (names: ReadonlyArray<string>, ctx: RenderContext): string => {
  if (names.length === 0) return ""
  const items = names.map((name) => {
    const schema = ctx.schemas[name]
    const title =
      isRecord(schema) && typeof schema.title === "string" && schema.title !== name
        ? ` <span class="muted">${esc(schema.title)}</span>`
        : ""
    return (
      `<section class="component" id="${anchor("schema", name)}"><h3><code>${esc(name)}</code>${title}</h3>` +
      `${isRecord(schema) ? renderMarkdown(schema.description) : ""}` +
      `<div class="schema">${renderTypeWithConstraints(schema, ctx, 0)}</div></section>`
    )
  })
  return (
    '<section id="schemas" class="schemas"><h2>Schemas</h2>' +
    '<p class="muted">Fields marked <span class="req">*</span> are required.</p>' +
    `${items.join("")}</section>`
  )
}

const CSS = `
:root{--bg:#fff;--fg:#1f2328;--muted:#656d76;--border:#d8dee4;--panel:#f6f8fa;--link:#0969da;--accent:#8250df;--req:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--border:#30363d;--panel:#161b22;--link:#4493f8;--accent:#a371f7;--req:#ff7b72}}
*{box-sizing:border-box}
html{scroll-behavior:smooth}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;display:grid;grid-template-columns:290px minmax(0,1fr)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
code,pre,.schema,.path,.nav-path{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:.9em}
p code,li code,td code{background:var(--panel);border:1px solid var(--border);border-radius:4px;padding:0 .25em}
pre{background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:.75em;overflow:auto}
.sidebar{position:sticky;top:0;height:100vh;overflow-y:auto;border-right:1px solid var(--border);background:var(--panel);padding:1rem .75rem;font-size:.9em}
.sidebar ul{list-style:none;margin:.25rem 0 1rem;padding:0}
.sidebar li a{display:flex;align-items:center;gap:.4rem;padding:.15rem .35rem;border-radius:4px;color:var(--fg)}
.sidebar li a:hover{background:var(--border);text-decoration:none}
.nav-title{font-weight:700;font-size:1.1em;margin-bottom:1rem}.nav-title a{color:var(--fg)}
.nav-tag{font-weight:600;text-transform:uppercase;font-size:.8em;letter-spacing:.04em;color:var(--muted)}
.nav-tag a{color:inherit}
.nav-path{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.sidebar .method{min-width:3.6em;font-size:.7em}
main{padding:2rem 2.5rem 4rem;max-width:64rem}
h1{margin:0 0 .25rem;font-size:2rem}h2{margin-top:2.5rem;padding-bottom:.3rem;border-bottom:1px solid var(--border)}
h4{margin:1.25rem 0 .4rem;font-size:.95em}
.version{display:inline-block;margin-left:.5rem;padding:0 .5em;border:1px solid var(--border);border-radius:999px;font-size:.5em;vertical-align:middle;color:var(--muted)}
.muted{color:var(--muted)}.warn{color:#9a6700;font-weight:600;font-size:.85em}
.operation,.component{border:1px solid var(--border);border-radius:8px;padding:1rem 1.25rem;margin:1.25rem 0;scroll-margin-top:1rem}
.operation.deprecated .path{text-decoration:line-through}
.op-title{margin:0;display:flex;align-items:center;gap:.6rem;flex-wrap:wrap;font-size:1.1em}
.op-meta{margin:.35rem 0;display:flex;gap:.4rem;flex-wrap:wrap;font-size:.8em}
.opid{color:var(--muted);font-family:ui-monospace,Menlo,Consolas,monospace}
.tag{background:var(--panel);border:1px solid var(--border);border-radius:999px;padding:0 .5em}
.summary{font-weight:600}
.pp{color:var(--accent)}
.method{display:inline-block;min-width:4.2em;text-align:center;padding:.1em .4em;border-radius:4px;color:#fff;font-weight:700;font-size:.75em;letter-spacing:.03em;font-family:ui-monospace,Menlo,Consolas,monospace}
.m-get{background:#0969da}.m-post{background:#1a7f37}.m-put{background:#bc4c00}.m-patch{background:#8250df}.m-delete{background:#cf222e}.m-head,.m-options,.m-trace{background:#57606a}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9em}
th,td{border:1px solid var(--border);padding:.35rem .55rem;text-align:left;vertical-align:top}
th{background:var(--panel)}
td.type{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
.req{color:var(--req);font-weight:600}.opt{color:var(--muted)}
.schema{background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:.6rem .8rem;overflow-x:auto;line-height:1.6}
.sdesc{font-size:.9em}
.props{padding-left:1.25rem;border-left:1px dotted var(--border);margin-left:.2rem}
.prop{white-space:normal}
.pname{font-weight:600}
.pdesc{color:var(--muted);font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:.95em}
.pdesc::before{content:"— "}
.t{color:var(--accent)}.lit{color:#0a7d6c}.op{color:var(--muted)}
.c{display:inline-block;font-size:.8em;color:var(--muted);border:1px solid var(--border);border-radius:4px;padding:0 .35em;margin-left:.15em}
.ref{font-weight:600}.unresolved{color:var(--req)}
.media{margin:.4rem 0}.mt{display:inline-block;font-size:.8em;color:var(--muted);margin-bottom:.2rem}
.response{margin:.5rem 0 .9rem}
.rhead{display:flex;gap:.6rem;align-items:baseline}.rdesc p{margin:.1rem 0}
.status{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:700;padding:0 .45em;border-radius:4px;border:1px solid currentColor}
.s-1xx{color:var(--muted)}.s-2xx{color:#1a7f37}.s-3xx{color:#0969da}.s-4xx{color:#bc4c00}.s-5xx{color:#cf222e}.s-default{color:var(--muted)}
.tag-heading{scroll-margin-top:1rem}
@media (max-width:900px){body{display:block}.sidebar{position:static;height:auto;border-right:0;border-bottom:1px solid var(--border)}main{padding:1.25rem}}
`
  .trim()
  .replace(/\n/g, "")

/**
 * Renders the full HTML page for an OpenAPI 3.1 document.
 *
 * The result is a complete document with inline CSS and no scripts, meant to be served as
 * `text/html` at `/docs`.
 */
export const renderApiReferencePage = (
  document: OpenApiDocument,
  options?: ApiReferencePageOptions
): string => {
  const info: Partial<OpenApiInfo> = isRecord(document.info) ? document.info : {}
  const title = options?.title ?? info.title ?? "API reference"
  const components = isRecord(document.components) ? document.components : {}
  const schemas = isRecord(components.schemas) ? components.schemas : {}
  const schemes = isRecord(components.securitySchemes) ? components.securitySchemes : {}
  const ctx: RenderContext = { schemas }
  const schemaNames = Object.keys(schemas).sort((a, b) => a.localeCompare(b))

  const operations = collectOperations(document)
  const groups = groupByTag(document, operations)
  const descriptions = new Map(groups.map((g) => [g.name, g.description]))
  const hasTags = operations.some((entry) => entry.tags.length > 0)

  // Operations stay in document order; a tag heading is inserted whenever the primary tag changes,
  // which for grouped documents such as `fromApi` output yields one section per tag.
  const headedTags = new Set<string>()
  const body: Array<string> = []
  let currentTag: string | undefined
  for (const entry of operations) {
    const tag = entry.tags[0] ?? (hasTags ? UNTAGGED : undefined)
    if (tag !== undefined && tag !== currentTag) {
      const first = !headedTags.has(tag)
      headedTags.add(tag)
      const id = first ? ` id="${tagAnchor(tag)}"` : ""
      body.push(`<h2 class="tag-heading"${id}>${esc(tag)}</h2>`)
      if (first) body.push(renderMarkdown(descriptions.get(tag)))
    }
    currentTag = tag
    body.push(renderOperation(entry, document, ctx, schemes))
  }

  const version =
    typeof info.version === "string" && info.version !== ""
      ? `<span class="version">v${esc(info.version)}</span>`
      : ""
  const subtitle =
    options?.title !== undefined && typeof info.title === "string" && info.title !== title
      ? `<p class="muted">${esc(info.title)}</p>`
      : ""
  const summary =
    typeof info.summary === "string" ? `<p class="summary">${renderInline(info.summary)}</p>` : ""

  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // Defence in depth: even if something slipped past escaping, nothing could load or run.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
    `<title>${esc(title)}</title>`,
    `<style>${CSS}</style>`,
    "</head>",
    "<body>",
    renderNav(title, groups, headedTags, schemaNames),
    '<main id="top">',
    "<header>",
    `<h1>${esc(title)}${version}</h1>`,
    subtitle,
    summary,
    renderMarkdown(info.description),
    "</header>",
    renderServers(document.servers),
    renderSecuritySchemes(schemes),
    operations.length === 0 ? '<p class="muted">This document has no operations.</p>' : "",
    body.join("\n"),
    renderSchemasSection(schemaNames, ctx),
    "</main>",
    "</body>",
    "</html>",
    ""
  ].join("\n")
}
