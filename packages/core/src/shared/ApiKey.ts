/**
 * The form of API keys, of partners and wallet apps alike: generated keys are
 * `pk_<lookup id: 12>_<secret: 40>`, base62 and random; the lookup id finds
 * the key's record and is no part of its secret (40 characters, 238 bits). A
 * key the operator chooses (PAY_BOOTSTRAP_API_KEY) has no lookup id and is
 * found by the hash of the whole key. Only the SHA-256 of a key is stored.
 */
import { Either } from "effect"
import { sha256, stringToBytes } from "viem"
import { randomBase62 } from "./Ids.js"

export const LOOKUP_ID_LENGTH = 12
const SECRET_LENGTH = 40

/** A new key and its lookup id. */
export const generateApiKey = (): { readonly key: string; readonly lookupId: string } => {
  const lookupId = randomBase62(LOOKUP_ID_LENGTH)
  return { key: `pk_${lookupId}_${randomBase62(SECRET_LENGTH)}`, lookupId }
}

const GENERATED = new RegExp(
  `^pk_([A-Za-z0-9]{${LOOKUP_ID_LENGTH}})_[A-Za-z0-9]{${SECRET_LENGTH}}$`
)

/** The lookup id of a key of the generated form; undefined for any other key. */
export const lookupIdOf = (key: string): string | undefined => GENERATED.exec(key)?.[1]

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
