/**
 * Migration 0027 on SQLite (issue 40): a key made before scopes existed keeps
 * every scope, and is read back with them by the store.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ALL_SCOPES, type ApiKeyId, KeyStore } from "@pay/core"
import { Effect, Option } from "effect"
import { afterAll } from "vitest"
import { applyMigrations, migrations } from "./Migrations.js"
import { runtimeDriver } from "./RuntimeDriver.testing.js"

const { layer, migrateFile, openConnection } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-scopes-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("SQLite key scopes migration", () => {
  it.effect("gives a key of a database as 0026 left it every scope", () =>
    Effect.gen(function* () {
      const filename = join(dir, "old.sqlite")
      const db = openConnection(filename)
      applyMigrations(db, migrations.slice(0, 26))
      db.exec(`INSERT INTO partners (id, name, api_version, created_at)
        VALUES ('ptnr_0000000100000000000A', 'Old', '2026-02-18', 1)`)
      db.exec(`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at)
        VALUES ('key_0000000100000000000A', 'partner', 'ptnr_0000000100000000000A', NULL,
          'old-hash', 1)`)
      db.close()
      expect((yield* migrateFile(filename))[0]).toEqual([27, "key_scopes"])
      const key = yield* Effect.flatMap(KeyStore, (keys) =>
        keys.find(
          { kind: "partner", id: "ptnr_0000000100000000000A" },
          "key_0000000100000000000A" as ApiKeyId
        )
      ).pipe(Effect.provide(layer({ filename })))
      expect(Option.getOrThrow(key).scopes).toEqual(ALL_SCOPES)
    })
  )
})
