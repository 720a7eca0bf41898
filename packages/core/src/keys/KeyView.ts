/**
 * A key as the partner API and the CLI show it: never its secret or hash.
 */
import type { KeyRecord } from "./KeyRecord.js"

const iso = (date: Date | null) => date?.toISOString() ?? null

export const apiKeyView = (key: KeyRecord) => ({
  id: key.id,
  name: key.name,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: iso(key.lastUsedAt),
  expiresAt: iso(key.expiresAt),
  revokedAt: iso(key.revokedAt),
  scopes: key.scopes
})
