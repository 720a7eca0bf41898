/**
 * Migration 0028 on PostgreSQL (issue 40): a key made before scopes existed
 * keeps every scope; afterwards the column has no default, so a write that
 * forgot it fails instead of granting everything, and an unknown scope is
 * refused by the column's check.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ALL_SCOPES, type ApiKeyId, KeyStore } from "@pay/core"
import { Context, Effect, Layer, Option } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import keyScopes from "./migrations/0028_key_scopes.js"

describe("PostgreSQL key scopes migration", () => {
  it.effect("gives an existing key every scope, and leaves no default behind", () =>
    Effect.gen(function* () {
      const storage = yield* Layer.build(freshStorage())
      const sql = Context.get(storage, SqlClient.SqlClient)
      // The table as 0027 left it, with a key in it.
      yield* sql`ALTER TABLE keys DROP COLUMN scopes`
      yield* sql`INSERT INTO partners (id, name, api_version, created_at)
        VALUES ('ptnr_0000000100000000000A', 'Old', '2026-02-18', ${new Date(1)})`
      yield* sql`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at)
        VALUES ('key_0000000100000000000A', 'partner', 'ptnr_0000000100000000000A', NULL,
          'old-hash', ${new Date(1)})`
      yield* sql.withTransaction(keyScopes).pipe(Effect.provideService(SqlClient.SqlClient, sql))

      const key = yield* Context.get(storage, KeyStore).find(
        { kind: "partner", id: "ptnr_0000000100000000000A" },
        "key_0000000100000000000A" as ApiKeyId
      )
      expect(Option.getOrThrow(key).scopes).toEqual(ALL_SCOPES)
      const withoutScopes = yield* Effect.either(
        sql`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at)
          VALUES ('key_0000000100000000000B', 'partner', 'ptnr_0000000100000000000A', NULL,
            'other-hash', ${new Date(2)})`
      )
      expect(withoutScopes._tag).toBe("Left")
      const unknown = yield* Effect.either(
        sql`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at, scopes)
          VALUES ('key_0000000100000000000C', 'partner', 'ptnr_0000000100000000000A', NULL,
            'third-hash', ${new Date(2)}, 'read,admin')`
      )
      expect(unknown._tag).toBe("Left")
    }).pipe(Effect.scoped)
  )
})
