/**
 * The wallet app store on SQLite: an app and its key written in one
 * transaction, the key found by its prefix (the primary key) with its app.
 */
import {
  ApiKeyPrefixTaken,
  type StoredAppKey,
  WalletApp,
  type WalletAppId,
  WalletAppStore
} from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"
import { isUniqueViolation } from "./SqliteErrors.js"

interface AppRow {
  readonly id: string
  readonly name: string
  readonly icon_url: string | null
  readonly created_at: number
}
interface AppKeyRow extends AppRow {
  readonly prefix: string
  readonly hash: string
  readonly key_created_at: number
}

// SQLite's own mappings (PgWalletAppStore.ts has their twins): times are ms integers here,
// Date there, and the other columns are text read as they are: nothing to share but names.
const toApp = (r: AppRow) =>
  new WalletApp({
    id: r.id as WalletAppId,
    name: r.name,
    iconUrl: r.icon_url,
    createdAt: new Date(r.created_at)
  })

const toKey = (r: AppKeyRow): StoredAppKey => ({
  prefix: r.prefix,
  hash: r.hash,
  appId: r.id as WalletAppId,
  createdAt: new Date(r.key_created_at)
})

export const makeSqliteWalletAppStore = (db: SqliteConnection) => {
  const sql = {
    insert: db.prepare(
      "INSERT INTO wallet_apps (id, name, icon_url, created_at) VALUES (?, ?, ?, ?)"
    ),
    insertKey: db.prepare(
      "INSERT INTO wallet_app_keys (prefix, hash, app_id, created_at) VALUES (?, ?, ?, ?)"
    ),
    byPrefix: db.prepare(`SELECT k.prefix, k.hash, k.created_at AS key_created_at,
        a.id, a.name, a.icon_url, a.created_at
      FROM wallet_app_keys k JOIN wallet_apps a ON a.id = k.app_id WHERE k.prefix = ?`),
    byId: db.prepare("SELECT * FROM wallet_apps WHERE id = ?"),
    all: db.prepare("SELECT * FROM wallet_apps ORDER BY created_at, id")
  }

  return WalletAppStore.of({
    insert: (app, key) =>
      Effect.suspend(() => {
        try {
          db.transaction(() => {
            sql.insert.run(app.id, app.name, app.iconUrl, app.createdAt.getTime())
            sql.insertKey.run(key.prefix, key.hash, key.appId, key.createdAt.getTime())
          })
          return Effect.void
        } catch (error) {
          if (isUniqueViolation(error)) return Effect.fail(new ApiKeyPrefixTaken())
          throw error
        }
      }),
    find: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(sql.byId.get(id) as AppRow | undefined), toApp)
      ),
    findByKeyPrefix: (prefix) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable(sql.byPrefix.get(prefix) as AppKeyRow | undefined),
          (row) => ({
            app: toApp(row),
            key: toKey(row)
          })
        )
      ),
    list: Effect.sync(() => (sql.all.all() as ReadonlyArray<AppRow>).map(toApp))
  })
}
