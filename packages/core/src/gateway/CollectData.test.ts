/**
 * Tests for the collect-data schema and checks: the schema is the reference's, the reference
 * example's data passes, each rule fails with a person's message on the right field, and the
 * wire form (strings only) converts before the check.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { FieldIssue } from "../shared/Errors.js"
import {
  type CollectedData,
  collectDataFields,
  collectDataObject,
  collectDataSchema,
  collectedDataFromFields,
  fromSubmittedFields,
  PLACE_REQUIRED,
  type SubmittedField,
  validateCollectedData
} from "./CollectData.js"

// The schema of the reference OpenAPI's CollectData example (2026-02-19.preview), verbatim.
const REFERENCE_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  additionalProperties: false,
  anyOf: [{ required: ["pobCountry", "pobAddress"] }, { required: ["porCountry", "porAddress"] }],
  properties: {
    dob: {
      description: "Date of birth in YYYY-MM-DD format",
      format: "date",
      title: "Date of Birth",
      type: "string"
    },
    fullName: {
      description: "User's full legal name",
      minLength: 1,
      title: "Full Name",
      type: "string"
    },
    pobAddress: {
      description: "Place of birth city and state (e.g., 'New York, NY')",
      maxLength: 200,
      title: "Place of Birth Address",
      type: "string"
    },
    pobCountry: {
      description: "Place of birth country code (ISO 3166-1 alpha-2)",
      pattern: "^[A-Z]{2}$",
      title: "Place of Birth Country",
      type: "string"
    },
    porAddress: {
      description: "Place of residence street address, city, and state",
      maxLength: 200,
      title: "Place of Residence Address",
      type: "string"
    },
    porCountry: {
      description: "Place of residence country code (ISO 3166-1 alpha-2)",
      pattern: "^[A-Z]{2}$",
      title: "Place of Residence Country",
      type: "string"
    },
    tosConfirmed: {
      const: true,
      description: "Must be true to confirm Terms of Service acceptance",
      title: "Terms of Service Confirmation",
      type: "boolean"
    }
  },
  required: ["fullName", "dob", "tosConfirmed"],
  type: "object"
}

// The reference's CollectDataResult example, as a wallet sends it.
const REFERENCE_FIELDS: ReadonlyArray<SubmittedField> = [
  { id: "fullName", value: "John Smith" },
  { id: "dob", value: "1990-01-01" },
  { id: "tosConfirmed", value: "true" },
  { id: "pobCountry", value: "US" },
  { id: "pobAddress", value: "New York, NY" }
]

const VALID: CollectedData = {
  fullName: "John Smith",
  dob: "1990-01-01",
  tosConfirmed: true,
  pobCountry: "US",
  pobAddress: "New York, NY"
}

const right = <A>(result: Either.Either<A, ReadonlyArray<FieldIssue>>): A =>
  Either.getOrThrowWith(
    result,
    (issues) => new Error(`expected Right, got Left: ${JSON.stringify(issues)}`)
  )

const left = <A>(result: Either.Either<A, ReadonlyArray<FieldIssue>>): ReadonlyArray<FieldIssue> =>
  Either.match(result, {
    onLeft: (issues) => issues,
    onRight: (value) => {
      throw new Error(`expected Left, got Right: ${JSON.stringify(value)}`)
    }
  })

const invalid = (data: unknown) => left(validateCollectedData(data))

describe("the collect-data object", () => {
  it("has the reference's schema, in draft 2020-12", () => {
    expect(collectDataSchema).toEqual(REFERENCE_SCHEMA)
  })

  it("lists one deprecated field entry per schema property, with the reference's first two", () => {
    expect(collectDataFields.map((field) => field.id)).toEqual(
      Object.keys(collectDataSchema.properties)
    )
    expect(collectDataFields.slice(0, 2)).toEqual([
      { id: "fullName", name: "Full name", required: true, type: "text" },
      { id: "dob", name: "Date of birth", required: true, type: "date" }
    ])
    for (const field of collectDataFields) {
      expect(field.required).toBe(collectDataSchema.required.some((id) => id === field.id))
      expect(Object.keys(field).sort()).toEqual(["id", "name", "required", "type"])
    }
    expect(collectDataFields.find((field) => field.id === "tosConfirmed")?.type).toBe("checkbox")
  })

  it("carries fields, schema and url", () => {
    const url = "https://pay.example/v1/gateway/collect/pay_123?accounts=eip155:1:0x123"
    expect(collectDataObject(url)).toEqual({
      fields: collectDataFields,
      schema: collectDataSchema,
      url
    })
    // The wire form: plain JSON.
    expect(JSON.parse(JSON.stringify(collectDataObject(url))).schema).toEqual(REFERENCE_SCHEMA)
  })
})

describe("validateCollectedData", () => {
  it("accepts the reference example's data, and either place", () => {
    expect(right(validateCollectedData(VALID))).toEqual(VALID)
    const residence = {
      fullName: "Ada Lovelace",
      dob: "1815-12-10",
      tosConfirmed: true,
      porCountry: "GB",
      porAddress: "12 St James's Square, London"
    }
    expect(right(validateCollectedData(residence))).toEqual(residence)
    const both = { ...VALID, porCountry: "GB", porAddress: "London" }
    expect(right(validateCollectedData(both))).toEqual(both)
  })

  it("returns a copy, not the caller's object", () => {
    const data = { ...VALID }
    const result = right(validateCollectedData(data))
    expect(result).not.toBe(data)
  })

  it("names each missing required field", () => {
    const { fullName: _f, dob: _d, tosConfirmed: _t, ...rest } = VALID
    expect(invalid(rest)).toEqual([
      { field: "collectedData.fullName", message: "is required" },
      { field: "collectedData.dob", message: "is required" },
      { field: "collectedData.tosConfirmed", message: "is required" }
    ])
  })

  it("asks for one of the place pairs, beside the place of birth country when none is given", () => {
    const { pobCountry: _c, pobAddress: _a, ...rest } = VALID
    expect(invalid(rest)).toEqual([{ field: "collectedData.pobCountry", message: PLACE_REQUIRED }])
    expect(PLACE_REQUIRED).toBe(
      "place of birth (country and address) or place of residence (country and address) is required"
    )
  })

  it("puts the place message beside the missing half of a partly given pair", () => {
    const { pobCountry: _c, pobAddress: _a, ...rest } = VALID
    expect(invalid({ ...rest, pobCountry: "US" })).toEqual([
      { field: "collectedData.pobAddress", message: PLACE_REQUIRED }
    ])
    expect(invalid({ ...rest, porAddress: "London" })).toEqual([
      { field: "collectedData.porCountry", message: PLACE_REQUIRED }
    ])
  })

  it.each([
    ["fullName", "", "must not be empty"],
    ["fullName", 42, "must be text"],
    ["dob", "10/12/1815", "must be a date as YYYY-MM-DD"],
    ["dob", "1990-02-30", "must be a date as YYYY-MM-DD"],
    ["dob", "1990-1-1", "must be a date as YYYY-MM-DD"],
    ["pobCountry", "us", "must be two capital letters (ISO 3166-1 alpha-2)"],
    ["pobCountry", "USA", "must be two capital letters (ISO 3166-1 alpha-2)"],
    ["pobAddress", "x".repeat(201), "must be at most 200 characters long"],
    ["tosConfirmed", false, "must be accepted"],
    ["tosConfirmed", "true", "must be accepted"]
  ])("rejects %s = %j: %s", (id, value, message) => {
    expect(invalid({ ...VALID, [id]: value })).toEqual([{ field: `collectedData.${id}`, message }])
  })

  it("counts address length in characters, as people do", () => {
    expect(Either.isRight(validateCollectedData({ ...VALID, pobAddress: "😀".repeat(200) }))).toBe(
      true
    )
  })

  it("rejects the residence rules too", () => {
    const data = { ...VALID, porCountry: "gb", porAddress: "y".repeat(201) }
    expect(invalid(data)).toEqual([
      {
        field: "collectedData.porCountry",
        message: "must be two capital letters (ISO 3166-1 alpha-2)"
      },
      { field: "collectedData.porAddress", message: "must be at most 200 characters long" }
    ])
  })

  it("names unknown properties", () => {
    expect(invalid({ ...VALID, ssn: "123" })).toEqual([
      { field: "collectedData.ssn", message: "is not a known field" }
    ])
  })

  it("reports every failure at once, one per field, in the form's order", () => {
    const issues = invalid({
      tosConfirmed: false,
      extra: true,
      pobCountry: "u",
      dob: "tomorrow",
      fullName: ""
    })
    expect(issues).toEqual([
      { field: "collectedData.fullName", message: "must not be empty" },
      { field: "collectedData.dob", message: "must be a date as YYYY-MM-DD" },
      {
        field: "collectedData.pobCountry",
        message: "must be two capital letters (ISO 3166-1 alpha-2)"
      },
      { field: "collectedData.pobAddress", message: PLACE_REQUIRED },
      { field: "collectedData.tosConfirmed", message: "must be accepted" },
      { field: "collectedData.extra", message: "is not a known field" }
    ])
  })

  it("names the data itself when it is not an object", () => {
    for (const data of [null, [], "x", 1]) {
      expect(invalid(data)).toEqual([{ field: "collectedData", message: "must be an object" }])
    }
  })

  it("uses the given prefix, or none", () => {
    expect(left(validateCollectedData({ ...VALID, dob: "x" }, "body.collectedData"))).toEqual([
      { field: "body.collectedData.dob", message: "must be a date as YYYY-MM-DD" }
    ])
    expect(left(validateCollectedData({ ...VALID, dob: "x" }, ""))).toEqual([
      { field: "dob", message: "must be a date as YYYY-MM-DD" }
    ])
  })
})

describe("fromSubmittedFields", () => {
  it("converts the reference's submission: booleans from strings, the rest as text", () => {
    expect(right(fromSubmittedFields(REFERENCE_FIELDS))).toEqual(VALID)
    expect(right(collectedDataFromFields(REFERENCE_FIELDS))).toEqual(VALID)
  })

  it("trims values and treats blank ones as absent", () => {
    const data = right(
      fromSubmittedFields([
        { id: "fullName", value: "  Ada Lovelace \n" },
        { id: "pobAddress", value: "   " },
        { id: "porCountry", value: "" },
        { id: "tosConfirmed", value: " false " }
      ])
    )
    expect(data).toEqual({ fullName: "Ada Lovelace", tosConfirmed: false })
  })

  it("rejects a boolean that is neither true nor false", () => {
    expect(left(fromSubmittedFields([{ id: "tosConfirmed", value: "yes" }]))).toEqual([
      { field: "collectedData.tosConfirmed", message: 'must be "true" or "false"' }
    ])
  })

  it("rejects unknown ids, naming their place in the list, once each", () => {
    const issues = left(
      fromSubmittedFields([
        { id: "fullName", value: "Ada" },
        { id: "ssn", value: "1" },
        { id: "ssn", value: "2" },
        { id: "__proto__", value: "x" }
      ])
    )
    expect(issues.map((issue) => issue.field)).toEqual([
      "collectedData.fields.1.id",
      "collectedData.fields.3.id"
    ])
    expect(issues[0]?.message).toBe(
      'unknown field "ssn"; expected one of fullName, dob, pobCountry, pobAddress, porCountry, porAddress, tosConfirmed'
    )
  })

  it("shortens a long unknown id in its message", () => {
    const [issue] = left(fromSubmittedFields([{ id: "a".repeat(1000), value: "x" }]))
    expect(issue?.message.length).toBeLessThan(200)
  })

  it("rejects a repeated id", () => {
    expect(
      left(
        fromSubmittedFields([
          { id: "dob", value: "1990-01-01" },
          { id: "dob", value: "1991-01-01" },
          { id: "dob", value: "1992-01-01" }
        ])
      )
    ).toEqual([{ field: "collectedData.dob", message: "was given more than once" }])
  })

  it("uses the given prefix", () => {
    expect(left(fromSubmittedFields([{ id: "x", value: "" }], "data"))[0]?.field).toBe(
      "data.fields.0.id"
    )
  })
})

describe("collectedDataFromFields", () => {
  it("checks the converted data against the schema", () => {
    expect(
      left(
        collectedDataFromFields([
          { id: "fullName", value: " " },
          { id: "dob", value: "1990-13-01" },
          { id: "tosConfirmed", value: "false" }
        ])
      )
    ).toEqual([
      { field: "collectedData.fullName", message: "is required" },
      { field: "collectedData.dob", message: "must be a date as YYYY-MM-DD" },
      { field: "collectedData.pobCountry", message: PLACE_REQUIRED },
      { field: "collectedData.tosConfirmed", message: "must be accepted" }
    ])
  })

  it("reports conversion and schema problems together, each field once", () => {
    const issues = left(
      collectedDataFromFields([
        { id: "fullName", value: "Ada" },
        { id: "dob", value: "1815-12-10" },
        { id: "dob", value: "1815-12-11" },
        { id: "tosConfirmed", value: "maybe" },
        { id: "nickname", value: "A" },
        { id: "porCountry", value: "GB" },
        { id: "porAddress", value: "London" }
      ])
    )
    expect(issues).toEqual([
      { field: "collectedData.dob", message: "was given more than once" },
      { field: "collectedData.tosConfirmed", message: 'must be "true" or "false"' },
      {
        field: "collectedData.fields.4.id",
        message:
          'unknown field "nickname"; expected one of fullName, dob, pobCountry, pobAddress, porCountry, porAddress, tosConfirmed'
      }
    ])
  })
})
