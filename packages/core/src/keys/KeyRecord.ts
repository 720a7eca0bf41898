/**
 * API keys as records: partners' keys (the partner API) and wallet apps'
 * keys (the gateway) alike. An owner may hold several; each can be named,
 * given an expiry, rotated (a new key, the old one ending after an overlap)
 * and revoked. What is kept of a key is never the key: a random lookup id
 * that is no part of its secret, and the SHA-256 of the whole key.
 */
import { Schema } from "effect"
import { prefixedId } from "../shared/Ids.js"
import { ApiKeyScope } from "./Scopes.js"

/** A rotation's default overlap (24 hours) and its longest (30 days), in seconds. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 86_400
export const MAX_KEY_NAME_LENGTH = 100

export const ApiKeyId = prefixedId("key", "ApiKeyId")
export type ApiKeyId = typeof ApiKeyId.Type

export const KeyOwnerKind = Schema.Literal("partner", "wallet_app")
export type KeyOwnerKind = typeof KeyOwnerKind.Type

/** Whose key it is: a partner's (`ptnr_…`) or a wallet app's (`app_…`). */
export interface KeyOwner {
  readonly kind: KeyOwnerKind
  readonly id: string
}

export class KeyRecord extends Schema.Class<KeyRecord>("KeyRecord")({
  id: ApiKeyId,
  ownerKind: KeyOwnerKind,
  ownerId: Schema.String,
  name: Schema.NullOr(Schema.String),
  /**
   * The random middle of a generated key (`pk_<lookup id>_<secret>`), which
   * finds its record; null for a key the operator chose, found by its hash.
   */
  lookupId: Schema.NullOr(Schema.String),
  /** SHA-256 of the whole key, hex. */
  hash: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.NullOr(Schema.DateFromSelf),
  /** When it stopped (or, after a rotation, will stop) being accepted. */
  revokedAt: Schema.NullOr(Schema.DateFromSelf),
  /** When it was last accepted, to within a minute; null if never. */
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf),
  /** The key a rotation replaced it with. */
  rotatedTo: Schema.NullOr(ApiKeyId),
  /**
   * What it may do (Scopes.ts), in the canonical order. A wallet app's key
   * holds every scope; the gateway reads none of them.
   */
  scopes: Schema.Array(ApiKeyScope)
}) {}

/** When the key stops being accepted (its revocation or its expiry, the earlier), or null. */
export const keyEndsAt = (key: Pick<KeyRecord, "revokedAt" | "expiresAt">): Date | null => {
  const { revokedAt, expiresAt } = key
  if (revokedAt === null) return expiresAt
  if (expiresAt === null) return revokedAt
  return revokedAt < expiresAt ? revokedAt : expiresAt
}

/** Whether the key is accepted at `now`. */
export const isKeyActive = (key: KeyRecord, now: Date): boolean => {
  const ends = keyEndsAt(key)
  return ends === null || ends > now
}

export class ApiKeyLookupTaken extends Schema.TaggedError<ApiKeyLookupTaken>()(
  "ApiKeyLookupTaken",
  {}
) {}

export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  keyId: Schema.String
}) {}

/** Revoking it would leave its partner without a key (the API refuses; the CLI may). */
export class LastActiveApiKey extends Schema.TaggedError<LastActiveApiKey>()("LastActiveApiKey", {
  keyId: Schema.String
}) {}

/** Only a key still accepted can be rotated. */
export class ApiKeyInactive extends Schema.TaggedError<ApiKeyInactive>()("ApiKeyInactive", {
  keyId: Schema.String
}) {}
