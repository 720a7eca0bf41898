import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { errorReply } from "../ApiFailures.js"
import { Unauthenticated } from "../shared/Errors.js"
import { prefixedId } from "../shared/Ids.js"
import { failsWith, failureOf, IdempotentHeaders, pathOf, UnknownBodyFields } from "./ApiDocs.js"
import { makeEngineHandler } from "./Engine.js"
import { ApiErrors } from "./ErrorResponses.js"
import { json } from "./Exchange.js"
import { apiRoutes, implement, type Route } from "./Route.js"

// A small API of its own: the router must serve whatever a definition says, not only the engine's.
const ThingId = prefixedId("thg", "ThingId")

class Caller extends Context.Tag("test/Caller")<Caller, { readonly name: string }>() {}

class TestKey extends HttpApiMiddleware.Tag<TestKey>()("TestKey", {
  provides: Caller,
  failure: failureOf(ApiErrors.MissingApiKey, ApiErrors.InvalidApiKey),
  security: { apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }) }
}) {}

const getThing = HttpApiEndpoint.get("get", "/things/:id")
  .setPath(pathOf({ id: ThingId }, { error: ApiErrors.NotFound, nouns: { id: "thing" } }))
  .setHeaders(Schema.Struct({ "merchant-id": prefixedId("mrch", "MerchantId") }))
  .addSuccess(Schema.Struct({ id: Schema.String, caller: Schema.String }))
  .pipe(failsWith(ApiErrors.Forbidden))

const createThing = HttpApiEndpoint.post("create", "/things")
  .setHeaders(IdempotentHeaders)
  .setPayload(Schema.Struct({ name: Schema.String }))
  .addSuccess(Schema.Struct({ name: Schema.String }), { status: 201 })
  .pipe(failsWith())

class Things extends HttpApiGroup.make("things")
  .add(getThing)
  .add(createThing)
  .middleware(TestKey) {}

class Loose extends HttpApiGroup.make("loose")
  .add(
    HttpApiEndpoint.post("echo", "/loose")
      .setPayload(Schema.Struct({ name: Schema.String }))
      .addSuccess(Schema.Struct({ name: Schema.String }))
      .pipe(failsWith())
  )
  .annotate(UnknownBodyFields, "ignore") {}

class TestApi extends HttpApi.make("test").add(Things).add(Loose) {}

const implementations = [
  implement(Things, {
    get: ({ path, headers }) =>
      Effect.map(Caller, (caller) =>
        json(200, { id: path.id, caller: `${caller.name}@${headers["merchant-id"]}` })
      ),
    create: ({ payload, headers }) =>
      Effect.succeed(json(201, { name: `${payload.name}/${headers["idempotency-key"]}` }))
  }),
  implement(Loose, { echo: ({ payload }) => Effect.succeed(json(200, payload)) })
]

// The caller is provided by the engine's handler, from the authenticator below.
const routes = apiRoutes(TestApi, implementations) as ReadonlyArray<Route<never>>

const handler = makeEngineHandler(routes, {
  maxBodyBytes: 1024,
  errorReply,
  authenticators: [
    {
      middleware: TestKey,
      authenticate: (request) =>
        request.header("api-key") === "good"
          ? Effect.succeed({ service: { name: "ada" } })
          : Effect.fail(
              new Unauthenticated({
                reason: request.header("api-key") === undefined ? "missing" : "invalid"
              })
            )
    }
  ]
})

/** A request; a body goes as JSON (a body without a Content-Type is refused: Engine.test.ts). */
const send = (method: string, url: string, headers: Record<string, string> = {}, body?: string) =>
  Effect.flatMap(handler, (handle) =>
    Effect.promise(() =>
      handle({
        method,
        url,
        header: (name) =>
          headers[name] ??
          (name === "content-type" && body !== undefined ? "application/json" : undefined),
        readBody: async () => new TextEncoder().encode(body ?? "")
      })
    )
  ).pipe(
    Effect.map((response) => ({ status: response.status, body: JSON.parse(String(response.body)) }))
  )

const authed = { "api-key": "good", "merchant-id": "mrch_0000000000shop0001" }

describe("routes from an API definition", () => {
  it.effect("decode the path, headers and body with the endpoint's schemas", () =>
    Effect.gen(function* () {
      expect(yield* send("GET", "/things/thg_0000000000thing001", authed)).toEqual({
        status: 200,
        body: { id: "thg_0000000000thing001", caller: "ada@mrch_0000000000shop0001" }
      })
      expect(
        yield* send(
          "POST",
          "/things",
          { "api-key": "good", "idempotency-key": "k1" },
          '{"name":"x"}'
        )
      ).toEqual({ status: 201, body: { name: "x/k1" } })
    })
  )

  it.effect("answer 404 with the path's code for an id of any shape that does not decode", () =>
    Effect.gen(function* () {
      for (const id of ["nope", "thg_", "mrch_0000000000shop0001", "%E0%A4%A"]) {
        const answer = yield* send("GET", `/things/${id}`, authed)
        expect(answer.status, id).toBe(404)
        expect(answer.body.code).toBe("not_found")
      }
    })
  )

  it.effect("answer each header's rule: missing, then invalid; an empty value is missing", () =>
    Effect.gen(function* () {
      const missing = yield* send("GET", "/things/thg_0000000000thing001", { "api-key": "good" })
      expect(missing).toMatchObject({ status: 400, body: { code: "missing_merchant_id" } })
      expect(missing.body.issues).toEqual([{ field: "Merchant-Id", message: "is required" }])
      const empty = yield* send("GET", "/things/thg_0000000000thing001", {
        ...authed,
        "merchant-id": ""
      })
      expect(empty.body.code).toBe("missing_merchant_id")
      const bad = yield* send("GET", "/things/thg_0000000000thing001", {
        ...authed,
        "merchant-id": "shop"
      })
      expect(bad).toMatchObject({ status: 400, body: { code: "invalid_params" } })
      expect(bad.body.issues[0].field).toBe("Merchant-Id")
      const noKey = yield* send("POST", "/things", { "api-key": "good" }, '{"name":"x"}')
      expect(noKey.body.code).toBe("missing_idempotency_key")
      const longKey = yield* send(
        "POST",
        "/things",
        { "api-key": "good", "idempotency-key": "k".repeat(256) },
        '{"name":"x"}'
      )
      expect(longKey).toMatchObject({ status: 400, body: { code: "params_validation" } })
    })
  )

  it.effect("authenticate by the group's middleware; unknown body fields by the group's rule", () =>
    Effect.gen(function* () {
      const noKey = yield* send("GET", "/things/thg_0000000000thing001", {})
      expect(noKey).toMatchObject({ status: 401, body: { code: "missing_api_key" } })
      const strict = yield* send(
        "POST",
        "/things",
        { "api-key": "good", "idempotency-key": "k" },
        '{"name":"x","typo":1}'
      )
      expect(strict).toMatchObject({ status: 400, body: { code: "params_validation" } })
      expect(strict.body.issues).toEqual([{ field: "typo", message: "is not a known field" }])
      // No middleware on this group: public, and it ignores fields it does not know.
      expect(yield* send("POST", "/loose", {}, '{"name":"x","extra":1}')).toEqual({
        status: 200,
        body: { name: "x" }
      })
    })
  )

  it("declare every error the shape implies, beside the handler's own", () => {
    const operations = OpenApi.fromApi(TestApi).paths
    const codes = (path: string, method: "get" | "post") =>
      Object.fromEntries(
        Object.entries(operations[path]![method]!.responses)
          .filter(([status]) => status >= "400")
          .map(([status, response]) => {
            const schema = (response as { content?: Record<string, { schema: unknown }> })
              .content?.["application/json"]?.schema
            const refs = JSON.stringify(schema).match(/[A-Za-z]+Error(?=")/g)
            return [status, refs?.filter((r) => r !== "HttpApiDecodeError").sort()]
          })
      )
    expect(Object.keys(codes("/things/{id}", "get")).sort()).toEqual([
      "400",
      "401",
      "403",
      "404",
      "500"
    ])
    expect(codes("/things/{id}", "get")["400"]).toEqual([
      "InvalidParamsError",
      "MissingMerchantIdError",
      "UnknownApiVersionError"
    ])
    expect(codes("/things/{id}", "get")["404"]).toEqual(["NotFoundError"])
    expect(codes("/things", "post")["400"]).toEqual([
      "MissingIdempotencyKeyError",
      "ParamsValidationError",
      "UnknownApiVersionError"
    ])
    expect(Object.keys(codes("/things", "post")).sort()).toEqual([
      "400",
      "401",
      "413",
      "415",
      "500"
    ])
  })

  it("refuse, at start, an endpoint without a handler or without declared errors", () => {
    expect(() => apiRoutes(TestApi, implementations.slice(0, 1))).toThrow(/loose\.echo/)
    const undeclared = HttpApiEndpoint.get("bare", "/bare").addSuccess(Schema.String)
    class Bare extends HttpApiGroup.make("bare").add(undeclared) {}
    class BareApi extends HttpApi.make("bare").add(Bare) {}
    expect(() =>
      apiRoutes(BareApi, [implement(Bare, { bare: () => Effect.succeed(json(200, "")) })])
    ).toThrow(/does not declare its errors/)
  })
})
