import type { HttpApiMiddleware } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, HashMap, Logger, Option } from "effect"
import { makeEngineHandler } from "./Engine.js"
import { type EngineRequest, json, type Reply } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import type { RequestOutcome } from "./RequestOutcome.js"
import { type Authenticator, publicRoute, type Route } from "./Route.js"

const request = (url: string, method = "GET") => ({
  method,
  url,
  header: () => undefined,
  readBody: async () => new Uint8Array()
})

const routes = [
  publicRoute("GET", "/fine", () => Effect.succeed(json(200, { ok: true }))),
  // Waits on a timer outside the Effect clock: the request's fiber suspends, then resumes.
  publicRoute("GET", "/later", () =>
    Effect.async<ReturnType<typeof json>>((resume) => {
      setTimeout(() => resume(Effect.succeed(json(200, { later: true }))), 5)
    })
  ),
  publicRoute("GET", "/refused", () =>
    Effect.fail(new RequestError({ status: 409, code: "nope", message: "refused" }))
  ),
  publicRoute("GET", "/broken", () => Effect.die(new Error("a bug")))
]

const handler = makeEngineHandler(routes, { maxBodyBytes: 1024, authenticators: [] })

describe("the engine's handler", () => {
  it.effect(
    "answers synchronous and waiting routes, and maps failures and defects",
    () =>
      Effect.gen(function* () {
        const handle = yield* handler
        const answer = (url: string, method?: string) =>
          Effect.promise(() => handle(request(url, method)))
        expect(yield* answer("/fine")).toMatchObject({ status: 200, body: '{"ok":true}' })
        expect(yield* answer("/later")).toMatchObject({ status: 200, body: '{"later":true}' })
        expect(yield* answer("/refused")).toMatchObject({
          status: 409,
          body: '{"code":"nope","message":"refused"}'
        })
        expect(yield* answer("/broken")).toMatchObject({
          status: 500,
          body: '{"code":"internal_error","message":"Internal Server Error"}'
        })
        expect((yield* answer("/fine", "POST")).headers.allow).toBe("GET")
        expect((yield* answer("/nowhere")).status).toBe(404)
        expect((yield* answer("/fine%zz")).status).toBe(404)
      }),
    { timeout: 10_000 }
  )
})

describe("a route's immediate answer", () => {
  const Caller = Context.GenericTag<{ readonly name: string }>("Caller")
  const middleware = {
    key: "TestKey",
    provides: Caller
  } as unknown as HttpApiMiddleware.TagClassAny
  let handled = 0
  const route: Route<never> = {
    method: "GET",
    path: "/things/:id",
    middleware,
    takesBody: false,
    handle: (exchange) => {
      handled++
      // The engine provides the caller its middleware authenticated.
      return Effect.map(Caller, (caller) =>
        json(200, { via: "effect", caller: caller.name, id: exchange.pathParams.id })
      ) as Effect.Effect<Reply>
    },
    immediate: (exchange, caller) => {
      if (exchange.pathParams.id === "boom") throw new Error("the database went away")
      return exchange.pathParams.id === "quick"
        ? json(200, { via: "immediate", caller: (caller as { name: string }).name, id: "quick" })
        : undefined
    }
  }
  const KNOWN = { name: "known caller" }
  // "known" callers are known at once (a cached key); "checked" ones only by the effect.
  const authenticator: Authenticator = {
    middleware,
    authenticate: (request) =>
      request.header("key") === undefined
        ? Effect.fail(new RequestError({ status: 401, code: "no_key", message: "no key" }))
        : Effect.succeed({ service: { name: `checked ${request.header("key")}` } }),
    known: (request) => (request.header("key") === "known" ? { service: KNOWN } : undefined)
  }
  const call = (url: string, key?: string): EngineRequest => ({
    method: "GET",
    url,
    header: (name) => (name === "key" ? key : undefined),
    readBody: async () => new Uint8Array()
  })

  it.effect("answers a caller known at once without the route's effect, else hands it over", () =>
    Effect.gen(function* () {
      const handle = yield* makeEngineHandler([route], {
        maxBodyBytes: 1024,
        authenticators: [authenticator]
      })
      const answer = (url: string, key?: string) =>
        Effect.promise(() => handle(call(url, key))).pipe(
          Effect.map((r) => ({ status: r.status, body: JSON.parse(String(r.body)) }))
        )
      handled = 0
      expect(yield* answer("/things/quick", "known")).toEqual({
        status: 200,
        body: { via: "immediate", caller: "known caller", id: "quick" }
      })
      expect(handled).toBe(0)
      // Undefined from the immediate answer: the effect answers, with the same caller.
      expect(yield* answer("/things/slow", "known")).toEqual({
        status: 200,
        body: { via: "effect", caller: "known caller", id: "slow" }
      })
      // A caller the effect has to check is never answered immediately.
      expect(yield* answer("/things/quick", "other")).toEqual({
        status: 200,
        body: { via: "effect", caller: "checked other", id: "quick" }
      })
      expect(yield* answer("/things/quick")).toEqual({
        status: 401,
        body: { code: "no_key", message: "no key" }
      })
      expect(handled).toBe(2)
      // A throw on the way is the effect's to meet again: it answers.
      expect(yield* answer("/things/boom", "known")).toEqual({
        status: 200,
        body: { via: "effect", caller: "known caller", id: "boom" }
      })
      expect(handled).toBe(3)
      // The answer carries the engine's headers like any other.
      const raw = yield* Effect.promise(() => handle(call("/things/quick", "known")))
      expect(raw.headers).toMatchObject({
        "content-type": "application/json; charset=utf-8",
        "cache-control": "no-store",
        "pay-version": expect.any(String)
      })
    })
  )
})

describe("a caller's admission (a rate limit)", () => {
  const Caller = Context.GenericTag<{ readonly name: string }>("Caller")
  const middleware = {
    key: "AdmitKey",
    provides: Caller
  } as unknown as HttpApiMiddleware.TagClassAny
  const route: Route<never> = {
    method: "GET",
    path: "/things/:id",
    middleware,
    takesBody: false,
    handle: () =>
      Effect.map(Caller, (caller) => json(200, { caller: caller.name })) as Effect.Effect<Reply>,
    // "quick" is answered at once; "later" one promise away, handing over to the effect;
    // anything else by the effect.
    immediate: (exchange) =>
      exchange.pathParams.id === "quick"
        ? json(200, { caller: "immediate" })
        : exchange.pathParams.id === "later"
          ? Promise.resolve(undefined)
          : undefined
  }
  const KNOWN = { name: "known" }
  const admitted: Array<string> = []
  let refuse = false
  const authenticator: Authenticator = {
    middleware,
    authenticate: (request) =>
      request.header("key") === "wrong"
        ? Effect.fail(new RequestError({ status: 401, code: "invalid_key", message: "wrong" }))
        : Effect.succeed({ service: { name: "checked" } }),
    known: (request) => (request.header("key") === "known" ? { service: KNOWN } : undefined),
    admit: (caller) => {
      admitted.push((caller.service as { name: string }).name)
      return refuse
        ? new RequestError({ status: 429, code: "rate_limited", message: "slow down" })
        : undefined
    }
  }

  it.effect("admits each request once, after authentication, whichever way it is answered", () =>
    Effect.gen(function* () {
      const handle = yield* makeEngineHandler([route], {
        maxBodyBytes: 1024,
        authenticators: [authenticator]
      })
      const status = (url: string, key: string) =>
        Effect.map(
          Effect.promise(() =>
            handle({
              method: "GET",
              url,
              header: (name) => (name === "key" ? key : undefined),
              readBody: async () => new Uint8Array()
            })
          ),
          (r) => r.status
        )
      for (const [url, key] of [
        ["/things/quick", "known"],
        ["/things/later", "known"],
        ["/things/slow", "known"],
        ["/things/quick", "other"],
        ["/things/later", "other"]
      ] as const) {
        admitted.length = 0
        expect(yield* status(url, key), `${url} ${key}`).toBe(200)
        expect(admitted, `${url} ${key}`).toEqual([key === "known" ? "known" : "checked"])
      }
      // A wrong key is refused as such: never admitted, never counted.
      admitted.length = 0
      expect(yield* status("/things/quick", "wrong")).toBe(401)
      expect(admitted).toEqual([])
      // A refusal answers, immediate route or not, and nothing runs.
      refuse = true
      for (const [url, key] of [
        ["/things/quick", "known"],
        ["/things/later", "known"],
        ["/things/slow", "other"]
      ] as const) {
        admitted.length = 0
        expect(yield* status(url, key), `${url} ${key}`).toBe(429)
        expect(admitted.length).toBe(1)
      }
      refuse = false
    })
  )
})

describe("the caller's extra services", () => {
  const Caller = Context.GenericTag<{ readonly name: string }>("Caller")
  const Key = Context.GenericTag<{ readonly keyId: string }>("Key")
  const middleware = {
    key: "KeyTest",
    provides: Caller
  } as unknown as HttpApiMiddleware.TagClassAny
  const route: Route<never> = {
    method: "GET",
    path: "/who",
    middleware,
    takesBody: false,
    handle: () =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const key = yield* Effect.serviceOption(Key)
        return json(200, { caller: caller.name, key: key._tag === "Some" ? key.value.keyId : null })
      }) as Effect.Effect<Reply>
  }
  // One partner, several keys: each key's context made once, as a verified-key cache would.
  const PARTNER = { name: "partner" }
  const keys = new Map(
    ["k1", "k2", "k3"].map((k) => [k, Context.make(Key, { keyId: `key_${k}` })] as const)
  )
  const caller = (key: string | undefined) => ({ service: PARTNER, extra: keys.get(key ?? "") })
  const authenticator: Authenticator = {
    middleware,
    authenticate: (request) => Effect.succeed(caller(request.header("key"))),
    // k3 is only ever checked by the effect.
    known: (request) => (request.header("key") === "k3" ? undefined : caller(request.header("key")))
  }

  it.effect("gives each request the extra of its own caller, beside the middleware's service", () =>
    Effect.gen(function* () {
      const handle = yield* makeEngineHandler([route], {
        maxBodyBytes: 1024,
        authenticators: [authenticator]
      })
      const who = (key?: string) =>
        Effect.promise(() =>
          handle({
            method: "GET",
            url: "/who",
            header: (name) => (name === "key" ? key : undefined),
            readBody: async () => new Uint8Array()
          })
        ).pipe(Effect.map((r) => JSON.parse(String(r.body))))
      for (let round = 0; round < 2; round++) {
        expect(yield* who("k1")).toEqual({ caller: "partner", key: "key_k1" })
        expect(yield* who("k2")).toEqual({ caller: "partner", key: "key_k2" })
        expect(yield* who("k3")).toEqual({ caller: "partner", key: "key_k3" })
        expect(yield* who("none")).toEqual({ caller: "partner", key: null })
      }
    })
  )
})

describe("routing", () => {
  const answering = (name: string) => () => Effect.succeed(json(200, { name }))
  const routes = [
    publicRoute("GET", "/v1/merchants/:id", answering("merchant")),
    publicRoute("GET", "/v1/merchants/payments", answering("legacy payments")),
    publicRoute("POST", "/v1/merchants/:id", answering("merchant update")),
    publicRoute("GET", "/:tenant/merchants/:id", answering("tenant merchant")),
    publicRoute("GET", "/v1/:kind/:id", answering("any kind")),
    publicRoute("GET", "/v1/payments/:id/status", answering("status"))
  ]

  it.effect("finds literal segments before parameters, whatever the first two say", () =>
    Effect.gen(function* () {
      const handle = yield* makeEngineHandler(routes, { maxBodyBytes: 1024, authenticators: [] })
      const name = (url: string, method = "GET") =>
        Effect.map(
          Effect.promise(() => handle(request(url, method))),
          (r) => (r.status === 200 ? JSON.parse(String(r.body)).name : `${r.status}`)
        )
      expect(yield* name("/v1/merchants/payments")).toBe("legacy payments")
      expect(yield* name("/v1/merchants/mrch_1")).toBe("merchant")
      expect(yield* name("/v1/merchants/mrch_1", "POST")).toBe("merchant update")
      expect(yield* name("/v1/merchants/mrch_1", "DELETE")).toBe("405")
      expect(yield* name("/v1/things/t_1")).toBe("any kind")
      expect(yield* name("/acme/merchants/mrch_1")).toBe("tenant merchant")
      expect(yield* name("/v1/payments/pay_1/status")).toBe("status")
      expect(yield* name("/v2/payments/pay_1/status")).toBe("404")
      expect(yield* name("/v1/payments/pay_1/status/more")).toBe("404")
    })
  )
})

describe("a route that accepts only some requests of its path", () => {
  const withAccept = (url: string, accept: string, method = "GET"): EngineRequest => ({
    method,
    url,
    header: (name) => (name === "accept" ? accept : undefined),
    readBody: async () => new Uint8Array()
  })
  const pageRoutes = [
    publicRoute("GET", "/health", () => Effect.succeed(json(200, { ok: true }))),
    publicRoute("GET", "/:id", (e) => Effect.succeed(json(200, { page: e.pathParams.id })), {
      accepts: (params, request) =>
        params.id!.startsWith("pay_") && (request.header("accept") ?? "").includes("text/html")
    })
  ]

  it.effect("is passed over, as if its path did not match, for the others", () =>
    Effect.gen(function* () {
      const handle = yield* makeEngineHandler(pageRoutes, {
        maxBodyBytes: 1024,
        authenticators: []
      })
      const answer = (r: EngineRequest) => Effect.promise(() => handle(r))
      expect(yield* answer(withAccept("/pay_1", "text/html"))).toMatchObject({
        status: 200,
        body: '{"page":"pay_1"}'
      })
      // Not accepted: the 404 of a path no route has, for every method.
      const notFound = '{"code":"not_found","message":"No route for GET /pay_1"}'
      expect(yield* answer(withAccept("/pay_1", "application/json"))).toMatchObject({
        status: 404,
        body: notFound
      })
      expect((yield* answer(withAccept("/pay_1", "application/json", "POST"))).status).toBe(404)
      expect((yield* answer(withAccept("/other", "text/html"))).status).toBe(404)
      // Accepted but another method: 405 naming the route's.
      expect((yield* answer(withAccept("/pay_1", "text/html", "POST"))).headers.allow).toBe("GET")
      // A literal route of the same length still wins.
      expect((yield* answer(withAccept("/health", "text/html"))).body).toBe('{"ok":true}')
    })
  )
})

describe("request ids and outcomes", () => {
  const Caller = Context.GenericTag<{ readonly name: string }>("Caller")
  const middleware = {
    key: "IdKey",
    provides: Caller
  } as unknown as HttpApiMiddleware.TagClassAny
  const KNOWN = { name: "known" }
  const authenticator: Authenticator = {
    middleware,
    authenticate: () =>
      Effect.succeed({ service: { name: "checked" }, caller: { partnerId: "ptnr_checked" } }),
    known: (request) =>
      request.header("key") === "known"
        ? { service: KNOWN, caller: { walletAppId: "app_known" } }
        : undefined
  }
  const logged: Array<{ message: unknown; requestId: unknown }> = []
  const routes: ReadonlyArray<Route<never>> = [
    publicRoute("GET", "/fine", () => Effect.succeed(json(200, { ok: true }))),
    publicRoute("GET", "/logs/:id", () =>
      Effect.as(Effect.logInfo("inside"), json(200, { ok: true }))
    ),
    publicRoute("GET", "/broken", () => Effect.die(new Error("a bug"))),
    publicRoute("GET", "/forever", () => Effect.never),
    {
      method: "GET",
      path: "/things/:id",
      middleware,
      takesBody: false,
      handle: () => Effect.succeed(json(200, { via: "effect" })),
      // "held": answered one promise away without a fiber (a long-poll held).
      immediate: (exchange) =>
        exchange.pathParams.id === "quick"
          ? json(200, { via: "immediate" })
          : exchange.pathParams.id === "held"
            ? new Promise((resolve) => setTimeout(() => resolve(json(200, { via: "held" })), 5))
            : undefined
    }
  ]
  const call = (url: string, headers: Record<string, string> = {}, method = "GET") => ({
    method,
    url,
    header: (name: string) => headers[name],
    readBody: async () => new Uint8Array()
  })

  it.effect("echo a usable X-Request-Id, else a new one, and tell each observer once", () =>
    Effect.gen(function* () {
      const outcomes: Array<RequestOutcome> = []
      const capture = Logger.make(({ message, annotations }) => {
        logged.push({
          message,
          requestId: HashMap.get(annotations, "requestId").pipe(Option.getOrUndefined)
        })
      })
      const handle = yield* makeEngineHandler(routes, {
        maxBodyBytes: 1024,
        authenticators: [authenticator],
        observers: [
          (o) => outcomes.push(o),
          () => {
            throw new Error("an observer's bug")
          }
        ]
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      const answer = (url: string, headers?: Record<string, string>, method?: string) =>
        Effect.promise(() => handle(call(url, headers, method)))

      const sent = yield* answer("/fine", { "x-request-id": "edge-7f3a/1" })
      expect(sent.headers["x-request-id"]).toBe("edge-7f3a/1")
      // Unusable ids are replaced, never refused.
      for (const bad of ["", "has space", "é", "x".repeat(129)]) {
        const replaced = yield* answer("/fine", { "x-request-id": bad })
        expect(replaced.status).toBe(200)
        expect(replaced.headers["x-request-id"]).not.toBe(bad)
        expect(replaced.headers["x-request-id"]).toMatch(/^[\x21-\x7e]{1,128}$/)
      }
      const a = (yield* answer("/fine")).headers["x-request-id"]
      const b = (yield* answer("/fine")).headers["x-request-id"]
      expect(a).toBeDefined()
      expect(a).not.toBe(b)
      // On every answer: 404, 405, immediate, a 500.
      const notFound = yield* answer("/nowhere", { "x-request-id": "r404" })
      expect([notFound.status, notFound.headers["x-request-id"]]).toEqual([404, "r404"])
      const wrongMethod = yield* answer("/fine", { "x-request-id": "r405" }, "POST")
      expect([wrongMethod.status, wrongMethod.headers["x-request-id"]]).toEqual([405, "r405"])
      const quick = yield* answer("/things/quick", { key: "known", "x-request-id": "rquick" })
      expect([quick.status, quick.headers["x-request-id"]]).toEqual([200, "rquick"])
      const held = yield* answer("/things/held", { key: "known", "x-request-id": "rheld" })
      expect([held.status, held.headers["x-request-id"], held.body]).toEqual([
        200,
        "rheld",
        '{"via":"held"}'
      ])
      const slow = yield* answer("/things/slow", { "x-request-id": "rslow" })
      expect([slow.status, slow.headers["x-request-id"]]).toEqual([200, "rslow"])
      const broken = yield* answer("/broken", { "x-request-id": "r500" })
      expect([broken.status, broken.headers["x-request-id"]]).toEqual([500, "r500"])
      // A client that goes away is no failure of the engine's: 499, no cause.
      const controller = new AbortController()
      const gone = handle({
        ...call("/forever", { "x-request-id": "rgone" }),
        signal: controller.signal
      })
      setTimeout(() => controller.abort(), 5)
      expect((yield* Effect.promise(() => gone)).status).toBe(499)
      // Logs of the request's fiber carry its id.
      yield* answer("/logs/1", { "x-request-id": "rlog" })
      expect(logged).toContainEqual({ message: ["inside"], requestId: "rlog" })

      const byId = (id: string) => outcomes.filter((o) => o.requestId === id)
      expect(outcomes).toHaveLength(15)
      expect(byId("r404")).toMatchObject([{ method: "GET", route: undefined, status: 404 }])
      expect(byId("r405")).toMatchObject([{ method: "POST", route: undefined, status: 405 }])
      expect(byId("rquick")).toMatchObject([
        { route: "/things/:id", status: 200, caller: { walletAppId: "app_known" } }
      ])
      expect(byId("rheld")).toMatchObject([
        { route: "/things/:id", status: 200, caller: { walletAppId: "app_known" } }
      ])
      expect(byId("rheld")[0]!.durationMs).toBeGreaterThanOrEqual(4)
      expect(byId("rslow")).toMatchObject([
        { route: "/things/:id", status: 200, caller: { partnerId: "ptnr_checked" } }
      ])
      expect(byId("rgone")).toMatchObject([{ route: "/forever", status: 499, cause: undefined }])
      const [failure] = byId("r500")
      expect(failure).toMatchObject({ route: "/broken", status: 500 })
      expect(Cause.pretty(failure!.cause!)).toContain("a bug")
      expect(byId("rlog")[0]!.durationMs).toBeGreaterThanOrEqual(0)
    })
  )
})

describe("a JSON body's Content-Type", () => {
  // The body as the route saw it, or "none" for a route that reads none.
  const routes = [
    publicRoute("POST", "/json", (exchange) => Effect.succeed(json(200, { body: exchange.body })), {
      takesBody: true
    }),
    publicRoute("POST", "/bodiless", () => Effect.succeed(json(200, { body: "none" })))
  ]
  const post = (url: string, headers: Record<string, string>, body = "") => ({
    method: "POST",
    url,
    header: (name: string) => headers[name],
    readBody: async () => new TextEncoder().encode(body)
  })
  const answer = (url: string, headers: Record<string, string>, body?: string) =>
    Effect.flatMap(makeEngineHandler(routes, { maxBodyBytes: 1024, authenticators: [] }), (h) =>
      Effect.promise(() => h(post(url, headers, body)))
    ).pipe(Effect.map((r) => ({ status: r.status, body: JSON.parse(String(r.body)) })))

  it.effect("refuses a body sent without one (a browser may post that cross-site): 415", () =>
    Effect.gen(function* () {
      const refused = yield* answer("/json", {}, '{"a":1}')
      expect(refused).toMatchObject({ status: 415, body: { code: "unsupported_media_type" } })
      expect(refused.body.message).toContain("Content-Type: application/json")
      expect(yield* answer("/json", { "content-type": "text/plain" }, '{"a":1}')).toMatchObject({
        status: 415
      })
      expect(yield* answer("/json", { "content-type": "" }, '{"a":1}')).toMatchObject({
        status: 415
      })
    })
  )

  it.effect("takes application/json with parameters, and +json types", () =>
    Effect.gen(function* () {
      for (const type of [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        "application/merge-patch+json"
      ])
        expect(yield* answer("/json", { "content-type": type }, '{"a":1}')).toEqual({
          status: 200,
          body: { body: { a: 1 } }
        })
    })
  )

  it.effect("lets an empty body come without one, on a route that reads a body or not", () =>
    Effect.gen(function* () {
      expect(yield* answer("/json", {})).toEqual({ status: 200, body: {} })
      expect(yield* answer("/bodiless", {})).toEqual({ status: 200, body: { body: "none" } })
    })
  )
})
