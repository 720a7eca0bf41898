import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeEngineHandler } from "./Engine.js"
import { json } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import { publicRoute } from "./Route.js"

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
