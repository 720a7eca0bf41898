/**
 * The logo store on SQLite: a logo's master (size 0) and sizes written in one
 * transaction, each row kept once (the name is the content's hash, so a second
 * copy is the same bytes).
 */
import { LogoStore } from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

/** The master's row. */
const MASTER = 0

export const makeSqliteLogoStore = (db: SqliteConnection) => {
  const insert = db.prepare(
    `INSERT INTO logos (name, size, content_type, bytes, created_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (name, size) DO NOTHING`
  )
  // The size asked for when there is one, else the master (the larger size sorts first).
  const find = db.prepare(
    `SELECT content_type, bytes FROM logos WHERE name = ? AND size IN (?, ${MASTER})
      ORDER BY size DESC LIMIT 1`
  )
  return LogoStore.of({
    put: (logo) =>
      Effect.sync(() => {
        const at = Date.now()
        db.transaction(() => {
          insert.run(logo.name, MASTER, logo.contentType, logo.master, at)
          for (const [size, bytes] of logo.sizes) {
            insert.run(logo.name, size, logo.contentType, bytes, at)
          }
        })
      }),
    get: (name, size) =>
      Effect.sync(() => {
        const row = find.get(name, size ?? MASTER) as
          | { readonly content_type: string; readonly bytes: Uint8Array }
          | undefined
        return Option.map(Option.fromNullable(row), (r) => ({
          contentType: r.content_type,
          bytes: r.bytes
        }))
      })
  })
}
