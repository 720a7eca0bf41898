/**
 * The engine's secret: what a valid one is, sealing and opening per purpose,
 * previous secrets that open and never seal, and the layer that takes the
 * given secret or keeps a generated one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Option } from "effect"
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

/** Whether `effect` fails with SealedValueInvalid (and nothing else). */
const refusedSealed = (effect: Effect.Effect<unknown, unknown>) =>
  Effect.map(Effect.either(effect), (e) =>
    Either.isLeft(e) && (e.left as { _tag?: string })._tag === "SealedValueInvalid"
      ? "refused"
      : "opened"
  )

describe("signing", () => {
  const secret = makeEngineSecret(bytes32(1))

  it.effect(
    "signs per purpose; verifies under the current or a previous secret, nothing else",
    () =>
      Effect.gen(function* () {
        const tag = yield* secret.sign("collect-data-page", "message")
        expect(tag).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(yield* secret.sign("collect-data-page", "message")).toBe(tag)
        expect(yield* secret.sign("other", "message")).not.toBe(tag)
        expect(yield* secret.verify("collect-data-page", "message", tag)).toBe(true)
        expect(yield* secret.verify("other", "message", tag)).toBe(false)
        expect(yield* secret.verify("collect-data-page", "messagE", tag)).toBe(false)
        expect(yield* secret.verify("collect-data-page", "message", tag.slice(1))).toBe(false)
        expect(
          yield* makeEngineSecret(bytes32(2), [bytes32(1)]).verify(
            "collect-data-page",
            "message",
            tag
          )
        ).toBe(true)
        expect(
          yield* makeEngineSecret(bytes32(2)).verify("collect-data-page", "message", tag)
        ).toBe(false)
      })
  )
})

describe("previous secrets", () => {
  const [A, B, C] = [bytes32(0xa), bytes32(0xb), bytes32(0xc)]
  const underA = makeEngineSecret(A)
  const rotated = makeEngineSecret(B, [A])

  it.effect("open what was sealed under them; everything new is sealed under the current one", () =>
    Effect.gen(function* () {
      const old = yield* underA.seal("webhook-secret", "whsec_old")
      expect(yield* rotated.open("webhook-secret", old)).toBe("whsec_old")
      const fresh = yield* rotated.seal("webhook-secret", "whsec_new")
      expect(yield* makeEngineSecret(B).open("webhook-secret", fresh)).toBe("whsec_new")
      expect(yield* refusedSealed(underA.open("webhook-secret", fresh))).toBe("refused")
      // Several previous ones, in any order, the current one among them: each opens its own.
      const underC = yield* makeEngineSecret(C).seal("webhook-secret", "whsec_c")
      const many = makeEngineSecret(B, [C, B, A, C])
      expect(yield* many.open("webhook-secret", underC)).toBe("whsec_c")
      expect(yield* many.open("webhook-secret", old)).toBe("whsec_old")
      expect(yield* many.open("webhook-secret", fresh)).toBe("whsec_new")
    })
  )

  it.effect("a secret neither current nor previous opens nothing; purposes stay apart", () =>
    Effect.gen(function* () {
      const underC = yield* makeEngineSecret(C).seal("webhook-secret", "whsec_c")
      expect(yield* refusedSealed(rotated.open("webhook-secret", underC))).toBe("refused")
      expect(yield* refusedSealed(rotated.reseal("webhook-secret", underC))).toBe("refused")
      const old = yield* underA.seal("webhook-secret", "whsec_old")
      expect(yield* refusedSealed(rotated.open("idempotent-secret", old))).toBe("refused")
      expect(yield* refusedSealed(rotated.reseal("idempotent-secret", old))).toBe("refused")
      const fresh = yield* rotated.seal("idempotent-secret", "pk_live")
      expect(yield* refusedSealed(rotated.open("webhook-secret", fresh))).toBe("refused")
    })
  )

  it.effect(
    "reseal: a previous secret's value sealed again under the current one, the same plaintext; the current one's left alone",
    () =>
      Effect.gen(function* () {
        const old = yield* underA.seal("webhook-secret", "whsec_old")
        const again = Option.getOrThrow(yield* rotated.reseal("webhook-secret", old))
        expect(again).not.toBe(old)
        expect(yield* makeEngineSecret(B).open("webhook-secret", again)).toBe("whsec_old")
        expect(yield* refusedSealed(underA.open("webhook-secret", again))).toBe("refused")
        expect(yield* rotated.reseal("webhook-secret", again)).toEqual(Option.none())
        expect(yield* makeEngineSecret(B).reseal("webhook-secret", again)).toEqual(Option.none())
        for (const junk of ["", "v1.", "v1.!!!", "v2.AAAA"]) {
          expect(yield* refusedSealed(rotated.reseal("webhook-secret", junk)), junk).toBe("refused")
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
          }),
        find: Effect.sync(() => Option.fromNullable(kept))
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

  it.effect("uses the given secret and never writes the store", () =>
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

  it.effect(
    "with a given secret, the kept one (the deployment's before) still opens, and never seals",
    () =>
      Effect.gen(function* () {
        const store = storeHolding(b64(bytes32(4)))
        const layer = engineSecretLayer(b64(bytes32(5))).pipe(Layer.provide(store.layer))
        expect(yield* roundTrip(layer, makeEngineSecret(bytes32(4)))).toBe("value")
        const sealed = yield* Effect.provide(
          Effect.flatMap(EngineSecret, (s) => s.seal("p", "new")),
          layer
        )
        expect(yield* makeEngineSecret(bytes32(5)).open("p", sealed)).toBe("new")
        expect(store.calls).toEqual([])
        // A kept value that is no secret is passed over: the given one is what seals.
        const broken = engineSecretLayer(b64(bytes32(5))).pipe(
          Layer.provide(storeHolding("short").layer)
        )
        expect(yield* roundTrip(broken, makeEngineSecret(bytes32(5)))).toBe("value")
      })
  )

  it.effect("previous secrets open beside the given secret, or beside the kept one", () =>
    Effect.gen(function* () {
      const previous = [b64(bytes32(6)), b64(bytes32(7))]
      const given = engineSecretLayer(b64(bytes32(5)), previous).pipe(
        Layer.provide(storeHolding(undefined).layer)
      )
      expect(yield* roundTrip(given, makeEngineSecret(bytes32(7)))).toBe("value")
      const kept = engineSecretLayer(undefined, previous).pipe(
        Layer.provide(storeHolding(b64(bytes32(8))).layer)
      )
      expect(yield* roundTrip(kept, makeEngineSecret(bytes32(6)))).toBe("value")
      expect(yield* roundTrip(kept, makeEngineSecret(bytes32(8)))).toBe("value")
      const sealed = yield* Effect.provide(
        Effect.flatMap(EngineSecret, (s) => s.seal("p", "new")),
        kept
      )
      expect(yield* makeEngineSecret(bytes32(8)).open("p", sealed)).toBe("new")
    })
  )

  it.effect("a previous secret that is not one stops the start, naming which", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.provide(
          EngineSecret,
          engineSecretLayer(b64(bytes32(5)), [b64(bytes32(6)), "short"]).pipe(
            Layer.provide(storeHolding(undefined).layer)
          )
        )
      )
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain(
        "previous secret 2 (PAY_SECRET_PREVIOUS) must be standard base64"
      )
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
