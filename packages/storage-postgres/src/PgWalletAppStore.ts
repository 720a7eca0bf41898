/**
 * The wallet app store on PostgreSQL: an app and its first key written in
 * one transaction (the keys themselves are PgKeyStore.ts's).
 */
import type { SqlClient } from "@effect/sql"
import { ApiKeyLookupTaken, WalletApp, type WalletAppId, WalletAppStore } from "@pay/core"
import { Effect, Option } from "effect"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { insertKeyRow } from "./PgKeyStore.js"

interface AppRow {
  readonly id: string
  readonly name: string
  readonly icon_url: string | null
  readonly created_at: Date
}

// PostgreSQL's own mappings (SqliteWalletAppStore.ts has their twins): times are Date here,
// ms integers there, and the other columns are text read as they are: nothing to share but names.
const toApp = (r: AppRow) =>
  new WalletApp({
    id: r.id as WalletAppId,
    name: r.name,
    iconUrl: r.icon_url,
    createdAt: r.created_at
  })

const first = <R, A>(rows: ReadonlyArray<R>, f: (row: R) => A) =>
  Option.map(Option.fromNullable(rows[0]), f)

export const makePgWalletAppStore = (sql: SqlClient.SqlClient) =>
  WalletAppStore.of({
    insert: (app, key) =>
      sql
        .withTransaction(
          Effect.zipRight(
            sql`INSERT INTO wallet_apps (id, name, icon_url, created_at)
              VALUES (${app.id}, ${app.name}, ${app.iconUrl}, ${app.createdAt})`,
            insertKeyRow(sql, key)
          )
        )
        .pipe(
          Effect.asVoid,
          onUniqueViolation("keys_lookup_id_key", () => Effect.fail(new ApiKeyLookupTaken())),
          onUniqueViolation("keys_hash_key", () => Effect.fail(new ApiKeyLookupTaken())),
          orDieSql
        ),
    find: (id) =>
      sql<AppRow>`SELECT * FROM wallet_apps WHERE id = ${id}`.pipe(
        Effect.map((rows) => first(rows, toApp)),
        orDieSql
      ),
    list: sql<AppRow>`SELECT * FROM wallet_apps ORDER BY created_at, id`.pipe(
      Effect.map((rows) => rows.map(toApp)),
      orDieSql
    )
  })
