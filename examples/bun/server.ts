/**
 * A Bun server with its own page beside the engine under `/pay`, on a SQLite
 * file through bun:sqlite or on PostgreSQL. Run with the real Bun binary (the
 * repository's `bun` devDependency):
 *
 *   PORT=3000 npx bun --conditions=@pay/source examples/bun/server.ts
 *   PAY_DATABASE=postgres://… PORT=3000 npx bun --conditions=@pay/source examples/bun/server.ts
 *
 * PAY_DATABASE is a SQLite file (default ./data/bun-shop.sqlite) or a
 * postgres:// URL. Prints `listening on <url>` and, on a database without
 * partners, one JSON line with the first partner's key on stderr; stops cleanly on
 * SIGTERM/SIGINT.
 */
import { serveOnBun } from "@pay/adapter-bun"
import { createPaymentEngine, type PaymentEngineOptions } from "@pay/core"
import * as PgStorage from "@pay/storage-postgres"
import * as SqliteStorage from "@pay/storage-sqlite/bun"
import { Layer } from "effect"

const database = process.env.PAY_DATABASE ?? "./data/bun-shop.sqlite"
const port = Number(process.env.PORT ?? 3000)
const publicUrl = process.env.PAY_PUBLIC_URL ?? `http://127.0.0.1:${port}/pay`

/** PostgreSQL also carries status changes between instances (LISTEN/NOTIFY) on the same pool. */
const stores = (): Pick<PaymentEngineOptions<unknown>, "storage" | "events"> => {
  if (!/^postgres(ql)?:\/\//.test(database)) {
    return { storage: SqliteStorage.layer({ filename: database }) }
  }
  const client = PgStorage.migratedClientLayer({ url: database })
  return {
    storage: PgStorage.PgStores.pipe(Layer.provide(client)),
    events: PgStorage.PgPaymentEvents.layer().pipe(Layer.provide(client))
  }
}

const engine = await createPaymentEngine({ ...stores(), publicUrl, maxLongPollMs: 30_000 })
if ((await engine.partners.list()).length === 0) {
  const { apiKey } = await engine.partners.create({ name: "Bun shop" })
  // To the terminal (stderr), never into stdout, which a log collector may keep.
  console.error(JSON.stringify({ apiKey }))
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
