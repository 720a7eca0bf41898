/**
 * The wallet's `Client-Id` kept with each option it was offered (WIRE.md:
 * recorded as given).
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec("ALTER TABLE payment_options ADD COLUMN client_id TEXT")
}
