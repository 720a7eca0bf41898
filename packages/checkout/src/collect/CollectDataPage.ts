/**
 * The data-collection web page a wallet opens at `collectData.url` (WIRE.md §1): a form rendered
 * from the collect-data JSON Schema, its errors shown beside their fields, and, once the data is
 * accepted, a page that tells the embedding web view `IC_COMPLETE`.
 *
 * One self-contained HTML string: inline styles, one small inline script allowed by its hash, no
 * framework, font or CDN. The form is a plain `application/x-www-form-urlencoded` POST, so it
 * works without JavaScript; the script only upper-cases country codes as they are typed, moves
 * focus to the error summary and, on the done page, signals the wallet. Every string that comes
 * from the schema, the submitted values or the issues is HTML-escaped.
 */
import {
  type CollectDataProperty,
  type CollectDataSchema,
  collectDataSchema,
  escapeHtml,
  type FieldIssue,
  type Language
} from "@pay/core"
import { CSS, SCRIPT, SCRIPT_HASH } from "./CollectDataPageAssets.js"
import { COLLECT_STRINGS, type CollectDataStrings, localizedSchema } from "./CollectDataStrings.js"

export { SCRIPT_HASH } from "./CollectDataPageAssets.js"

export interface CollectDataPageOptions {
  /** The URL the form POSTs to (urlencoded); usually the page's own URL. */
  readonly action: string
  /** The schema to render; the engine's collect-data schema by default. */
  readonly schema?: CollectDataSchema
  /** Values to show in the inputs: what was submitted, or a wallet's prefill. */
  readonly values?: Partial<Record<string, string>>
  /** Problems to show, each beside the field its path names (`collectedData.dob`). */
  readonly issues?: ReadonlyArray<FieldIssue>
  /** The path prefix of the issues' fields; `collectedData` by default ("" for none). */
  readonly issuePrefix?: string
  /** The data was accepted: show the success message and signal `IC_COMPLETE`. */
  readonly done?: boolean
  /**
   * The page cannot be used (no such payment, expired, paid, a link without accounts): show only
   * this message, no form, so nobody types in details that could not be kept.
   */
  readonly problem?: string
  /** The page's title and heading. */
  readonly title?: string
  /** A sentence under the heading saying why the details are needed. */
  readonly intro?: string
  /** A wallet's `theme` query parameter; without it the page follows the device's setting. */
  readonly theme?: "light" | "dark"
  /** The page's language (the web view's `Accept-Language`); English by default. */
  readonly language?: Language
}

const DEFAULT_PREFIX = "collectedData"

const esc = (value: string): string => escapeHtml(value)

const path = (prefix: string, name: string): string => (prefix === "" ? name : `${prefix}.${name}`)

// The browser's autofill categories for the fields people fill in often (WHATWG autocomplete).
const AUTOCOMPLETE: Readonly<Record<string, string>> = {
  fullName: "name",
  dob: "bday",
  porCountry: "country",
  porAddress: "street-address"
}

const SAFE_ID = /^[A-Za-z][A-Za-z0-9_-]*$/
// A pattern of only capital letters (`^[A-Z]{2}$`): the input upper-cases as people type.
const CAPITALS_ONLY = /^\^\[A-Z\](\{\d+(,\d*)?\}|\+)?\$$/

const sentence = (message: string): string =>
  message.length === 0 ? message : message[0]!.toUpperCase() + message.slice(1)

interface Group {
  readonly ids: ReadonlyArray<string>
  readonly legend: string
}

type Item =
  | { readonly kind: "field"; readonly id: string }
  | { readonly kind: "group"; readonly group: Group }

// The words the titles of a group share ("Place of Birth" for "Place of Birth Country" and
// "Place of Birth Address"), else a numbered name.
const legendOf = (
  titles: ReadonlyArray<string>,
  index: number,
  strings: CollectDataStrings
): string => {
  const words = titles.map((title) => title.split(/\s+/))
  const first = words[0] ?? []
  let n = 0
  while (n < first.length && words.every((w) => w.length > n + 1 && w[n] === first[n])) n++
  // "Lugar de nacimiento:" for "Lugar de nacimiento: país": the shared words, not their colon.
  return n > 0 ? first.slice(0, n).join(" ").replace(/:$/, "") : strings.option(index + 1)
}

const titleOf = (schema: CollectDataSchema, id: string): string =>
  schema.properties[id]?.title ?? id

/** The form's layout: properties in schema order, each `anyOf` pair in a fieldset of its own. */
const layout = (schema: CollectDataSchema, strings: CollectDataStrings): ReadonlyArray<Item> => {
  const ids = Object.keys(schema.properties)
  const groupOf = new Map<string, Group>()
  schema.anyOf.forEach((branch, index) => {
    const members = ids.filter(
      (id) => branch.required.includes(id) && !schema.required.includes(id) && !groupOf.has(id)
    )
    if (members.length === 0) return
    const group = {
      ids: members,
      legend: legendOf(
        members.map((id) => titleOf(schema, id)),
        index,
        strings
      )
    }
    for (const id of members) groupOf.set(id, group)
  })
  const items: Array<Item> = []
  const placed = new Set<Group>()
  for (const id of ids) {
    const group = groupOf.get(id)
    if (group === undefined) items.push({ kind: "field", id })
    else if (!placed.has(group)) {
      placed.add(group)
      items.push({ kind: "group", group })
    }
  }
  return items
}

interface RenderContext {
  readonly schema: CollectDataSchema
  readonly values: Partial<Record<string, string>>
  readonly errors: ReadonlyMap<string, ReadonlyArray<string>>
  readonly required: ReadonlySet<string>
  readonly inputIds: ReadonlyMap<string, string>
  readonly strings: CollectDataStrings
}

const attr = (name: string, value: string | number | undefined): string =>
  value === undefined ? "" : ` ${name}="${esc(String(value))}"`

const flag = (name: string, on: boolean): string => (on ? ` ${name}` : "")

const renderField = (ctx: RenderContext, id: string): string => {
  const property: CollectDataProperty | undefined = ctx.schema.properties[id]
  if (property === undefined) return ""
  const inputId = ctx.inputIds.get(id) ?? `f-${id}`
  const required = ctx.required.has(id)
  const errors = ctx.errors.get(id) ?? []
  const hintId = `${inputId}-hint`
  const errorId = `${inputId}-error`
  const describedBy = [property.description ? hintId : "", errors.length > 0 ? errorId : ""]
    .filter((s) => s !== "")
    .join(" ")
  const label = `<label for="${esc(inputId)}">${esc(property.title)}${required ? ` <span class="req">${esc(ctx.strings.required)}</span>` : ""}</label>`
  const hint = property.description
    ? `<p class="hint" id="${esc(hintId)}">${esc(property.description)}</p>`
    : ""
  const error =
    errors.length > 0
      ? `<p class="error" id="${esc(errorId)}">${errors.map((m) => esc(sentence(m))).join("<br>")}</p>`
      : ""
  const common =
    ` id="${esc(inputId)}" name="${esc(id)}"` +
    flag("required", required) +
    attr("aria-describedby", describedBy === "" ? undefined : describedBy) +
    (errors.length > 0 ? ' aria-invalid="true"' : "")
  const value = ctx.values[id]

  if (property.type === "boolean") {
    const input = `<input type="checkbox" value="true"${common}${flag("checked", value === "true")}>`
    return `<div class="field check">${input}${label}${hint}${error}</div>`
  }

  const isDate = property.format === "date"
  const capitals = property.pattern !== undefined && CAPITALS_ONLY.test(property.pattern)
  const input =
    `<input type="${isDate ? "date" : "text"}"${common}` +
    attr("value", value) +
    attr("minlength", property.minLength) +
    attr("maxlength", property.maxLength) +
    // A date input ignores `pattern`; a browser without one shows a text box that uses it.
    attr("pattern", isDate ? "\\d{4}-\\d{2}-\\d{2}" : property.pattern) +
    attr("placeholder", isDate ? "YYYY-MM-DD" : undefined) +
    attr("autocomplete", AUTOCOMPLETE[id] ?? "off") +
    (capitals ? ' autocapitalize="characters" spellcheck="false" data-uppercase' : "") +
    ">"
  return `<div class="field">${label}${hint}${error}${input}</div>`
}

const renderGroup = (ctx: RenderContext, group: Group, index: number): string =>
  `<fieldset id="group-${index}"><legend>${esc(group.legend)}</legend>${group.ids
    .map((id) => renderField(ctx, id))
    .join("")}</fieldset>`

const joinNames = (names: ReadonlyArray<string>, or: string): string =>
  names.length <= 1
    ? (names[0] ?? "")
    : `${names.slice(0, -1).join(", ")} ${or} ${names[names.length - 1]}`

const inputIdsOf = (schema: CollectDataSchema): ReadonlyMap<string, string> =>
  new Map(
    Object.keys(schema.properties).map((id, index) => [
      id,
      SAFE_ID.test(id) ? `f-${id}` : `f-${index}`
    ])
  )

const renderSummary = (
  ctx: RenderContext,
  general: ReadonlyArray<string>,
  count: number
): string => {
  if (count === 0) return ""
  const items: Array<string> = []
  for (const id of Object.keys(ctx.schema.properties)) {
    for (const message of ctx.errors.get(id) ?? []) {
      const href = `#${ctx.inputIds.get(id) ?? ""}`
      items.push(
        `<li><a href="${esc(href)}">${esc(titleOf(ctx.schema, id))}: ${esc(message)}</a></li>`
      )
    }
  }
  for (const message of general) items.push(`<li>${esc(sentence(message))}</li>`)
  const heading = ctx.strings.problems(count)
  return [
    '<div class="summary" id="error-summary" role="alert" tabindex="-1" aria-labelledby="error-summary-title">',
    `<h2 id="error-summary-title">${heading}</h2>`,
    `<ul>${items.join("")}</ul>`,
    "</div>"
  ].join("")
}

const renderForm = (
  options: CollectDataPageOptions,
  schema: CollectDataSchema,
  strings: CollectDataStrings
): string => {
  const prefix = options.issuePrefix ?? DEFAULT_PREFIX
  const errors = new Map<string, Array<string>>()
  const general: Array<string> = []
  for (const issue of options.issues ?? []) {
    const id = Object.keys(schema.properties).find((name) => issue.field === path(prefix, name))
    const message = strings.message(issue.message)
    if (id === undefined) general.push(message)
    else errors.set(id, [...(errors.get(id) ?? []), message])
  }
  const groups = layout(schema, strings).flatMap((item) =>
    item.kind === "group" ? [item.group] : []
  )
  // A single `anyOf` branch is simply required; with several, one of them in full is.
  const required = new Set([
    ...schema.required,
    ...(groups.length === 1 ? (groups[0]?.ids ?? []) : [])
  ])
  const ctx: RenderContext = {
    schema,
    values: options.values ?? {},
    errors,
    required,
    inputIds: inputIdsOf(schema),
    strings
  }
  const note =
    groups.length > 1
      ? `<p class="note" id="groups-note">${esc(strings.fillOneOf)} ${esc(
          joinNames(
            groups.map((g) => g.legend),
            strings.or
          )
        )}.</p>`
      : ""
  let groupIndex = 0
  let noted = false
  const body = layout(schema, strings).map((item) => {
    if (item.kind === "field") return renderField(ctx, item.id)
    const html = (noted ? "" : note) + renderGroup(ctx, item.group, groupIndex++)
    noted = true
    return html
  })
  return [
    renderSummary(ctx, general, options.issues?.length ?? 0),
    `<form method="post" action="${esc(options.action)}" enctype="application/x-www-form-urlencoded" accept-charset="utf-8">`,
    ...body,
    `<button type="submit">${esc(strings.submit)}</button>`,
    "</form>"
  ].join("\n")
}

const formAction = (action: string): string => {
  if (!URL.canParse(action)) return "'self'"
  const url = new URL(action)
  return url.protocol === "https:" || url.protocol === "http:" ? `'self' ${url.origin}` : "'self'"
}

/**
 * What the page may do, for a form posting to `action`: its styles, its one script (by hash),
 * `data:` images, no `<base>`, and form posts to itself only. Sent in a `<meta>` tag (a page
 * saved or shown without the engine's headers keeps it) and, with `frame-ancestors`, as the
 * response's header (CollectDataRoutes.ts).
 */
export const collectDataPagePolicy = (action: string): string =>
  [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src ${SCRIPT_HASH}`,
    "img-src data:",
    "base-uri 'none'",
    `form-action ${formAction(action)}`
  ].join("; ")

/** Renders the whole page: the form (with any issues) or, once `done`, the success message. */
export const renderCollectDataPage = (options: CollectDataPageOptions): string => {
  const language = options.language ?? "en"
  const strings = COLLECT_STRINGS[language]
  const schema = localizedSchema(options.schema ?? collectDataSchema, strings)
  const title = options.title ?? strings.title
  const done = options.done === true
  const problem = done ? undefined : options.problem
  const content = done
    ? [
        '<div class="done" role="status">',
        `<h1>${esc(strings.thankYou)}</h1>`,
        `<p>${esc(strings.received)}</p>`,
        "</div>"
      ].join("\n")
    : problem !== undefined
      ? [
          `<h1>${esc(title)}</h1>`,
          '<div class="summary" id="error-summary" role="alert" tabindex="-1">',
          `<p>${esc(sentence(problem))}</p>`,
          "</div>"
        ].join("\n")
      : [
          `<h1>${esc(title)}</h1>`,
          `<p class="intro">${esc(options.intro ?? strings.intro)}</p>`,
          renderForm(options, schema, strings)
        ].join("\n")
  const csp = collectDataPagePolicy(options.action)
  return [
    "<!doctype html>",
    `<html lang="${language}"${attr("data-theme", options.theme)}>`,
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">',
    '<meta name="referrer" content="no-referrer">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">`,
    `<title>${esc(done ? `${title}: ${strings.receivedTitle}` : title)}</title>`,
    `<style>${CSS}</style>`,
    "</head>",
    `<body data-state="${done ? "done" : problem !== undefined ? "problem" : "form"}">`,
    "<main>",
    content,
    "</main>",
    `<script>${SCRIPT}</script>`,
    "</body>",
    "</html>",
    ""
  ].join("\n")
}
