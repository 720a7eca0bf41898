/**
 * The logo storage contract: what every store keeps of a frozen logo (the
 * master and its smaller sizes, byte for byte) and how it answers for a name
 * and a size. Run by each storage package beside the storage contract.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { type FrozenLogo, LogoStore } from "../src/merchants/Logo.js"

/** Bytes with every byte value, so a store that treats them as text shows it. */
const bytesOf = (length: number, seed: number): Uint8Array =>
  Uint8Array.from({ length }, (_, i) => (i * 31 + seed) % 256)

const aLogo = (seed: number, side = 1024): FrozenLogo => ({
  name: `${seed.toString(16).padStart(2, "0").repeat(32)}.webp`,
  contentType: "image/webp",
  side,
  master: bytesOf(5000 + seed, seed),
  sizes: new Map(
    [64, 128, 256, 512].filter((s) => s < side).map((s) => [s, bytesOf(s * 3, seed + s)])
  )
})

export const logoStorageContract = (name: string, layer: () => Layer.Layer<LogoStore, unknown>) =>
  describe(`logo storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, LogoStore>) =>
      it.effect(title, () => Effect.provide(body, layer()), 20_000)

    test(
      "keeps a logo's master and each of its sizes byte for byte, found by name and size",
      Effect.gen(function* () {
        const store = yield* LogoStore
        const logo = aLogo(1)
        yield* store.put(logo)
        const master = Option.getOrThrow(yield* store.get(logo.name))
        expect(master.contentType).toBe("image/webp")
        expect(Buffer.from(master.bytes).equals(Buffer.from(logo.master))).toBe(true)
        for (const [size, bytes] of logo.sizes) {
          const found = Option.getOrThrow(yield* store.get(logo.name, size))
          expect(Buffer.from(found.bytes).equals(Buffer.from(bytes)), `size ${size}`).toBe(true)
        }
      })
    )

    test(
      "answers the master for a size the logo has none of (at or above its side)",
      Effect.gen(function* () {
        const store = yield* LogoStore
        const logo = aLogo(2, 300)
        yield* store.put(logo)
        expect([...logo.sizes.keys()]).toEqual([64, 128, 256])
        const asked = Option.getOrThrow(yield* store.get(logo.name, 512))
        expect(Buffer.from(asked.bytes).equals(Buffer.from(logo.master))).toBe(true)
      })
    )

    test(
      "keeps the first copy of a name: putting it again changes nothing",
      Effect.gen(function* () {
        const store = yield* LogoStore
        const logo = aLogo(3)
        yield* store.put(logo)
        yield* store.put({ ...logo, master: bytesOf(10, 99), sizes: new Map() })
        const master = Option.getOrThrow(yield* store.get(logo.name))
        expect(Buffer.from(master.bytes).equals(Buffer.from(logo.master))).toBe(true)
        const small = Option.getOrThrow(yield* store.get(logo.name, 64))
        expect(Buffer.from(small.bytes).equals(Buffer.from(logo.sizes.get(64)!))).toBe(true)
      })
    )

    test(
      "finds nothing for a name never kept, and keeps logos apart",
      Effect.gen(function* () {
        const store = yield* LogoStore
        const [a, b] = [aLogo(4), aLogo(5)]
        yield* store.put(a)
        yield* store.put(b)
        expect(Option.isNone(yield* store.get(aLogo(6).name))).toBe(true)
        expect(Option.isNone(yield* store.get(aLogo(6).name, 64))).toBe(true)
        const foundB = Option.getOrThrow(yield* store.get(b.name))
        expect(Buffer.from(foundB.bytes).equals(Buffer.from(b.master))).toBe(true)
      })
    )
  })
