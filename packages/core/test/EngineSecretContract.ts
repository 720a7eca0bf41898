/**
 * The engine secret store's contract: the first secret written is the one
 * every later call gets, also when several instances start at once; reading
 * it writes nothing. Run by
 * each storage package beside the storage contract.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { EngineSecretStore } from "../src/secrets/EngineSecret.js"

export const engineSecretStorageContract = (
  name: string,
  layer: () => Layer.Layer<EngineSecretStore, unknown>
) =>
  describe(`engine secret storage contract: ${name}`, () => {
    it.effect(
      "keeps the first candidate and answers it to every later call; find only reads",
      () =>
        Effect.gen(function* () {
          const store = yield* EngineSecretStore
          const at = new Date(1_800_000_000_000)
          // `find` only reads: nothing before the first start, then the kept one.
          expect(yield* store.find).toEqual(Option.none())
          expect(yield* store.find).toEqual(Option.none())
          expect(yield* store.getOrCreate("first", at)).toBe("first")
          expect(yield* store.getOrCreate("second", at)).toBe("first")
          expect(yield* store.find).toEqual(Option.some("first"))
        }).pipe(Effect.provide(layer())),
      20_000
    )

    it.effect(
      "eight starts at once agree on one secret",
      () =>
        Effect.gen(function* () {
          const store = yield* EngineSecretStore
          const at = new Date(1_800_000_000_000)
          const got = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) => store.getOrCreate(`candidate-${i}`, at)),
            { concurrency: "unbounded" }
          )
          expect(new Set(got).size).toBe(1)
          expect(got[0]).toMatch(/^candidate-[0-7]$/)
        }).pipe(Effect.provide(layer())),
      20_000
    )
  })
