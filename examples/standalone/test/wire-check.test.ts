/**
 * The wire check's rules (wire-check.ts), each shown to fail on a synthetic
 * record: drift against a small engine document, conformance against the
 * real reference documents in spec/reference-openapi.
 */
import { openApiDocument } from "@pay/core"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_REFERENCE_VERSION,
  DEVIATIONS,
  type Deviation,
  formatMismatches,
  loadReferences,
  type Mismatch,
  makeChecker,
  namedCodes,
  type OpenApiDocument,
  patchReference,
  routeMatcher,
  type WireRecord
} from "./wire-check.js"

const json = (schema: object) => ({ content: { "application/json": { schema } } })
const errorWith = (codeSchema: object) =>
  json({
    type: "object",
    required: ["code", "message"],
    properties: { code: codeSchema, message: { type: "string" } }
  })

/** A small engine document: enough routes to match, codes named in each way the rule reads. */
const engine: OpenApiDocument = {
  paths: {
    "/v1/merchants/payments": { get: { responses: { "200": json({ type: "object" }) } } },
    "/v1/merchants/{merchantId}": {
      get: {
        responses: {
          "200": json({ type: "object" }),
          // A const behind a $ref, in one anyOf member; an enum in the other.
          "404": json({
            anyOf: [
              { $ref: "#/components/schemas/NotFound" },
              errorWith({ type: "string", enum: ["merchant_not_found"] }).content[
                "application/json"
              ].schema
            ]
          }),
          // The code is a $ref to an enum schema.
          "401": errorWith({ $ref: "#/components/schemas/AuthCode" }),
          // A code that is not restricted: any code goes.
          "500": errorWith({ type: "string" })
        }
      },
      patch: { responses: { "200": json({ type: "object" }) } }
    },
    "/v1/gateway/payment/{id}/options": {
      post: { responses: { "200": json({ type: "object" }) } }
    },
    "/v1/refunds": {
      post: {
        responses: {
          "201": json({ type: "object" }),
          "409": errorWith({ oneOf: [{ const: "refund_exists" }, { const: "invalid_state" }] })
        }
      }
    }
  },
  components: {
    schemas: {
      NotFound: {
        type: "object",
        properties: { code: { type: "string", const: "not_found" }, message: { type: "string" } }
      },
      AuthCode: { type: "string", enum: ["missing_api_key", "invalid_api_key"] }
    }
  }
}

const references = loadReferences()

const record = (fields: Partial<WireRecord> & Pick<WireRecord, "method" | "template">) => {
  const body = "body" in fields ? fields.body : {}
  return {
    path: fields.template,
    status: 200,
    version: DEFAULT_REFERENCE_VERSION,
    text: body === undefined ? "<html>" : JSON.stringify(body),
    suite: "wire-check.test.ts",
    ...fields,
    body
  } satisfies WireRecord
}

const problems = (mismatches: ReadonlyArray<Mismatch>, check?: Mismatch["check"]) =>
  mismatches.filter((m) => check === undefined || m.check === check).map((m) => m.problem)

describe("route matching", () => {
  const match = routeMatcher(engine)

  it("prefers static segments to parameters, on the method's own routes", () => {
    expect(match("GET", "/v1/merchants/payments")).toEqual({
      _tag: "Found",
      template: "/v1/merchants/payments"
    })
    expect(match("GET", "/v1/merchants/mrch_1")).toEqual({
      _tag: "Found",
      template: "/v1/merchants/{merchantId}"
    })
    // /v1/merchants/payments has no PATCH; the parameter route has.
    expect(match("PATCH", "/v1/merchants/payments")).toEqual({
      _tag: "Found",
      template: "/v1/merchants/{merchantId}"
    })
  })

  it("a path that is a route only for other methods is a 405; no route at all is None", () => {
    expect(match("POST", "/v1/merchants/payments")).toMatchObject({ _tag: "WrongMethod" })
    expect(match("GET", "/v1/nothing/here")).toEqual({ _tag: "None" })
    expect(match("GET", "/v1/merchants/")).toEqual({ _tag: "None" })
  })

  it("matches the raw, still percent-encoded path split on /", () => {
    const twice = "https%253A%252F%252Fshop.example%252Fpay_abc123"
    expect(match("POST", `/v1/gateway/payment/${twice}/options`)).toEqual({
      _tag: "Found",
      template: "/v1/gateway/payment/{id}/options"
    })
    expect(match("POST", "/v1/gateway/payment/a/b/options")).toEqual({ _tag: "None" })
  })
})

describe("drift: against the engine's own document", () => {
  const checker = makeChecker({ engine, references, defaultVersion: DEFAULT_REFERENCE_VERSION })
  const drift = (r: WireRecord) => problems(checker.check(r), "drift")

  it("an undeclared status fails", () => {
    const r = record({ method: "PATCH", template: "/v1/merchants/{merchantId}", status: 409 })
    expect(drift(r)).toEqual(["status 409 is not declared (declared: 200)"])
  })

  it("a declared status passes", () => {
    expect(drift(record({ method: "PATCH", template: "/v1/merchants/{merchantId}" }))).toEqual([])
  })

  it("names codes from const and enum, behind $ref and in anyOf/oneOf members", () => {
    const op = (engine.paths as Record<string, Record<string, { responses: object }>>)[
      "/v1/merchants/{merchantId}"
    ]!.get!.responses as Record<string, { content: { "application/json": { schema: object } } }>
    const codes = (status: string) =>
      namedCodes(engine, op[status]!.content["application/json"].schema)
    expect([...(codes("404") ?? [])].sort()).toEqual(["merchant_not_found", "not_found"])
    expect([...(codes("401") ?? [])].sort()).toEqual(["invalid_api_key", "missing_api_key"])
    expect(codes("500")).toBeUndefined()
    expect(codes("200")).toBeUndefined()
  })

  it("an undeclared code fails; a declared one passes", () => {
    const notFound = (code: string) =>
      record({
        method: "GET",
        template: "/v1/merchants/{merchantId}",
        status: 404,
        body: { code, message: "No such merchant" }
      })
    expect(drift(notFound("not_found"))).toEqual([])
    expect(drift(notFound("merchant_not_found"))).toEqual([])
    expect(drift(notFound("payment_not_found"))).toEqual([
      "code payment_not_found is not declared for 404 (declared: not_found, merchant_not_found)"
    ])
    const conflict = (code: string) =>
      record({ method: "POST", template: "/v1/refunds", status: 409, body: { code, message: "x" } })
    expect(drift(conflict("refund_exists"))).toEqual([])
    expect(drift(conflict("idempotency_conflict"))).toHaveLength(1)
  })

  it("a body without a code fails where codes are named; an unrestricted code passes", () => {
    expect(
      drift(
        record({
          method: "GET",
          template: "/v1/merchants/{merchantId}",
          status: 401,
          body: { message: "no key" }
        })
      )
    ).toEqual(["the body has no code; declared for 401: missing_api_key, invalid_api_key"])
    expect(
      drift(
        record({
          method: "GET",
          template: "/v1/merchants/{merchantId}",
          status: 500,
          body: { code: "anything", message: "boom" }
        })
      )
    ).toEqual([])
  })
})

describe("conformance: against the reference documents", () => {
  const real = openApiDocument()
  // No deviations: each rule on its own (the table has a test of its own below).
  const checker = makeChecker({
    engine: real,
    references,
    defaultVersion: DEFAULT_REFERENCE_VERSION,
    deviations: []
  })
  /** The reference and error-shape mismatches (the real engine document's drift is not the point). */
  const against = (r: WireRecord, c: ReturnType<typeof makeChecker> = checker) =>
    c.check(r).filter((m) => m.check !== "drift")
  const reference = (r: WireRecord) => problems(against(r))

  /** A page of GET /v1/payments with one cancelled payment. */
  const listBody = {
    data: [
      {
        paymentId: "pay_1",
        merchant: { id: "mrch_1" },
        referenceId: "ORDER-1",
        status: "cancelled",
        isTerminal: true,
        createdAt: "2026-02-18T00:00:00Z",
        lastUpdatedAt: "2026-02-18T00:00:00Z"
      }
    ],
    nextCursor: null,
    stats: { totalRevenue: [], totalTransactions: 1, totalCustomers: 0 }
  }

  const created = {
    paymentId: "pay_123",
    status: "requires_action",
    expiresAt: 1_700_000_000,
    isFinal: false,
    pollInMs: 1000,
    gatewayUrl: "http://127.0.0.1/pay_123"
  }
  const createResponse = (body: unknown, status = 201) =>
    record({ method: "POST", template: "/v1/payments", status, body })

  it("a body the reference's schema accepts passes; an extra field is allowed", () => {
    expect(reference(createResponse(created))).toEqual([])
    expect(reference(createResponse({ ...created, merchant: { iconUrl: null } }))).toEqual([])
  })

  it("a missing required field fails", () => {
    const { gatewayUrl: _, ...rest } = created
    expect(reference(createResponse(rest))).toEqual(["missing required field /gatewayUrl"])
  })

  it("a mistyped field fails", () => {
    expect(reference(createResponse({ ...created, expiresAt: "2026-02-18T00:00:00Z" }))).toEqual([
      "/expiresAt must be integer, is string"
    ])
    expect(reference(createResponse({ ...created, status: "pending" }))).toEqual([
      `/status must be one of ["requires_action","processing","succeeded","failed","expired","cancelled"], is "pending"`
    ])
  })

  it("extra fields are allowed where the document forbids them (additionalProperties: false)", () => {
    const strict: OpenApiDocument = {
      paths: {
        "/v1/merchants/{merchant_id}": {
          get: {
            responses: {
              "200": json({
                type: "object",
                required: ["id"],
                properties: { id: { type: "string" } },
                additionalProperties: false,
                unevaluatedProperties: false
              })
            }
          }
        }
      }
    }
    const c = makeChecker({
      engine: real,
      references: { [DEFAULT_REFERENCE_VERSION]: strict },
      defaultVersion: DEFAULT_REFERENCE_VERSION
    })
    const r = (body: unknown) =>
      record({ method: "GET", template: "/v1/merchants/{merchantId}", body })
    expect(problems(against(r({ id: "mrch_1", extra: true }), c))).toEqual([])
    expect(problems(against(r({ id: 1 }), c))).toEqual(["/id must be string, is number"])
  })

  it("a code outside the reference's enumeration for that status fails", () => {
    const r = record({
      method: "GET",
      template: "/v1/merchants/{merchantId}",
      status: 404,
      body: { code: "merchant_not_found", message: "No merchant mrch_1" }
    })
    expect(reference(r)).toEqual([
      "code merchant_not_found is not one the reference names for 404: not_found"
    ])
    expect(reference({ ...r, body: { code: "not_found", message: "No merchant mrch_1" } })).toEqual(
      []
    )
  })

  it("a status the reference does not document is held to WIRE.md's error shape", () => {
    const r = (body: unknown) =>
      record({ method: "POST", template: "/v1/payments", status: 404, body })
    expect(reference(r({ code: "merchant_not_found", message: "No merchant mrch_1" }))).toEqual([])
    expect(
      reference(
        r({
          code: "params_validation",
          message: "bad",
          issues: [{ field: "amount", message: "is required" }]
        })
      )
    ).toEqual([])
    const bad = against(r({ code: "merchant_not_found", message: "", detail: "x" }))
    expect(bad.map((m) => m.check)).toEqual(["error-shape", "error-shape"])
    expect(problems(bad)).toEqual([
      "unexpected field(s) detail",
      'message is "", not a non-empty string'
    ])
    expect(problems(against(r({ code: 404, message: "x", issues: [{ field: "a" }] })))).toEqual([
      "code is number, not a string",
      'issues/0 is not {field: string, message: string}: {"field":"a"}'
    ])
    expect(problems(against(r(undefined)))).toEqual(["the body is not JSON"])
  })

  it("a success status the reference does not document fails", () => {
    expect(reference(createResponse(created, 200))).toEqual([
      "status 200 is not documented by the reference (documents: 201, 400, 401, 500)"
    ])
  })

  it("a tabled deviation passes; the rest of the record is still checked when it names a field", () => {
    const r = record({
      method: "GET",
      template: "/v1/merchants/{merchantId}",
      status: 404,
      body: { code: "merchant_not_found", message: "No merchant mrch_1" }
    })
    const deviation: Deviation = {
      method: "GET",
      route: "/v1/merchants/{merchantId}",
      status: 404,
      code: "merchant_not_found",
      reason: "test"
    }
    const tabled = makeChecker({
      engine: real,
      references,
      defaultVersion: DEFAULT_REFERENCE_VERSION,
      deviations: [deviation]
    })
    expect(reference(r)).toHaveLength(1)
    expect(problems(against(r, tabled))).toEqual([])
    // Another code on the same route and status is not covered.
    expect(
      problems(against({ ...r, body: { code: "payment_not_found", message: "x" } }, tabled))
    ).toHaveLength(1)

    // A field-scoped deviation waives that field only.
    const scoped = makeChecker({
      engine: real,
      references,
      defaultVersion: DEFAULT_REFERENCE_VERSION,
      deviations: [
        {
          method: "POST",
          route: "/v1/payments",
          status: 201,
          code: null,
          field: "/expiresAt",
          reason: "test"
        }
      ]
    })
    expect(problems(against(createResponse({ ...created, expiresAt: "soon" }), scoped))).toEqual([])
    expect(
      problems(against(createResponse({ ...created, expiresAt: "soon", isFinal: "no" }), scoped))
    ).toEqual(["/isFinal must be boolean, is string"])
  })

  it("the table of deliberate deviations is small and says why", () => {
    for (const d of DEVIATIONS) expect(d.reason.length).toBeGreaterThan(10)
    expect(DEVIATIONS.length).toBeLessThan(10)
  })

  it("a deviation scoped to a field and a value waives that value only", () => {
    const tabled = makeChecker({
      engine: real,
      references,
      defaultVersion: DEFAULT_REFERENCE_VERSION
    })
    const list = (status: string) =>
      record({
        method: "GET",
        template: "/v1/payments",
        version: "2026-02-18",
        body: { ...listBody, data: [{ ...listBody.data[0], status }] }
      })
    expect(problems(against(list("cancelled"), tabled))).toEqual([])
    expect(problems(against(list("cancelled"), checker))).toHaveLength(1)
    expect(problems(against(list("refunded"), tabled))).toEqual([
      `/data/*/status must be one of ["requires_action","processing","succeeded","failed","expired"], is "refunded"`
    ])
  })

  it("an amount's unit is a string, not the object the documents describe (String patched)", () => {
    const info = (unit: unknown) =>
      record({
        method: "GET",
        template: "/v1/gateway/payment/{id}",
        body: {
          status: "requires_action",
          expiresAt: 1_700_000_000,
          merchant: { name: "Shop", iconUrl: null },
          amount: {
            unit,
            value: "1050",
            display: { assetSymbol: "USD", assetName: "US Dollar", decimals: 2 }
          }
        }
      })
    expect(reference(info("iso4217/USD"))).toEqual([])
    expect(reference(info({ Iso4217: "USD" }))).toEqual(["/amount/unit must be string, is object"])
    const patched = patchReference(references[DEFAULT_REFERENCE_VERSION]!)
    expect(
      (patched.components as { schemas: Record<string, unknown> }).schemas.String
    ).toMatchObject({ type: "string" })
    // The document itself is left as it is.
    expect(
      (references[DEFAULT_REFERENCE_VERSION]!.components as { schemas: Record<string, object> })
        .schemas.String
    ).toHaveProperty("oneOf")
  })

  it("the document is picked by the response's Pay-Version", () => {
    const list = (version: string | undefined) =>
      record({ method: "GET", template: "/v1/payments", version, body: listBody })
    // `cancelled` is listed from 2026-02-19.preview on.
    expect(reference(list("2026-02-19.preview"))).toEqual([])
    expect(reference(list("2026-02-18"))).toHaveLength(1)
    expect(reference(list(undefined))).toHaveLength(1) // no header: the default version
    expect(reference(list("2099-01-01"))).toEqual(['unknown Pay-Version "2099-01-01"'])
  })

  it("routes the reference does not cover are only drift-checked", () => {
    const r = record({
      method: "POST",
      template: "/v1/refunds",
      status: 409,
      body: { code: "refund_exists", message: "x", extra: 1 }
    })
    expect(checker.check(r).filter((m) => m.check !== "drift")).toEqual([])
  })

  it("lists mismatches readably: route, status, code, what is wrong and the body", () => {
    const r = record({
      method: "GET",
      template: "/v1/merchants/{merchantId}",
      status: 404,
      body: { code: "merchant_not_found", message: "No merchant mrch_1" },
      test: "a test"
    })
    const text = formatMismatches([...checker.check(r), ...checker.check(r)])
    expect(text).toContain("[reference] GET /v1/merchants/{merchantId} 404 merchant_not_found:")
    expect(text).toContain("seen 2x")
    expect(text).toContain('body: {"code":"merchant_not_found"')
  })
})
