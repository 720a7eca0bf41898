/**
 * A merchant's frozen logo (core merchants/Logo.ts): the name of its image in
 * `logos`. Null for no logo, and for merchants written before logos were
 * frozen, which keep showing their `icon_url` until their next PATCH.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec("ALTER TABLE merchants ADD COLUMN logo_name TEXT")
}
