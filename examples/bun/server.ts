/**
 * A Bun server with its own page beside the engine under `/pay`, on
 * PostgreSQL (SQLite on Bun waits for a bun:sqlite driver in
 * @pay/storage-sqlite). Run with the real Bun binary (the repository's
 * `bun` devDependency):
 *
 *   PAY_DATABASE=postgres://… PORT=3000 npx bun --conditions=@pay/source examples/bun/server.ts
 *
 * Prints `listening on <url>` and, on a database without partners, one JSON
 * line with the first partner's key; stops cleanly on SIGTERM/SIGINT.
 */
import { serveOnBun } from "@pay/adapter-bun"
import { createPaymentEngine, type PayStorage } from "@pay/core"
import * as PgStorage from "@pay/storage-postgres"
import { Layer } from "effect"

const database = process.env.PAY_DATABASE ?? ""
if (!/^postgres(ql)?:\/\//.test(database)) {
  console.error("PAY_DATABASE must be a postgres:// URL (SQLite on Bun is not there yet)")
  process.exit(1)
}
const port = Number(process.env.PORT ?? 3000)
const publicUrl = process.env.PAY_PUBLIC_URL ?? `http://127.0.0.1:${port}/pay`

const client = PgStorage.migratedClientLayer({ url: database })
const storage: Layer.Layer<PayStorage, unknown> = PgStorage.PgStores.pipe(Layer.provide(client))
const engine = await createPaymentEngine({
  storage,
  events: PgStorage.PgPaymentEvents.layer().pipe(Layer.provide(client)),
  publicUrl,
  maxLongPollMs: 30_000
})
if ((await engine.partners.list()).length === 0) {
  const { apiKey } = await engine.partners.create({ name: "Bun shop" })
  console.log(JSON.stringify({ apiKey }))
}

const shopPage = () =>
  new Response("My shop on Bun\n", { headers: { "content-type": "text/plain" } })
const server = serveOnBun(
  {
    fetch: (request) =>
      new URL(request.url).pathname.startsWith("/pay/")
        ? engine.fetch(request)
        : Promise.resolve(shopPage())
  },
  { hostname: "127.0.0.1", port, maxLongPollMs: 30_000 }
)
console.log(`listening on ${server.url}`)

const stop = async () => {
  await server.stop()
  await engine.close()
  process.exit(0)
}
process.once("SIGTERM", () => void stop())
process.once("SIGINT", () => void stop())
