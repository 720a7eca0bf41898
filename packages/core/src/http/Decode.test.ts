import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CreatePaymentRequest, ListPaymentsParams, MaxPollParams } from "../payments/Api.js"
import { Expects, makeDecoder } from "./Decode.js"
import type { RequestError } from "./RequestError.js"

/** The RequestError a decode fails with. */
const refusal = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  source: "body" | "query" = "query"
): RequestError => {
  const decoded = makeDecoder(schema, { source, unknownFields: "reject" })(input)
  if (Either.isRight(decoded)) throw new Error("expected a refusal")
  return decoded.left
}

const AMOUNT = { unit: "iso4217/USD", value: "1050" }

const STATUSES = "requires_action, processing, succeeded, failed, expired, cancelled"

/** The schema library's own notation, which no message may show. */
const INTERNALS =
  /\bExpected\b|readonly|Refinement|Schema\b|NonNegativeInt|ReadonlyArray| \| |<[A-Z]/

describe("makeDecoder's messages", () => {
  it("a union of literals is one issue naming every value allowed, not one per member", () => {
    const refused = refusal(ListPaymentsParams, { status: "paid" })
    expect(refused.issues).toEqual([{ field: "status", message: `must be one of: ${STATUSES}` }])
    expect(refused.message).toBe(`Invalid query: status must be one of: ${STATUSES}`)
    expect(refusal(ListPaymentsParams, { sortBy: "name" }).issues).toEqual([
      { field: "sortBy", message: "must be one of: date, amount" }
    ])
  })

  it("a repeated parameter names the value that is wrong, once", () => {
    expect(refusal(ListPaymentsParams, { status: ["expired", "paid"] }).issues).toEqual([
      { field: "status.1", message: `must be one of: ${STATUSES}` }
    ])
  })

  it("a whole number given as text says its range, whatever is wrong with it", () => {
    for (const limit of ["abc", "1.5", "0", "201", ""]) {
      expect(refusal(ListPaymentsParams, { limit }).issues).toEqual([
        { field: "limit", message: "must be a whole number from 1 to 200" }
      ])
    }
    for (const maxPollMs of ["abc", "1.5", "-1"]) {
      expect(refusal(MaxPollParams, { maxPollMs }).issues).toEqual([
        {
          field: "maxPollMs",
          message:
            "must be a whole number of milliseconds, 0 or more (the server waits at most 30000 by default)"
        }
      ])
    }
  })

  it("a value of the wrong kind is told the kind, in words", () => {
    const refused = refusal(
      CreatePaymentRequest,
      { referenceId: 5, amount: "10.50", expiresAt: true, checkout: 3 },
      "body"
    )
    expect(refused.code).toBe("params_validation")
    expect(refused.issues).toEqual([
      { field: "referenceId", message: "must be a string" },
      {
        field: "amount",
        message:
          'must be an object like {"unit": "iso4217/USD", "value": "1050"}, the value a whole number of minor units as a string of digits ("1050" for 10.50)'
      },
      {
        field: "expiresAt",
        message:
          "must be a Unix time in seconds or an RFC 3339 timestamp like 2026-01-31T00:00:00Z or null"
      },
      { field: "checkout", message: "must be an object with successUrl and errorUrl or null" }
    ])
    expect(
      refusal(
        CreatePaymentRequest,
        { referenceId: "order-1", amount: AMOUNT, expiresAt: 1.5 },
        "body"
      ).issues
    ).toEqual([{ field: "expiresAt", message: "must be a Unix time in seconds" }])
    expect(refusal(CreatePaymentRequest, [], "body").issues).toEqual([
      { field: "body", message: "must be an object with referenceId and amount" }
    ])
  })

  it("inside an optional object, the wrong field is named, not the object's other kinds", () => {
    const refused = refusal(
      CreatePaymentRequest,
      {
        referenceId: "order-1",
        amount: { unit: "iso4217/USD", value: "10.50" },
        checkout: { successUrl: "https://shop.example/ok", errorUrl: 1 }
      },
      "body"
    )
    expect(refused.issues).toEqual([
      {
        field: "amount.value",
        message:
          'must be a whole number of minor units as a string of digits, e.g. "1050" for 10.50'
      },
      { field: "checkout.errorUrl", message: "must be a string" }
    ])
  })

  it("Effect's own checks say what they need without its notation; Expects says it where set", () => {
    const schema = Schema.Struct({
      count: Schema.NonNegativeInt,
      name: Schema.String.pipe(Schema.maxLength(3)),
      when: Schema.Union(Schema.Int.annotations({ [Expects]: "Unix seconds" }), Schema.Boolean),
      missing: Schema.String
    })
    const refused = refusal(schema, { count: -1, name: "abcd", when: "x", extra: 1 }, "body")
    expect(refused.issues).toEqual([
      { field: "extra", message: "is not a known field" },
      { field: "count", message: "must be a non-negative number" },
      { field: "name", message: "must be a string at most 3 character(s) long" },
      { field: "when", message: "must be Unix seconds or true or false" },
      { field: "missing", message: "is required" }
    ])
    for (const issue of refused.issues ?? []) expect(issue.message).not.toMatch(INTERNALS)
  })
})
