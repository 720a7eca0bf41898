/**
 * Frozen merchant logos (core merchants/Logo.ts): each logo's master (size 0)
 * and its smaller sizes, under the logo's content-addressed name. A rowid
 * table: its rows are images of up to a few hundred kilobytes, which SQLite
 * keeps better out of a WITHOUT ROWID b-tree.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE logos (
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (name, size)
  ) STRICT`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
