/**
 * API keys: `pk_<12 chars>_<40 chars>`, random, shown once. Only a SHA-256 hash
 * is stored; the first characters find the record and the hashes are compared
 * in constant time, so a lookup reveals nothing through timing.
 */
import { Either } from "effect"
import { sha256, stringToBytes } from "viem"
import { randomBase62 } from "../shared/Ids.js"

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
