/**
 * A Hono app on Node with the engine's web-standard fetch handler mounted
 * under `/pay`, beside the app's own routes, on a SQLite file and the
 * sandbox chain. The same `engine.fetch` serves on Bun, Deno or any
 * fetch-style framework.
 *
 * Run: PORT=3000 npx tsx --conditions=@pay/source examples/hono/server.ts
 */
import { serve } from "@hono/node-server"
import { createPaymentEngine } from "@pay/core"
import { startSandbox } from "@pay/sandbox"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Hono } from "hono"

export interface ShopOptions {
  readonly database: string
  readonly port: number
  readonly host?: string
}

export const startShop = async (options: ShopOptions) => {
  const host = options.host ?? "127.0.0.1"
  const publicUrl = `http://${host}:${options.port}/pay`
  const sandbox = await startSandbox()
  const engine = await createPaymentEngine({
    ...sandbox.engineOptions(publicUrl),
    storage: SqliteStorage.layer({ filename: options.database }),
    publicUrl
  }).catch(async (error: unknown) => {
    await sandbox.close()
    throw error
  })
  const keys =
    (await engine.partners.list()).length === 0
      ? {
          partner: (await engine.partners.create({ name: "My shop" })).apiKey,
          wallet: (await engine.walletApps.create({ name: "Test wallet" })).apiKey
        }
      : undefined

  const app = new Hono()
  app.get("/", (c) => c.text("My shop\n"))
  // The whole request as it came: the engine takes its base path (/pay) off itself.
  app.all("/pay/*", (c) => engine.fetch(c.req.raw))

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port: options.port, hostname: host }, () =>
      resolve(started)
    )
  })
  return {
    publicUrl,
    sandbox,
    keys,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await engine.close()
      await sandbox.close()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 3000)
  const shop = await startShop({ database: process.env.PAY_DATABASE ?? "./data/shop.sqlite", port })
  console.log(`Shop on http://127.0.0.1:${port}, the engine at ${shop.publicUrl}`)
  if (shop.keys)
    console.log(`Partner API key: ${shop.keys.partner}\nWallet app key: ${shop.keys.wallet}`)
  const stop = () => void shop.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
