/**
 * API keys of partners and wallet apps: `pk_<12 chars>_<40 chars>`, random,
 * shown once. Only a SHA-256 hash is stored; the first characters find the
 * record and the hashes are compared in constant time, so a lookup reveals
 * nothing through timing. Verified keys are remembered for a minute per process.
 */
import { type Clock, Effect, Either, Option } from "effect"
import { sha256, stringToBytes } from "viem"
import { randomBase62 } from "./Ids.js"
import { makeTtlCache } from "./TtlCache.js"

export const KEY_PREFIX_LENGTH = 16

export const generateApiKey = (): string => `pk_${randomBase62(12)}_${randomBase62(40)}`

export const keyPrefix = (key: string): string => key.slice(0, KEY_PREFIX_LENGTH)

export const hashApiKey = (key: string): string => sha256(stringToBytes(key)).slice(2)

/** Equal-length hex strings compared without an early exit. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

const CUSTOM_KEY = /^[A-Za-z0-9_-]{20,256}$/

/** A key chosen by the operator (PAY_BOOTSTRAP_API_KEY): 20 to 256 of `[A-Za-z0-9_-]`. */
export const validateCustomApiKey = (key: string): Either.Either<string, string> =>
  CUSTOM_KEY.test(key)
    ? Either.right(key)
    : Either.left("an API key must be 20 to 256 characters of A-Z, a-z, 0-9, _ and -")

/** Cheap shape check before any lookup: anything else cannot be a key. */
export const looksLikeApiKey = (key: string): boolean => CUSTOM_KEY.test(key)

/** What a store keeps of a key besides its owner: never the key itself. */
export interface KeyDigest {
  /** The key's first characters, unique, used to find the record. */
  readonly prefix: string
  /** SHA-256 of the whole key, hex. */
  readonly hash: string
}

/**
 * Stores a new key through `insert` and returns it in clear: the only time it
 * is ever seen. A generated key's prefix is random, so a clash (`insert`
 * failing) is astronomically unlikely; it is retried with a fresh key anyway.
 * A `given` key is tried once.
 */
export const insertNewKey = <E, R>(
  insert: (digest: KeyDigest) => Effect.Effect<void, E, R>,
  given?: string | undefined
): Effect.Effect<string, E, R> => {
  const attempt = Effect.suspend(() => {
    const apiKey = given ?? generateApiKey()
    return insert({ prefix: keyPrefix(apiKey), hash: hashApiKey(apiKey) }).pipe(Effect.as(apiKey))
  })
  return given === undefined ? Effect.retry(attempt, { times: 3 }) : attempt
}

export const VERIFIED_KEY_TTL_MS = 60_000
const VERIFIED_KEYS_MAX = 10_000

export interface KeyVerifierOptions<Found, A, E> {
  /** The record whose key has this prefix, with the key's stored hash. */
  readonly lookup: (prefix: string) => Effect.Effect<Option.Option<Found>>
  readonly hashOf: (found: Found) => string
  /** Who the key belongs to (the partner, the wallet app). */
  readonly ownerOf: (found: Found) => A
  /** The failure for a key that belongs to no one. */
  readonly invalid: () => E
  readonly clock: Clock.Clock
}

/**
 * Turns a presented key into its owner. Verified keys are remembered for
 * `VERIFIED_KEY_TTL_MS`, so a request need not read and hash its key every
 * time; keys are never changed or revoked yet, and the TTL bounds how long a
 * future revocation could lag. The returned function is not suspended: call it
 * when the request arrives.
 */
export const makeKeyVerifier = <Found, A, E>(options: KeyVerifierOptions<Found, A, E>) => {
  const verified = makeTtlCache<A>(VERIFIED_KEY_TTL_MS, VERIFIED_KEYS_MAX)
  const verify = (presented: string): Effect.Effect<A, E> => {
    const now = options.clock.unsafeCurrentTimeMillis()
    const cached = verified.get(presented, now)
    if (cached !== undefined) return Effect.succeed(cached)
    if (!looksLikeApiKey(presented)) return Effect.fail(options.invalid())
    return Effect.flatMap(options.lookup(keyPrefix(presented)), (found) => {
      if (
        Option.isNone(found) ||
        !constantTimeEqual(options.hashOf(found.value), hashApiKey(presented))
      ) {
        return Effect.fail(options.invalid())
      }
      const owner = options.ownerOf(found.value)
      verified.set(presented, owner, now)
      return Effect.succeed(owner)
    })
  }
  /** The owner of a key verified less than the TTL ago, without any work; else undefined. */
  const known = (presented: string): A | undefined =>
    verified.get(presented, options.clock.unsafeCurrentTimeMillis())
  return Object.assign(verify, { known })
}
