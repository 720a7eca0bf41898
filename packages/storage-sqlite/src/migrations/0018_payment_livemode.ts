/**
 * The engine's mode at each payment's creation (issue 19): 1 live, 0 test
 * (the sandbox, or only test networks). Payments stored before this
 * migration keep NULL: nothing here knows the mode they were made in, and
 * their views show the engine's mode of the moment (`paymentLivemode` in core).
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec("ALTER TABLE payments ADD COLUMN livemode INTEGER CHECK (livemode IN (0, 1))")
}
