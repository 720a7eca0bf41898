/**
 * The engine's secret: what a valid one is, sealing and opening per purpose,
 * and the layer that takes the given secret or keeps a generated one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Layer } from "effect"
import {
  decodeEngineSecret,
  EngineSecret,
  EngineSecretStore,
  engineSecretLayer,
  generateEngineSecret,
  makeEngineSecret
} from "./EngineSecret.js"

const bytes32 = (fill: number) => new Uint8Array(32).fill(fill)
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))

describe("decodeEngineSecret", () => {
  it("takes standard base64 of 32 or more bytes", () => {
    expect(Either.getOrThrow(decodeEngineSecret(b64(bytes32(7))))).toEqual(bytes32(7))
    expect(Either.isRight(decodeEngineSecret(b64(new Uint8Array(64))))).toBe(true)
    expect(Either.isRight(decodeEngineSecret(` ${generateEngineSecret()}\n`))).toBe(true)
  })

  it("refuses fewer bytes, and what is not base64, saying why", () => {
    expect(decodeEngineSecret(b64(new Uint8Array(31)))).toEqual(
      Either.left("must be at least 32 random bytes (it holds 31)")
    )
    for (const text of ["", "not base64!", "abc", "a".repeat(43)]) {
      expect(
        Either.getLeft(decodeEngineSecret(text)).pipe((o) => o._tag),
        text
      ).toBe("Some")
    }
  })

  it("generates 32 random bytes, a new value each time", () => {
    const a = generateEngineSecret()
    expect(Either.getOrThrow(decodeEngineSecret(a))).toHaveLength(32)
    expect(generateEngineSecret()).not.toBe(a)
  })
})

describe("sealing", () => {
  const secret = makeEngineSecret(bytes32(1))

  it.effect("opens what it sealed, for the same purpose; each seal differs (a fresh IV)", () =>
    Effect.gen(function* () {
      const sealed = yield* secret.seal("webhook-secret", "whsec_abc")
      expect(sealed).toMatch(/^v1\.[A-Za-z0-9+/]+=*$/)
      expect(sealed).not.toContain("whsec_abc")
      expect(yield* secret.open("webhook-secret", sealed)).toBe("whsec_abc")
      expect(yield* secret.seal("webhook-secret", "whsec_abc")).not.toBe(sealed)
    })
  )

  it.effect("refuses another purpose, another secret, an altered value and garbage", () =>
    Effect.gen(function* () {
      const sealed = yield* secret.seal("webhook-secret", "whsec_abc")
      const refused = (effect: Effect.Effect<string, unknown>) =>
        Effect.map(Effect.exit(effect), (exit) =>
          Exit.isFailure(exit) ? "refused" : Exit.isSuccess(exit) ? exit.value : "?"
        )
      expect(yield* refused(secret.open("api-key-replay", sealed))).toBe("refused")
      expect(yield* refused(makeEngineSecret(bytes32(2)).open("webhook-secret", sealed))).toBe(
        "refused"
      )
      // One bit of the authentication tag flipped (decoded and encoded again: a changed
      // base64 character can fall on padding bits and change nothing).
      const bytes = Uint8Array.from(atob(sealed.slice(3)), (c) => c.charCodeAt(0))
      bytes[bytes.length - 1]! ^= 1
      const altered = `v1.${btoa(String.fromCharCode(...bytes))}`
      expect(yield* refused(secret.open("webhook-secret", altered))).toBe("refused")
      for (const junk of ["", "v1.", "v1.!!!", "v2.AAAA", sealed.slice(3)]) {
        expect(yield* refused(secret.open("webhook-secret", junk)), junk).toBe("refused")
      }
    })
  )
})

describe("engineSecretLayer", () => {
  const storeHolding = (initial: string | undefined) => {
    let kept = initial
    const calls: Array<string> = []
    const layer = Layer.succeed(
      EngineSecretStore,
      EngineSecretStore.of({
        getOrCreate: (candidate) =>
          Effect.sync(() => {
            calls.push(candidate)
            kept ??= candidate
            return kept
          })
      })
    )
    return { layer, calls, kept: () => kept }
  }
  const roundTrip = (layer: Layer.Layer<EngineSecret>, sealedBy: EngineSecret["Type"]) =>
    Effect.gen(function* () {
      const sealed = yield* sealedBy.seal("p", "value")
      return yield* Effect.provide(
        Effect.flatMap(EngineSecret, (s) => s.open("p", sealed)),
        layer
      )
    })

  it.effect("uses the given secret and never touches the store", () =>
    Effect.gen(function* () {
      const store = storeHolding(undefined)
      const layer = engineSecretLayer(b64(bytes32(3))).pipe(Layer.provide(store.layer))
      expect(yield* roundTrip(layer, makeEngineSecret(bytes32(3)))).toBe("value")
      expect(store.calls).toEqual([])
    })
  )

  it.effect("without one, keeps a generated secret in the store, and later starts use it", () =>
    Effect.gen(function* () {
      const store = storeHolding(undefined)
      const layer = engineSecretLayer(undefined).pipe(Layer.provide(store.layer))
      const first = yield* Effect.provide(EngineSecret, layer)
      const kept = store.kept()
      expect(kept).toBeDefined()
      // A second start (another instance): offered another candidate, it gets the kept one.
      expect(yield* roundTrip(layer, first)).toBe("value")
      expect(store.calls).toHaveLength(2)
      expect(store.calls[1]).not.toBe(kept)
      expect(store.kept()).toBe(kept)
    })
  )

  it.effect("a kept secret that is not one stops the start, naming where it came from", () =>
    Effect.gen(function* () {
      const store = storeHolding("short")
      const exit = yield* Effect.exit(
        Effect.provide(EngineSecret, engineSecretLayer(undefined).pipe(Layer.provide(store.layer)))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain(
        "the engine secret kept in the database"
      )
    })
  )
})
