/**
 * The Bun example under the real Bun binary (the `bun` devDependency), on a
 * SQLite file (bun:sqlite) and on PostgreSQL: its own page beside the engine
 * under /pay, a merchant and a payment, a long-poll held past Bun's default
 * 10 s idle timeout and woken by a cancel (so the adapter's idle timeout is the
 * long-poll cap's), the SQLite file kept across a restart, and a clean stop.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, freePort, type Json } from "../embed-support.js"

const root = join(import.meta.dirname, "..", "..")
const bun = join(root, "node_modules", ".bin", "bun")
const scope = Effect.runSync(Scope.make())
const dir = mkdtempSync(join(tmpdir(), "pay-bun-example-"))

interface Running {
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  readonly base: string
  /** The first partner's key, printed on a database without partners. */
  readonly apiKey: string | undefined
  readonly output: () => string
}

const children: Array<ChildProcess> = []

/** Starts the example on `database`; resolves once it listens (and printed its key, if `fresh`). */
const startExample = async (database: string, fresh: boolean): Promise<Running> => {
  const port = await freePort()
  const child = spawn(bun, ["--conditions=@pay/source", join(import.meta.dirname, "server.ts")], {
    cwd: root,
    env: { ...process.env, PAY_DATABASE: database, PORT: String(port) }
  })
  children.push(child)
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  let output = ""
  const started = await new Promise<{ url: string; apiKey: string | undefined }>(
    (resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bun did not start:\n${output}`)), 60_000)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const url = output.match(/listening on (http:\/\/\S+)/)?.[1]
        const key = output.match(/"apiKey":"(pk_[^"]+)"/)?.[1]
        if (url && (key || !fresh)) {
          clearTimeout(timer)
          resolve({ url, apiKey: key })
        }
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      void exited.then((code) => reject(new Error(`bun exited with ${code}:\n${output}`)))
    }
  )
  return { child, exited, base: started.url, apiKey: started.apiKey, output: () => output }
}

const stopExample = async (running: Running) => {
  running.child.kill("SIGTERM")
  expect(await running.exited, running.output()).toBe(0)
}

const databases: Record<"sqlite" | "postgres", string> = {
  sqlite: join(dir, "shop.sqlite"),
  postgres: ""
}
const servers: Partial<Record<keyof typeof databases, Running>> = {}
const keys: Partial<Record<keyof typeof databases, string>> = {}

beforeAll(async () => {
  databases.postgres = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  for (const store of ["sqlite", "postgres"] as const) {
    const running = await startExample(databases[store], true)
    servers[store] = running
    if (running.apiKey !== undefined) keys[store] = running.apiKey
  }
}, 120_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

/** A merchant and a payment on `store`'s server; the payment's id and its merchant. */
const openPayment = async (store: keyof typeof databases, reference: string) => {
  const { base } = servers[store]!
  const apiKey = keys[store]!
  const merchant = await call(`${base}/pay/v1/merchants`, apiKey, {
    headers: { "idempotency-key": `bun-${reference}` },
    body: { merchantName: "Bun Coffee", merchantEmail: "bun@coffee.example" }
  })
  expect(merchant.status).toBe(201)
  const merchantId: string = merchant.body.merchant.id
  const payment = await call(`${base}/pay/v1/payments`, apiKey, {
    headers: { "merchant-id": merchantId },
    body: { referenceId: reference, amount: { unit: "iso4217/USD", value: "250" } }
  })
  expect(payment.status).toBe(201)
  expect(payment.body.gatewayUrl).toBe(`${base}/pay/${payment.body.paymentId}`)
  return { paymentId: payment.body.paymentId as string, merchantId }
}

describe("the Bun example, under the real Bun binary", () => {
  it.each(["sqlite", "postgres"] as const)(
    "serves its page and the engine under /pay on %s",
    async (store) => {
      const { base } = servers[store]!
      expect(await (await fetch(`${base}/`)).text()).toBe("My shop on Bun\n")
      expect((await fetch(`${base}/pay/health`)).status).toBe(200)
      const { paymentId, merchantId } = await openPayment(store, `BUN-${store}`)
      const status = await call(`${base}/pay/v1/payments/${paymentId}/status`, keys[store]!, {
        headers: { "merchant-id": merchantId }
      })
      expect(status.body).toMatchObject({ status: "requires_action", isFinal: false })
    }
  )

  it("holds a long-poll past Bun's default idle timeout, on both stores", async () => {
    await Promise.all(
      (["sqlite", "postgres"] as const).map(async (store) => {
        const { base } = servers[store]!
        const apiKey = keys[store]!
        const { paymentId, merchantId } = await openPayment(store, `HOLD-${store}`)
        // Held for 15 s (with its default idle timeout of 10 s, Bun resets such a connection
        // at about 12 s: seen here), then woken by a cancel.
        const polling: Promise<{ status: number; body: Json }> = call(
          `${base}/pay/v1/payments/${paymentId}/status?maxPollMs=25000`,
          apiKey,
          { headers: { "merchant-id": merchantId } }
        )
        await new Promise((resolve) => setTimeout(resolve, 15_000))
        const cancelled = await call(`${base}/pay/v1/payments/${paymentId}/cancel`, apiKey, {
          headers: { "merchant-id": merchantId },
          body: {}
        })
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
        const woken = await polling
        expect(woken.status).toBe(200)
        expect(woken.body).toMatchObject({ status: "cancelled", isFinal: true })
      })
    )
  }, 60_000)

  it("stops cleanly on SIGTERM, and finds its merchants again in the SQLite file", async () => {
    await stopExample(servers.postgres!)
    await stopExample(servers.sqlite!)
    const again = await startExample(databases.sqlite, false)
    try {
      // No new key: the partner of the first start is in the file.
      expect(again.apiKey).toBeUndefined()
      const listed = await call(`${again.base}/pay/v1/merchants`, keys.sqlite!)
      expect(listed.status).toBe(200)
      expect(listed.body.merchants.map((m: Json) => m.name)).toEqual(["Bun Coffee", "Bun Coffee"])
    } finally {
      await stopExample(again)
    }
  }, 60_000)
})
