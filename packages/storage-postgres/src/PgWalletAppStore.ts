/**
 * The wallet app store on PostgreSQL: an app and its key written in one
 * transaction (a taken key prefix, the primary key, stores neither), the key
 * found by its prefix with its app.
 */
import type { SqlClient } from "@effect/sql"
import {
  ApiKeyPrefixTaken,
  type StoredAppKey,
  WalletApp,
  type WalletAppId,
  WalletAppStore
} from "@pay/core"
import { Effect, Option } from "effect"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"

interface AppRow {
  readonly id: string
  readonly name: string
  readonly icon_url: string | null
  readonly created_at: Date
}
interface AppKeyRow extends AppRow {
  readonly prefix: string
  readonly hash: string
  readonly key_created_at: Date
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

const toKey = (r: AppKeyRow): StoredAppKey => ({
  prefix: r.prefix,
  hash: r.hash,
  appId: r.id as WalletAppId,
  createdAt: r.key_created_at
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
            sql`INSERT INTO wallet_app_keys (prefix, hash, app_id, created_at)
              VALUES (${key.prefix}, ${key.hash}, ${key.appId}, ${key.createdAt})`
          )
        )
        .pipe(
          Effect.asVoid,
          onUniqueViolation("wallet_app_keys_pkey", () => Effect.fail(new ApiKeyPrefixTaken())),
          orDieSql
        ),
    find: (id) =>
      sql<AppRow>`SELECT * FROM wallet_apps WHERE id = ${id}`.pipe(
        Effect.map((rows) => first(rows, toApp)),
        orDieSql
      ),
    findByKeyPrefix: (prefix) =>
      sql<AppKeyRow>`
        SELECT k.prefix, k.hash, k.created_at AS key_created_at,
          a.id, a.name, a.icon_url, a.created_at
        FROM wallet_app_keys k JOIN wallet_apps a ON a.id = k.app_id
        WHERE k.prefix = ${prefix}`.pipe(
        Effect.map((rows) => first(rows, (row) => ({ app: toApp(row), key: toKey(row) }))),
        orDieSql
      ),
    list: sql<AppRow>`SELECT * FROM wallet_apps ORDER BY created_at, id`.pipe(
      Effect.map((rows) => rows.map(toApp)),
      orDieSql
    )
  })
