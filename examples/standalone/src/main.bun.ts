/**
 * `npm run start:bun`: the standalone server on Bun (server.ts), with the same
 * environment and behaviour as `npm start`: bun:sqlite for a SQLite file,
 * Bun.serve for HTTP.
 */
import { bunHost } from "./host-bun.js"
import { runStandalone } from "./server.js"

runStandalone(bunHost)
