/**
 * vitest globalSetup (wired in the root vitest.config.ts): one PostgreSQL
 * server and one database for the whole run, whichever test files use it.
 */
import type { TestProject } from "vitest/node"
import { DATABASE_URL_KEY } from "./Provided.js"
import { startTestDatabase } from "./TestServer.js"

export default async function setup(project: TestProject) {
  const database = await startTestDatabase()
  // Said once per run, so a reader of the log knows which server the results are from.
  console.info(
    `PostgreSQL for tests: ${database.kind} server, database ${new URL(database.url).pathname.slice(1)}`
  )
  project.provide(DATABASE_URL_KEY, database.url)
  return database.stop
}
