/**
 * For the tests: the SQLite driver of the runtime they run under, bun:sqlite
 * under Bun (`npm run test:bun`), better-sqlite3 under Node, so the same
 * suites check both drivers.
 */
import type * as NodeDriver from "./node.js"

export const runtimeDriver: typeof NodeDriver =
  "Bun" in globalThis ? await import("./bun.js") : await import("./node.js")

export const runtimeDriverName = "Bun" in globalThis ? "bun:sqlite" : "better-sqlite3"
