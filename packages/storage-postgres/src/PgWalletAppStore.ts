/**
 * The wallet app store on PostgreSQL: an app and its first key written in
 * one transaction (the keys themselves are PgKeyStore.ts's).
 */
import type { SqlClient } from "@effect/sql"
import {
  ApiKeyLookupTaken,
  WalletApp,
  type WalletAppId,
  type WalletAppStatus,
  WalletAppStore
} from "@pay/core"
import { Effect, Option } from "effect"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { insertKeyRow } from "./PgKeyStore.js"

interface AppRow {
  readonly id: string
  readonly name: string
  readonly icon_url: string | null
  readonly created_at: Date
  readonly status: string
  readonly last_used_at: Date | null
}

// PostgreSQL's own mappings (SqliteWalletAppStore.ts has their twins): times are Date here,
// ms integers there, and the other columns are text read as they are: nothing to share but names.
const toApp = (r: AppRow) =>
  new WalletApp({
    id: r.id as WalletAppId,
    name: r.name,
    iconUrl: r.icon_url,
    createdAt: r.created_at,
    status: r.status as WalletAppStatus,
    lastUsedAt: r.last_used_at
  })

const first = <R, A>(rows: ReadonlyArray<R>, f: (row: R) => A) =>
  Option.map(Option.fromNullable(rows[0]), f)

export const makePgWalletAppStore = (sql: SqlClient.SqlClient) =>
  WalletAppStore.of({
    insert: (app, key) =>
      sql
        .withTransaction(
          Effect.zipRight(
            sql`INSERT INTO wallet_apps (id, name, icon_url, created_at, status, last_used_at)
              VALUES (${app.id}, ${app.name}, ${app.iconUrl}, ${app.createdAt}, ${app.status},
                ${app.lastUsedAt})`,
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
    ),
    setStatus: (id, status) =>
      sql<AppRow>`UPDATE wallet_apps SET status = ${status} WHERE id = ${id} RETURNING *`.pipe(
        Effect.map((rows) => first(rows, toApp)),
        orDieSql
      ),
    touch: (id, at, ifBefore) =>
      sql`UPDATE wallet_apps SET last_used_at = ${at}
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${ifBefore})`.pipe(
        Effect.asVoid,
        orDieSql
      )
  })
