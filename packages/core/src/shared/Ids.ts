/**
 * Resource ids: a type prefix (`mrch_`, `crypto_`, ...) and 20 base62 characters.
 * The first 8 encode the creation time in milliseconds, so ids sort by creation
 * time as plain strings; the last 12 come from a CSPRNG (about 71 bits), so ids
 * cannot be guessed or enumerated.
 */
import { type Brand, Clock, Effect, Schema } from "effect"

// ASCII order (digits < upper < lower), so string order equals numeric order.
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const TIME_LENGTH = 8
const RANDOM_LENGTH = 12

export const ID_BODY_LENGTH = TIME_LENGTH + RANDOM_LENGTH

const encodeTime = (millis: number): string => {
  let rest = Math.max(0, Math.floor(millis))
  let out = ""
  for (let i = 0; i < TIME_LENGTH; i++) {
    out = ALPHABET[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

// CSPRNG bytes are drawn a block at a time: one call per id cost more than the id's other
// work on the create route. Each byte is used once.
const RANDOM_BLOCK = 4096
const randomBlock = new Uint8Array(RANDOM_BLOCK)
let randomUsed = RANDOM_BLOCK

const randomByte = (): number => {
  if (randomUsed === RANDOM_BLOCK) {
    crypto.getRandomValues(randomBlock)
    randomUsed = 0
  }
  return randomBlock[randomUsed++]!
}

/** Unbiased base62 characters from the platform CSPRNG (rejection sampling). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const byte = randomByte()
    // 248 = 4 * 62: bytes at or above it would favour the first characters.
    if (byte < 248) out += ALPHABET[byte % 62]
  }
  return out
}

export const makeIdBody = (millis: number): string =>
  encodeTime(millis) + randomBase62(RANDOM_LENGTH)

const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9A-Za-z]{8,64}$`)

/**
 * A branded id schema for one prefix; the pattern is loose enough for imported ids.
 * A declaration with a plain guard, not a refined string: ids are decoded on every
 * request, and this decodes in a third of the time with a fifth of the garbage.
 */
export const prefixedId = <const B extends string>(prefix: string, brand: B) => {
  const pattern = idPattern(prefix)
  return Schema.declare(
    (u: unknown): u is string & Brand.Brand<B> => typeof u === "string" && pattern.test(u),
    {
      identifier: brand,
      message: () => `must be an id of the form ${prefix}_<letters and digits>`,
      jsonSchema: { type: "string", pattern: pattern.source },
      examples: [`${prefix}_${"0".repeat(ID_BODY_LENGTH)}` as string & Brand.Brand<B>]
    }
  )
}

/** A new id for `prefix`, stamped with the Effect clock (TestClock in tests). */
export const newId = <A extends string>(prefix: string): Effect.Effect<A> =>
  Effect.map(Clock.currentTimeMillis, (now) => `${prefix}_${makeIdBody(now)}` as A)
