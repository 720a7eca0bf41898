/**
 * A platform's Express app with the engine mounted under `/pay`, beside the
 * app's own routes, on a SQLite file and the sandbox chain. The engine's
 * buyer links, data-collection pages and OpenAPI document all say `/pay`.
 *
 * Run: PORT=3000 npx tsx --conditions=@pay/source examples/express/server.ts
 * (docs/embedding.md walks through the same app in an empty project).
 */
import { toNodeHandler } from "@pay/adapter-node"
import { createPaymentEngine } from "@pay/core"
import { startSandbox } from "@pay/sandbox"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import express from "express"

export interface ShopOptions {
  readonly database: string
  readonly port: number
  readonly host?: string
}

export const startShop = async (options: ShopOptions) => {
  const host = options.host ?? "127.0.0.1"
  const publicUrl = `http://${host}:${options.port}/pay`
  // A local test chain with free test USDC; for real networks, `chainEngineOptions(...)` of @pay/chain-evm.
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

  const app = express()
  app.get("/", (_req, res) => {
    res.type("text").send("My shop\n")
  })
  // Before any body parser: the engine reads its requests' bodies itself.
  app.use("/pay", toNodeHandler(engine))
  app.use(express.json())
  app.post("/orders", (req, res) => {
    res.status(201).json({ order: req.body })
  })

  const server = app.listen(options.port, host)
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve)
    server.once("error", reject)
  })
  return {
    publicUrl,
    sandbox,
    /** The first start's keys (partner API, wallet app), shown once. */
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
