/**
 * The data-collection page's token: made and checked for one payment and its
 * accounts, refused when any of them (or the token) is changed, and still
 * checked after a restart or on another instance (the same secret), and during
 * a rotation (a previous secret).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { PaymentId } from "../payments/Payment.js"
import { makeEngineSecret } from "../secrets/EngineSecret.js"
import { collectDataToken, isCollectDataToken } from "./CollectDataToken.js"

const bytes32 = (fill: number) => new Uint8Array(32).fill(fill)
const ID = "pay_01HZX0000000000000000000AB" as PaymentId
const OTHER_ID = "pay_01HZX0000000000000000000AC" as PaymentId
const A = "eip155:8453:0x1111111111111111111111111111111111111111"
const B = "eip155:8453:0x2222222222222222222222222222222222222222"

describe("the collect page token", () => {
  const secret = makeEngineSecret(bytes32(1))

  it.effect("is base64url of an HMAC-SHA256, the same for the same payment and accounts", () =>
    Effect.gen(function* () {
      const token = yield* collectDataToken(secret, ID, [A])
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(yield* collectDataToken(secret, ID, [A])).toBe(token)
      expect(yield* isCollectDataToken(secret, ID, [A], token)).toBe(true)
    })
  )

  it.effect("is refused for another payment, other accounts, or another order of them", () =>
    Effect.gen(function* () {
      const token = yield* collectDataToken(secret, ID, [A, B])
      expect(yield* isCollectDataToken(secret, ID, [A, B], token)).toBe(true)
      expect(yield* isCollectDataToken(secret, OTHER_ID, [A, B], token)).toBe(false)
      expect(yield* isCollectDataToken(secret, ID, [A], token)).toBe(false)
      expect(yield* isCollectDataToken(secret, ID, [B], token)).toBe(false)
      expect(yield* isCollectDataToken(secret, ID, [B, A], token)).toBe(false)
      expect(yield* isCollectDataToken(secret, ID, [A, B, A], token)).toBe(false)
      // One account's token does not write another's.
      const onlyA = yield* collectDataToken(secret, ID, [A])
      expect(yield* isCollectDataToken(secret, ID, [B], onlyA)).toBe(false)
      // Joining tricks: the accounts are not one string that can be split elsewhere.
      expect(yield* isCollectDataToken(secret, ID, [`${A},${B}`], token)).toBe(false)
    })
  )

  it.effect("refuses a tampered, truncated, missing or foreign token", () =>
    Effect.gen(function* () {
      const token = yield* collectDataToken(secret, ID, [A])
      const flipped = `${token.slice(0, 10)}${token[10] === "A" ? "B" : "A"}${token.slice(11)}`
      for (const bad of [
        flipped,
        token.slice(0, 42),
        `${token}A`,
        "",
        `${token}=`,
        "!".repeat(43)
      ]) {
        expect(yield* isCollectDataToken(secret, ID, [A], bad), bad).toBe(false)
      }
      expect(yield* isCollectDataToken(secret, ID, [A], null)).toBe(false)
      expect(yield* isCollectDataToken(secret, ID, [A], undefined)).toBe(false)
      // Another engine's secret.
      const foreign = yield* collectDataToken(makeEngineSecret(bytes32(2)), ID, [A])
      expect(yield* isCollectDataToken(secret, ID, [A], foreign)).toBe(false)
      // The same secret's seal or another purpose's signature is not a token.
      expect(
        yield* isCollectDataToken(secret, ID, [A], yield* secret.sign("other-purpose", ID))
      ).toBe(false)
    })
  )

  it.effect("holds across restarts and instances (the same secret), and during a rotation", () =>
    Effect.gen(function* () {
      const token = yield* collectDataToken(secret, ID, [A])
      // Another instance, or this one restarted: a new service over the same bytes.
      expect(yield* isCollectDataToken(makeEngineSecret(bytes32(1)), ID, [A], token)).toBe(true)
      // Rotated: the old secret is listed as previous, so links handed out before still work…
      const rotated = makeEngineSecret(bytes32(3), [bytes32(1)])
      expect(yield* isCollectDataToken(rotated, ID, [A], token)).toBe(true)
      // …new links are made under the new secret…
      const fresh = yield* collectDataToken(rotated, ID, [A])
      expect(fresh).not.toBe(token)
      expect(yield* isCollectDataToken(makeEngineSecret(bytes32(3)), ID, [A], fresh)).toBe(true)
      // …and once the previous secret is dropped, the old links stop working.
      expect(yield* isCollectDataToken(makeEngineSecret(bytes32(3)), ID, [A], token)).toBe(false)
    })
  )
})
