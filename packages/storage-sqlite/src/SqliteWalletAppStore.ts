/**
 * The wallet app store on SQLite: an app and its first key written in one
 * transaction (the keys themselves are SqliteKeyStore.ts's).
 */
import {
  ApiKeyLookupTaken,
  type KeyRecord,
  WalletApp,
  type WalletAppId,
  type WalletAppStatus,
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
  readonly status: string
  readonly last_used_at: number | null
}
// SQLite's own mappings (PgWalletAppStore.ts has their twins): times are ms integers here,
// Date there, and the other columns are text read as they are: nothing to share but names.
const toApp = (r: AppRow) =>
  new WalletApp({
    id: r.id as WalletAppId,
    name: r.name,
    iconUrl: r.icon_url,
    createdAt: new Date(r.created_at),
    status: r.status as WalletAppStatus,
    lastUsedAt: r.last_used_at === null ? null : new Date(r.last_used_at)
  })

export const makeSqliteWalletAppStore = (
  db: SqliteConnection,
  /** Writes a key's row inside the caller's transaction (SqliteKeyStore.ts). */
  insertKey: (key: KeyRecord) => void
) => {
  const sql = {
    insert: db.prepare(
      `INSERT INTO wallet_apps (id, name, icon_url, created_at, status, last_used_at)
        VALUES (?, ?, ?, ?, ?, ?)`
    ),
    setStatus: db.prepare("UPDATE wallet_apps SET status = ? WHERE id = ? RETURNING *"),
    touch: db.prepare(
      `UPDATE wallet_apps SET last_used_at = ?
        WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`
    ),
    byId: db.prepare("SELECT * FROM wallet_apps WHERE id = ?"),
    all: db.prepare("SELECT * FROM wallet_apps ORDER BY created_at, id")
  }

  return WalletAppStore.of({
    insert: (app, key) =>
      Effect.suspend(() => {
        try {
          db.transaction(() => {
            sql.insert.run(
              app.id,
              app.name,
              app.iconUrl,
              app.createdAt.getTime(),
              app.status,
              app.lastUsedAt?.getTime() ?? null
            )
            insertKey(key)
          })
          return Effect.void
        } catch (error) {
          if (isUniqueViolation(error)) return Effect.fail(new ApiKeyLookupTaken())
          throw error
        }
      }),
    find: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(sql.byId.get(id) as AppRow | undefined), toApp)
      ),
    list: Effect.sync(() => (sql.all.all() as ReadonlyArray<AppRow>).map(toApp)),
    setStatus: (id, status) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(sql.setStatus.get(status, id) as AppRow | undefined), toApp)
      ),
    touch: (id, at, ifBefore) =>
      Effect.sync(() => {
        sql.touch.run(at.getTime(), id, ifBefore.getTime())
      })
  })
}
