/**
 * Every field of every route's body, query, path and headers, given values of
 * the wrong kind and shape: each refusal names the field in plain words, never
 * in the schema library's own notation (`Expected`, `readonly`, type names).
 */
import { HttpApi } from "@effect/platform"
import { Either, Option, type Schema } from "effect"
import { describe, expect, it } from "vitest"
import { PayApi } from "./Api.js"
import { structFields } from "./http/ApiDocs.js"
import { makeDecoder } from "./http/Decode.js"

const INTERNALS =
  /\bExpected\b|readonly|Refinement|Schema\b|NonNegativeInt|ReadonlyArray| \| |<[A-Z]|Unable to decode|\{ |valid value/

const WRONG: ReadonlyArray<unknown> = [
  12345,
  "zz",
  "-1",
  "1.5",
  "",
  true,
  null,
  {},
  { a: 1 },
  [],
  [1],
  "x".repeat(3000)
]

interface Part {
  readonly route: string
  readonly schema: Schema.Schema.Any
  readonly source: "body" | "query" | "path"
}

const parts: Array<Part> = []
HttpApi.reflect(PayApi as unknown as HttpApi.HttpApi.AnyWithProps, {
  onGroup() {},
  onEndpoint({ endpoint }) {
    const route = `${endpoint.method} ${endpoint.path}`
    const add = (schema: Option.Option<unknown>, source: Part["source"]) => {
      if (Option.isSome(schema)) {
        parts.push({ route, schema: schema.value as Schema.Schema.Any, source })
      }
    }
    add(endpoint.payloadSchema, "body")
    add(endpoint.urlParamsSchema, "query")
    add(endpoint.pathSchema, "path")
    add(endpoint.headersSchema, "query")
  }
})

describe("the API's validation messages", () => {
  it("reads the routes' schemas", () => {
    expect(parts.length).toBeGreaterThan(40)
  })

  it("names every wrong field in plain words, whatever is sent", () => {
    const leaks: Array<string> = []
    let refusals = 0
    for (const { route, schema, source } of parts) {
      const decode = makeDecoder(schema as Schema.Schema<unknown, unknown>, {
        source,
        unknownFields: "ignore"
      })
      for (const field of structFields(schema)) {
        for (const value of WRONG) {
          const decoded = decode({ [field.name]: value })
          if (Either.isRight(decoded)) continue
          refusals++
          for (const issue of decoded.left.issues ?? []) {
            if (INTERNALS.test(issue.message) || !/^(must|is|names|give) /.test(issue.message)) {
              leaks.push(`${route} ${issue.field}: ${issue.message}`)
            }
          }
        }
      }
    }
    expect(refusals).toBeGreaterThan(500)
    expect([...new Set(leaks)]).toEqual([])
  })
})
