/**
 * The Bun example under the real Bun binary (the `bun` devDependency): its own
 * page beside the engine under /pay on PostgreSQL, a merchant and a payment,
 * a long-poll held past Bun's default 10 s idle timeout and woken by a cancel
 * (so the adapter's idle timeout is the long-poll cap's), and a clean stop.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, freePort, type Json } from "../embed-support.js"

const root = join(import.meta.dirname, "..", "..")
const bun = join(root, "node_modules", ".bin", "bun")
const scope = Effect.runSync(Scope.make())
let child: ChildProcess
let exited: Promise<number | null>
let base: string
let apiKey: string
let output = ""

beforeAll(async () => {
  const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  const port = await freePort()
  child = spawn(bun, ["--conditions=@pay/source", join(import.meta.dirname, "server.ts")], {
    cwd: root,
    env: { ...process.env, PAY_DATABASE: database, PORT: String(port) }
  })
  exited = new Promise((resolve) => child.once("exit", resolve))
  const started = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bun did not start:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const url = output.match(/listening on (http:\/\/\S+)/)?.[1]
      const key = output.match(/"apiKey":"(pk_[^"]+)"/)?.[1]
      if (url && key) {
        clearTimeout(timer)
        resolve({ url, apiKey: key })
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    void exited.then((code) => reject(new Error(`bun exited with ${code}:\n${output}`)))
  })
  base = started.url
  apiKey = started.apiKey
}, 90_000)

afterAll(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL")
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("the Bun example, under the real Bun binary", () => {
  it("serves its page and the engine under /pay; a long-poll outlives Bun's default idle timeout", async () => {
    expect(await (await fetch(`${base}/`)).text()).toBe("My shop on Bun\n")
    expect((await fetch(`${base}/pay/health`)).status).toBe(200)

    const merchant = await call(`${base}/pay/v1/merchants`, apiKey, {
      headers: { "idempotency-key": "bun-m" },
      body: { merchantName: "Bun Coffee", merchantEmail: "bun@coffee.example" }
    })
    expect(merchant.status).toBe(201)
    const merchantId: string = merchant.body.merchant.id
    const payment = await call(`${base}/pay/v1/payments`, apiKey, {
      headers: { "merchant-id": merchantId },
      body: { referenceId: "BUN-1", amount: { unit: "iso4217/USD", value: "250" } }
    })
    expect(payment.status).toBe(201)
    expect(payment.body.gatewayUrl).toBe(`${base}/pay/${payment.body.paymentId}`)

    // Held for 15 s (with its default idle timeout of 10 s, Bun resets such a connection at
    // about 12 s: seen here), then woken by a cancel.
    const polling: Promise<{ status: number; body: Json }> = call(
      `${base}/pay/v1/payments/${payment.body.paymentId}/status?maxPollMs=25000`,
      apiKey,
      { headers: { "merchant-id": merchantId } }
    )
    await new Promise((resolve) => setTimeout(resolve, 15_000))
    const cancelled = await call(
      `${base}/pay/v1/payments/${payment.body.paymentId}/cancel`,
      apiKey,
      {
        headers: { "merchant-id": merchantId },
        body: {}
      }
    )
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    const woken = await polling
    expect(woken.status).toBe(200)
    expect(woken.body).toMatchObject({ status: "cancelled", isFinal: true })
  }, 60_000)

  it("stops cleanly on SIGTERM", async () => {
    child.kill("SIGTERM")
    expect(await exited, output).toBe(0)
  }, 30_000)
})
