/**
 * `npm start`: the standalone server on Node (server.ts), on a SQLite file or
 * PostgreSQL (PAY_DATABASE).
 */
import { nodeHost } from "./host-node.js"
import { runStandalone } from "./server.js"

runStandalone(nodeHost)
