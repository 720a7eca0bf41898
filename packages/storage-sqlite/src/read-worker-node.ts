/** The SQLite read worker's program on Node, on better-sqlite3 (see SqliteReadWorker.ts). */
import { openConnection } from "./node.js"
import { serveReadWorker } from "./SqliteReadWorker.js"

serveReadWorker(openConnection)
