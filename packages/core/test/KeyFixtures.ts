/**
 * Key records for storage tests: each with its own id, lookup id and hash
 * (all random), so tests never clash on the keys table's unique columns.
 */
import { type ApiKeyId, type KeyOwner, KeyRecord } from "../src/keys/KeyRecord.js"
import { ALL_SCOPES } from "../src/keys/Scopes.js"
import { generateApiKey, hashApiKey } from "../src/shared/ApiKey.js"
import { makeIdBody } from "../src/shared/Ids.js"

export const aKeyRecord = (
  owner: KeyOwner,
  createdAt: Date,
  fields: Partial<ConstructorParameters<typeof KeyRecord>[0]> = {}
): KeyRecord => {
  const { key, lookupId } = generateApiKey()
  return new KeyRecord({
    id: `key_${makeIdBody(createdAt.getTime())}` as ApiKeyId,
    ownerKind: owner.kind,
    ownerId: owner.id,
    name: null,
    lookupId,
    hash: hashApiKey(key),
    createdAt,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    rotatedTo: null,
    scopes: ALL_SCOPES,
    ...fields
  })
}

export const partnerKey = (partner: { readonly id: string; readonly createdAt: Date }) =>
  aKeyRecord({ kind: "partner", id: partner.id }, partner.createdAt)
