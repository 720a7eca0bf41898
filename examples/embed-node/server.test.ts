import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPaymentEngine } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { afterAll, expect, it } from "vitest"
import { startPlatform } from "./server.js"

const dir = mkdtempSync(join(tmpdir(), "pay-embed-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it("serves the platform's own routes and the engine's side by side", async () => {
  const database = join(dir, "embedded.sqlite")
  const platform = await startPlatform({ database, port: 0 })
  try {
    const base = `http://127.0.0.1:${platform.port}`
    expect(await (await fetch(`${base}/shop/cart`)).text()).toContain("platform's own page")
    expect((await fetch(`${base}/health`)).status).toBe(200)
    expect((await fetch(`${base}/v1/merchants`)).status).toBe(401)
  } finally {
    await platform.close()
  }
  // Closed cleanly: the file opens again and the new engine answers.
  const again = await createPaymentEngine({
    storage: SqliteStorage.layer({ filename: database }),
    publicUrl: "http://127.0.0.1"
  })
  try {
    const health = await again.fetch(new Request("http://127.0.0.1/health"))
    expect(health.status).toBe(200)
  } finally {
    await again.close()
  }
})
