/**
 * Group commit under SIGKILL: the server (`npm start`'s bundle, a SQLite file
 * with synchronous = FULL) takes payment creates 32 at a time, sharing
 * commits, and is killed in the middle of that load. Started again on the
 * same file, it has every payment it answered 201 for: an acknowledgement
 * comes only after the commit that holds the write. Bounded in count and time.
 */
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newKey, PARTNER_KEY } from "./e2e-support.js"
import { type Instance, requireServer, startInstance, stopAll } from "./instances-support.js"
import { createPaymentRequest, usd } from "./payments-support.js"

const spawned: Array<ChildProcess> = []
let dir: string

beforeAll(() => {
  requireServer()
  dir = mkdtempSync(join(tmpdir(), "pay-group-commit-kill-"))
}, 60_000)

afterAll(async () => {
  await stopAll(spawned)
  rmSync(dir, { recursive: true, force: true })
}, 20_000)

describe("group commit survives SIGKILL under load (SQLite file)", () => {
  it("every payment acknowledged before the kill is there after the restart", async () => {
    const env = { PAY_DATABASE: join(dir, "pay.sqlite"), PAY_BOOTSTRAP_API_KEY: PARTNER_KEY }
    const first: Instance = await startInstance("first", env, spawned)
    const merchant = await first.api.request("POST", "/v1/merchants", {
      idempotencyKey: newKey(),
      body: { merchantName: "Under load", merchantEmail: "load@shop.example" }
    })
    expect(merchant.status, merchant.text).toBe(201)
    const merchantId: string = merchant.body.merchant.id

    const acknowledged: Array<string> = []
    let failed = 0
    let stop = false
    const worker = async (w: number) => {
      for (let i = 0; !stop && i < 5_000; i++) {
        try {
          const created = await createPaymentRequest(
            first.api,
            { referenceId: `load-${w}-${i}`, amount: usd("1050") },
            { merchantId }
          )
          if (created.status === 201) acknowledged.push(created.body.paymentId)
          else failed++
        } catch {
          // The connection died with the server: not acknowledged.
          failed++
          return
        }
      }
    }
    const workers = Array.from({ length: 32 }, (_, w) => worker(w))
    // Killed once it has acknowledged a good many, in the middle of the load.
    for (let i = 0; i < 200 && acknowledged.length < 300; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    first.child.kill("SIGKILL")
    await first.exited
    stop = true
    await Promise.all(workers)
    expect(acknowledged.length).toBeGreaterThanOrEqual(300)
    console.info(`acknowledged ${acknowledged.length} creates before SIGKILL (${failed} cut off)`)

    const second = await startInstance("second", env, spawned)
    const missing: Array<string> = []
    for (let i = 0; i < acknowledged.length; i += 50) {
      const answers = await Promise.all(
        acknowledged
          .slice(i, i + 50)
          .map((id) => second.api.get(`/v1/payments/${id}`).then((r) => [id, r.status] as const))
      )
      for (const [id, status] of answers) if (status !== 200) missing.push(id)
    }
    expect(missing).toEqual([])
    second.child.kill("SIGKILL")
    await second.exited
  }, 90_000)
})
