/**
 * The collect-data requirement of a payment option (SPEC.md §2 "Collect-data object"): the JSON
 * Schema (draft 2020-12) the buyer's details must satisfy, the deprecated `fields` list wallets
 * still read, and the checks applied to what a wallet or the web form submits.
 *
 * Submitted data is checked with ajv (the most used JSON Schema validator, 2020-12 build) plus
 * ajv-formats for `date`, against the very schema sent to wallets, so the engine and every wallet
 * that validates client-side agree. ajv's own messages are replaced by ones a person can act on,
 * each naming its field with a dotted path (`collectedData.dob`).
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
// Named imports: both packages are CommonJS, whose default export Node's ESM (the built package)
// and bundlers read differently. ajv-formats' plugin is a default export only, so the `date`
// format is taken from its formats module by name, and added as the plugin itself adds it.
import { fullFormats } from "ajv-formats/dist/formats.js"
import { Either } from "effect"
import type { FieldIssue } from "../shared/Errors.js"

/** A JSON Schema property of the collect-data schema, as much of it as this module reads. */
export interface CollectDataProperty {
  readonly type: "string" | "boolean"
  readonly title: string
  readonly description: string
  readonly format?: string
  readonly pattern?: string
  readonly minLength?: number
  readonly maxLength?: number
  readonly const?: boolean
}

/** The collect-data JSON Schema's shape (an object schema with `anyOf` groups of `required`). */
export interface CollectDataSchema {
  readonly $schema: string
  readonly type: "object"
  readonly additionalProperties: false
  readonly properties: { readonly [id: string]: CollectDataProperty }
  readonly required: ReadonlyArray<string>
  readonly anyOf: ReadonlyArray<{ readonly required: ReadonlyArray<string> }>
}

const COUNTRY_PATTERN = "^[A-Z]{2}$"

/**
 * The schema sent in every `collectData` object. Titles and descriptions are the reference
 * API's; properties are listed in the order a person fills them in (the web form follows it).
 */
export const collectDataSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  properties: {
    fullName: {
      type: "string",
      title: "Full Name",
      description: "User's full legal name",
      minLength: 1
    },
    dob: {
      type: "string",
      title: "Date of Birth",
      description: "Date of birth in YYYY-MM-DD format",
      format: "date"
    },
    pobCountry: {
      type: "string",
      title: "Place of Birth Country",
      description: "Place of birth country code (ISO 3166-1 alpha-2)",
      pattern: COUNTRY_PATTERN
    },
    pobAddress: {
      type: "string",
      title: "Place of Birth Address",
      description: "Place of birth city and state (e.g., 'New York, NY')",
      maxLength: 200
    },
    porCountry: {
      type: "string",
      title: "Place of Residence Country",
      description: "Place of residence country code (ISO 3166-1 alpha-2)",
      pattern: COUNTRY_PATTERN
    },
    porAddress: {
      type: "string",
      title: "Place of Residence Address",
      description: "Place of residence street address, city, and state",
      maxLength: 200
    },
    tosConfirmed: {
      type: "boolean",
      title: "Terms of Service Confirmation",
      description: "Must be true to confirm Terms of Service acceptance",
      const: true
    }
  },
  required: ["fullName", "dob", "tosConfirmed"],
  anyOf: [{ required: ["pobCountry", "pobAddress"] }, { required: ["porCountry", "porAddress"] }]
} as const satisfies CollectDataSchema

/** An entry of the deprecated `fields` list (the reference's `CollectDataField`). */
export interface CollectDataField {
  readonly id: string
  readonly name: string
  readonly required: boolean
  readonly type: "text" | "date" | "checkbox"
}

/**
 * The deprecated `fields` list, still read by older wallets: one entry per schema property, named
 * as in the reference example ("Full name", "Date of birth"). The place fields are not required
 * one by one: the schema's `anyOf` asks for one of the two pairs.
 */
export const collectDataFields: ReadonlyArray<CollectDataField> = [
  { id: "fullName", name: "Full name", required: true, type: "text" },
  { id: "dob", name: "Date of birth", required: true, type: "date" },
  { id: "pobCountry", name: "Place of birth country", required: false, type: "text" },
  { id: "pobAddress", name: "Place of birth address", required: false, type: "text" },
  { id: "porCountry", name: "Place of residence country", required: false, type: "text" },
  { id: "porAddress", name: "Place of residence address", required: false, type: "text" },
  { id: "tosConfirmed", name: "Terms of service accepted", required: true, type: "checkbox" }
]

/** The `collectData` object of an options response. */
export interface CollectData {
  readonly fields: ReadonlyArray<CollectDataField>
  readonly schema: CollectDataSchema
  readonly url: string
}

/** `url`: the data-collection page for this payment, with the accounts in its query. */
export const collectDataObject = (url: string): CollectData => ({
  fields: collectDataFields,
  schema: collectDataSchema,
  url
})

/** Data that satisfies the schema. */
export interface CollectedData {
  readonly fullName: string
  readonly dob: string
  readonly tosConfirmed: true
  readonly pobCountry?: string
  readonly pobAddress?: string
  readonly porCountry?: string
  readonly porAddress?: string
}

/** One submitted field as on the wire (`collectedData.fields[]`): every value is a string. */
export interface SubmittedField {
  readonly id: string
  readonly value: string
}

/** Submitted fields converted to their schema types, not yet checked against the schema. */
export type SubmittedData = { readonly [id: string]: string | boolean }

/** The message for a missing place: the schema's `anyOf` wants one of the two pairs in full. */
export const PLACE_REQUIRED =
  "place of birth (country and address) or place of residence (country and address) is required"

const DEFAULT_PREFIX = "collectedData"

const PROPERTIES: { readonly [id: string]: CollectDataProperty } = collectDataSchema.properties
const PROPERTY_IDS = Object.keys(PROPERTIES)

const isProperty = (id: string): boolean => Object.hasOwn(PROPERTIES, id)

const path = (prefix: string, name: string): string => (prefix === "" ? name : `${prefix}.${name}`)

// Compiled once, at the first submission rather than at module load: compiling takes tens of
// milliseconds that every process start (the server's, each CLI command's) would otherwise pay.
// `allErrors` reports every failing field at once, not the first.
// Strict, except `strictRequired`: the `anyOf` branches name properties defined one level up.
let compiled: ValidateFunction | undefined
const validateSchema = (): ValidateFunction => {
  if (compiled === undefined) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false })
    ajv.addFormat("date", fullFormats.date)
    compiled = ajv.compile(collectDataSchema)
  }
  return compiled
}

const MAX_SHOWN_ID = 64

const shownId = (id: string): string =>
  JSON.stringify(id.length > MAX_SHOWN_ID ? `${id.slice(0, MAX_SHOWN_ID)}…` : id)

interface Conversion {
  readonly data: SubmittedData
  readonly issues: ReadonlyArray<FieldIssue>
}

const convert = (fields: ReadonlyArray<SubmittedField>, prefix: string): Conversion => {
  const data: Record<string, string | boolean> = {}
  const issues: Array<FieldIssue> = []
  const seen = new Set<string>()
  const reported = new Set<string>()
  fields.forEach(({ id, value }, index) => {
    if (!isProperty(id)) {
      if (!reported.has(id)) {
        reported.add(id)
        issues.push({
          field: path(prefix, `fields.${index}.id`),
          message: `unknown field ${shownId(id)}; expected one of ${PROPERTY_IDS.join(", ")}`
        })
      }
      return
    }
    if (seen.has(id)) {
      if (!reported.has(id)) {
        reported.add(id)
        issues.push({ field: path(prefix, id), message: "was given more than once" })
      }
      delete data[id]
      return
    }
    seen.add(id)
    const text = value.trim()
    if (PROPERTIES[id]?.type === "boolean") {
      if (text === "true") data[id] = true
      else if (text === "false") data[id] = false
      else issues.push({ field: path(prefix, id), message: 'must be "true" or "false"' })
      return
    }
    // A blank value is no value: a form sends its empty optional inputs as "".
    if (text !== "") data[id] = text
  })
  return { data, issues }
}

/**
 * Converts the wire form (every value a string) to typed data: `"true"` / `"false"` become
 * booleans, strings are trimmed and a blank one counts as absent. Unknown and repeated ids are
 * errors. The result still has to pass {@link validateCollectedData}.
 */
export const fromSubmittedFields = (
  fields: ReadonlyArray<SubmittedField>,
  prefix: string = DEFAULT_PREFIX
): Either.Either<SubmittedData, ReadonlyArray<FieldIssue>> => {
  const { data, issues } = convert(fields, prefix)
  return issues.length === 0 ? Either.right(data) : Either.left(issues)
}

const propertyOf = (error: ErrorObject): string | undefined => {
  if (error.instancePath === "") {
    if (error.keyword === "required") return String(error.params.missingProperty)
    if (error.keyword === "additionalProperties") return String(error.params.additionalProperty)
    return undefined
  }
  // JSON Pointer of a top-level property: "/name", with "~1" for "/" and "~0" for "~".
  return error.instancePath.slice(1).replaceAll("~1", "/").replaceAll("~0", "~")
}

const typeMessage = (type: unknown): string => {
  switch (type) {
    case "string":
      return "must be text"
    case "boolean":
      return "must be true or false"
    case "object":
      return "must be an object"
    default:
      return `must be of type ${String(type)}`
  }
}

const messageFor = (error: ErrorObject, property: CollectDataProperty | undefined): string => {
  if (error.keyword === "required") return "is required"
  if (error.keyword === "additionalProperties") return "is not a known field"
  // A box to tick: whatever else arrived, what a person must do is accept.
  if (property?.const === true) return "must be accepted"
  switch (error.keyword) {
    case "type":
      return typeMessage(error.params.type)
    case "minLength":
      return error.params.limit === 1
        ? "must not be empty"
        : `must be at least ${error.params.limit} characters long`
    case "maxLength":
      return `must be at most ${error.params.limit} characters long`
    case "format":
      return error.params.format === "date" ? "must be a date as YYYY-MM-DD" : "is not valid"
    case "pattern":
      return error.params.pattern === COUNTRY_PATTERN
        ? "must be two capital letters (ISO 3166-1 alpha-2)"
        : "is not in the expected format"
    case "const":
      return `must be ${JSON.stringify(error.params.allowedValue)}`
    default:
      return "is not valid"
  }
}

const has = (data: object, id: string): boolean => Object.hasOwn(data, id)

/**
 * The field to show the `anyOf` failure beside: the first missing member of the pair closest to
 * complete (the place of birth country when nothing was given).
 */
const missingPlaceField = (data: object): string => {
  let best: ReadonlyArray<string> | undefined
  for (const group of collectDataSchema.anyOf) {
    const missing = group.required.filter((id) => !has(data, id))
    if (best === undefined || missing.length < best.length) best = missing
  }
  return best?.[0] ?? collectDataSchema.anyOf[0].required[0]
}

const isObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Issues come out one per field, in the order of the schema's properties (the form's order).
const rank = (field: string, prefix: string): number => {
  const index = PROPERTY_IDS.findIndex((id) => field === path(prefix, id))
  return field === prefix ? -1 : index === -1 ? PROPERTY_IDS.length : index
}

const issuesOf = (
  errors: ReadonlyArray<ErrorObject>,
  data: unknown,
  prefix: string
): ReadonlyArray<FieldIssue> => {
  const byField = new Map<string, string>()
  for (const error of errors) {
    // Each `anyOf` branch reports its own missing properties; the `anyOf` error sums them up.
    if (error.schemaPath.startsWith("#/anyOf/")) continue
    if (error.keyword === "anyOf") {
      const field = path(prefix, missingPlaceField(isObject(data) ? data : {}))
      if (!byField.has(field)) byField.set(field, PLACE_REQUIRED)
      continue
    }
    const name = propertyOf(error)
    const field = name === undefined ? prefix : path(prefix, name)
    const property = name !== undefined && isProperty(name) ? PROPERTIES[name] : undefined
    if (!byField.has(field)) byField.set(field, messageFor(error, property))
  }
  return [...byField]
    .map(([field, message]) => ({ field, message }))
    .sort((a, b) => rank(a.field, prefix) - rank(b.field, prefix))
}

/**
 * Checks data against the collect-data schema. Every issue names its field under `prefix`
 * (`collectedData.dob`; the data itself when it is not an object); a missing place is reported
 * once, beside the pair closest to complete, with {@link PLACE_REQUIRED}.
 */
export const validateCollectedData = (
  data: unknown,
  prefix: string = DEFAULT_PREFIX
): Either.Either<CollectedData, ReadonlyArray<FieldIssue>> => {
  const validate = validateSchema()
  if (validate(data)) {
    // A fresh object in the schema's order, sharing nothing with the caller's.
    const valid = data as Record<string, unknown>
    const copy: Record<string, unknown> = {}
    for (const id of PROPERTY_IDS) if (has(valid, id)) copy[id] = valid[id]
    return Either.right(copy as unknown as CollectedData)
  }
  return Either.left(issuesOf(validate.errors ?? [], data, prefix))
}

/**
 * The whole path from the wire form to checked data: {@link fromSubmittedFields}, then
 * {@link validateCollectedData}, reporting the problems of both steps together (a field the first
 * step already rejected is not reported again).
 */
export const collectedDataFromFields = (
  fields: ReadonlyArray<SubmittedField>,
  prefix: string = DEFAULT_PREFIX
): Either.Either<CollectedData, ReadonlyArray<FieldIssue>> => {
  const conversion = convert(fields, prefix)
  const validation = validateCollectedData(conversion.data, prefix)
  if (conversion.issues.length === 0) return validation
  const flagged = new Set(conversion.issues.map((issue) => issue.field))
  const rest = Either.isLeft(validation)
    ? validation.left.filter((issue) => !flagged.has(issue.field))
    : []
  return Either.left([...conversion.issues, ...rest])
}
