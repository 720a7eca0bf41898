/**
 * Migration 0017 on PostgreSQL: keys of the tables before it (a partner's
 * generated key, a partner's chosen key, a wallet app's key) move to the keys
 * table and still open; a chosen key's first characters, which the old table
 * kept in clear, are gone.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ApiKey, authenticateWallet, engineConfig, Partners, payEngineLayer } from "@pay/core"
import { Context, Effect, Layer } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import apiKeys from "./migrations/0017_api_keys.js"
import keyScopes from "./migrations/0028_key_scopes.js"

describe("PostgreSQL key migration", () => {
  it.effect("moves the old tables' keys: each still opens, no part of a chosen key kept", () =>
    Effect.gen(function* () {
      const storage = yield* Layer.build(freshStorage())
      const sql = Context.get(storage, SqlClient.SqlClient)
      // The tables as migrations 0001 and 0005 made them, with keys as they stored them.
      yield* sql`DROP TABLE keys`
      yield* sql`CREATE TABLE api_keys (
        prefix text CONSTRAINT api_keys_pkey PRIMARY KEY,
        hash text NOT NULL,
        partner_id text COLLATE "C" NOT NULL REFERENCES partners (id),
        created_at timestamptz NOT NULL
      )`
      yield* sql`CREATE TABLE wallet_app_keys (
        prefix text CONSTRAINT wallet_app_keys_pkey PRIMARY KEY,
        hash text NOT NULL,
        app_id text COLLATE "C" NOT NULL REFERENCES wallet_apps (id),
        created_at timestamptz NOT NULL
      )`
      const generated = "pk_AbCdEfGhIjKl_0123456789abcdefghijABCDEFGHIJ0123456789"
      const chosen = "my-own-bootstrap-key-of-32-chars"
      const appKey = "pk_ZyXwVuTsRqPo_9876543210zyxwvutsrqZYXWVUTSRQ9876543210"
      yield* sql`INSERT INTO partners (id, name, api_version, created_at) VALUES
        ('ptnr_0000000100000000000A', 'Gen', '2026-02-18', ${new Date(1)}),
        ('ptnr_0000000100000000000B', 'Chosen', '2026-02-18', ${new Date(2)})`
      yield* sql`INSERT INTO wallet_apps (id, name, icon_url, created_at)
        VALUES ('app_0000000100000000000C', 'W', NULL, ${new Date(3)})`
      yield* sql`INSERT INTO api_keys VALUES
        (${generated.slice(0, 16)}, ${ApiKey.hashApiKey(generated)}, 'ptnr_0000000100000000000A', ${new Date(1)}),
        (${chosen.slice(0, 16)}, ${ApiKey.hashApiKey(chosen)}, 'ptnr_0000000100000000000B', ${new Date(2)})`
      yield* sql`INSERT INTO wallet_app_keys VALUES
        (${appKey.slice(0, 16)}, ${ApiKey.hashApiKey(appKey)}, 'app_0000000100000000000C', ${new Date(3)})`
      // The migration itself: the Migrator would not run it again below later ones.
      yield* sql.withTransaction(apiKeys).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      // And the later ones that change its table, as the Migrator runs them after it.
      yield* sql.withTransaction(keyScopes).pipe(Effect.provideService(SqlClient.SqlClient, sql))

      const owners = yield* Effect.gen(function* () {
        const partners = yield* Partners
        return [
          (yield* partners.authenticate(generated)).name,
          (yield* partners.authenticate(chosen)).name,
          (yield* authenticateWallet({ apiKey: appKey })).name,
          (yield* Effect.flip(partners.authenticate(appKey)))._tag
        ]
      }).pipe(
        Effect.provide(
          payEngineLayer({
            storage: Layer.succeedContext(storage),
            config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
          })
        )
      )
      expect(owners).toEqual(["Gen", "Chosen", "W", "Unauthenticated"])
      const rows = yield* sql<{
        owner_kind: string
        lookup_id: string | null
      }>`SELECT owner_kind, lookup_id FROM keys ORDER BY created_at`
      expect(rows.map((r) => [r.owner_kind, r.lookup_id])).toEqual([
        ["partner", "AbCdEfGhIjKl"],
        ["partner", null],
        ["wallet_app", "ZyXwVuTsRqPo"]
      ])
      const tables = yield* sql<{ name: string }>`SELECT table_name AS name
        FROM information_schema.tables WHERE table_schema = current_schema()
          AND table_name IN ('api_keys', 'wallet_app_keys')`
      expect(tables).toEqual([])
      const everything = yield* sql<{
        text: string
      }>`SELECT row_to_json(k)::text AS text FROM keys k`
      expect(JSON.stringify(everything)).not.toContain(chosen.slice(0, 16))
    }).pipe(Effect.scoped)
  )
})
