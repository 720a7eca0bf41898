/**
 * `GET /logos/{name}` through the engine's fetch handler, on the in-memory
 * stores: the frozen bytes as kept, each size, the headers that keep a logo
 * immutable and unsniffed, and the refusals.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Effect, Exit, Scope } from "effect"
import { makePaymentEngine } from "../PaymentEngine.js"
import { type FrozenLogo, LogoStore } from "./Logo.js"

const logo: FrozenLogo = {
  name: `${"ab".repeat(32)}.webp`,
  contentType: "image/webp",
  side: 1024,
  master: Uint8Array.from({ length: 3000 }, (_, i) => i % 256),
  sizes: new Map([64, 128, 256, 512].map((s) => [s, Uint8Array.from({ length: s }, () => s % 256)]))
}

describe("GET /logos/{name}", () => {
  it.effect("serves the frozen logo and its sizes, immutable and unsniffed; refuses the rest", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const engine = yield* Scope.extend(
        makePaymentEngine({
          storage: MemoryStorage,
          publicUrl: "http://127.0.0.1",
          workers: false
        }),
        scope
      )
      yield* Effect.provide(
        Effect.flatMap(LogoStore, (store) => store.put(logo)),
        engine.context
      )
      const get = (path: string) =>
        Effect.promise(async () => {
          const response = await engine.fetch(new Request(`http://127.0.0.1${path}`))
          return { response, bytes: new Uint8Array(await response.arrayBuffer()) }
        })

      const master = yield* get(`/logos/${logo.name}`)
      expect(master.response.status).toBe(200)
      expect(master.response.headers.get("content-type")).toBe("image/webp")
      expect(master.response.headers.get("cache-control")).toBe(
        "public, max-age=31536000, immutable"
      )
      expect(master.response.headers.get("x-content-type-options")).toBe("nosniff")
      expect(Buffer.from(master.bytes).equals(Buffer.from(logo.master))).toBe(true)
      for (const [size, bytes] of logo.sizes) {
        const sized = yield* get(`/logos/${logo.name}?size=${size}`)
        expect(Buffer.from(sized.bytes).equals(Buffer.from(bytes)), `size ${size}`).toBe(true)
      }

      const badSize = yield* get(`/logos/${logo.name}?size=100`)
      expect(badSize.response.status).toBe(400)
      expect(badSize.response.headers.get("cache-control")).toBe("no-store")
      for (const path of [`/logos/${"cd".repeat(32)}.webp`, "/logos/..%2Fetc", "/logos/x.webp"]) {
        const missing = yield* get(path)
        expect(missing.response.status, path).toBe(404)
      }
      yield* Scope.close(scope, Exit.void)
    })
  )
})
