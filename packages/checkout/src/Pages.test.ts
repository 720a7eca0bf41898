/**
 * The pages as an engine mounts them (its `pages` option), through its fetch
 * handler on the in-memory stores: given `checkoutPages`, the checkout's script,
 * the page for an unknown payment and the data-collection page answer; without
 * it, the same URLs are the engine's 404.
 */
import { describe, expect, it } from "@effect/vitest"
import { type EnginePages, makePaymentEngine } from "@pay/core"
import { MemoryStorage } from "@pay/testing"
import { Effect, Exit, Scope } from "effect"
import { checkoutPages } from "./Pages.js"

const answers = (pages: EnginePages | undefined) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const engine = yield* Scope.extend(
      makePaymentEngine({
        storage: MemoryStorage,
        publicUrl: "http://127.0.0.1",
        workers: false,
        ...(pages === undefined ? {} : { pages })
      }),
      scope
    )
    const get = (path: string) =>
      Effect.promise(async () => {
        const response = await engine.fetch(
          new Request(`http://127.0.0.1${path}`, { headers: { accept: "text/html" } })
        )
        await response.arrayBuffer()
        return { status: response.status, type: response.headers.get("content-type") }
      })
    const found = {
      script: yield* get("/checkout.js"),
      page: yield* get("/pay_unknown1"),
      collect: yield* get("/collect/pay_unknown1")
    }
    yield* Scope.close(scope, Exit.void)
    return found
  })

describe("checkoutPages, the engine's pages option", () => {
  it.effect("mounts the checkout and the data-collection pages", () =>
    Effect.gen(function* () {
      const found = yield* answers(checkoutPages)
      expect(found.script.status).toBe(200)
      expect(found.script.type).toMatch(/javascript/)
      expect(found.page.status).toBe(404)
      expect(found.page.type).toMatch(/^text\/html/)
      expect(found.collect.type).toMatch(/^text\/html/)
    })
  )

  it.effect("without it, those URLs are the engine's 404", () =>
    Effect.gen(function* () {
      const found = yield* answers(undefined)
      for (const answer of Object.values(found)) {
        expect(answer.status).toBe(404)
        expect(answer.type).not.toMatch(/^text\/html/)
      }
    })
  )
})
