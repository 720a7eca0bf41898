/**
 * The second start (issue 34), as a new user has it: `npm start` on the
 * default kind of database (a SQLite file), the README's walk-through paid by
 * the example wallet, Ctrl-C, `npm start` again on the same file, and the
 * walk-through again. The sandbox chain starts fresh with every start while
 * the file keeps the collector's nonces: the second start must say so, start
 * the chain's nonces afresh, and pay and settle again without a refused send
 * retried. Under `npm run test:bun` the server is `npm run start:bun`'s, on Bun.
 */
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { payWithWallet } from "@pay/sandbox"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Client, eventually, type Json } from "./e2e-support.js"
import {
  bootstrapKeyOf,
  bundle,
  type Instance,
  nodeBinary,
  requireBundles,
  serverCommand,
  startInstance
} from "./instances-support.js"

const root = join(import.meta.dirname, "..", "..", "..")
const dir = mkdtempSync(join(tmpdir(), "pay-restart-"))
const env = { ...process.env, PAY_DATABASE: join(dir, "pay.sqlite") }
const children: Array<ChildProcess> = []

beforeAll(() => requireBundles("main", "cli"), 60_000)

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

/** `npm run pay -- …` on the server's database, as the walk-through runs it. */
const pay = async (...args: Array<string>): Promise<Json> =>
  JSON.parse(
    (await promisify(execFile)(nodeBinary, [bundle("cli"), ...args], { env, cwd: root })).stdout
  )

/** Ctrl-C: the server stops on SIGINT, cleanly. */
const interrupt = async (instance: Instance) => {
  instance.child.kill("SIGINT")
  await instance.exited
  expect(instance.child.exitCode, instance.output()).toBe(0)
}

/**
 * The README's walk-through on `api` (with the partner's key): the merchant and its
 * sandbox settlement under the README's idempotency keys (the same merchant again on a
 * second run), a payment, paid by the example wallet; resolves with the payment settled.
 */
const walkThrough = async (instance: Instance, key: string, wallet: string, order: string) => {
  const api: Client = instance.api
  const sandbox = (await api.get("/sandbox", { key: null })).body
  const merchant = await api.request("POST", "/v1/merchants", {
    key,
    idempotencyKey: "coffee",
    body: { merchantName: "Coffee", merchantEmail: "owner@coffee.example" }
  })
  expect(merchant.status, merchant.text).toBe(201)
  const merchantId = merchant.body.merchant.id as string
  const settlement = await api.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
    key,
    idempotencyKey: "coffee-usdc",
    body: {
      settlements: [
        {
          asset: sandbox.tokens[0].asset,
          destination: "eip155:31337:0x000000000000000000000000000000000000dEaD"
        }
      ]
    }
  })
  expect(settlement.status, settlement.text).toBeLessThan(300)
  const created = await api.request("POST", "/v1/payments", {
    key,
    headers: { "Merchant-Id": merchantId },
    body: { referenceId: order, amount: { unit: "iso4217/USD", value: "450" } }
  })
  expect(created.status, created.text).toBe(201)
  const lines: Array<string> = []
  const outcome = await payWithWallet({
    engineUrl: instance.url,
    payment: created.body.gatewayUrl,
    apiKey: wallet,
    faucet: 100_000_000n,
    log: (line) => lines.push(line)
  })
  expect(outcome.status, `${lines.join("\n")}\n${instance.output()}`).toBe("succeeded")
  return eventually(async () => {
    const payment = (await api.get(`/v1/payments/${created.body.paymentId}`, { key })).body
    expect(payment.settlement?.status, instance.output()).toBe("settled")
    return payment
  })
}

describe("npm start, the walk-through, Ctrl-C, npm start again", () => {
  it("pays and settles after the restart: the sandbox's new run said, its nonces started afresh, nothing retried", async () => {
    const first = await startInstance("first", env, children, { startTimeoutMs: 30_000 })
    const key = bootstrapKeyOf(first.output())
    expect(key, first.output()).toBeDefined()
    const wallet = (await pay("apps", "create", "--name", "My wallet", "--json")).apiKey as string
    const before = await walkThrough(first, key!, wallet, "ORDER-1")
    expect(before.status).toBe("succeeded")
    // A second server on the same file and port is refused before it opens anything: the
    // running server's sandbox run stays the recorded one (no payment of it is "earlier").
    const port = new URL(first.url).port
    const [runtime, args] = serverCommand()
    const refused = await promisify(execFile)(runtime, args, {
      env: { ...env, HOST: "127.0.0.1", PORT: port },
      cwd: root
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e
    )
    expect(refused?.stderr).toMatch(/EADDRINUSE/)
    expect((await pay("payments", "get", before.paymentId, "--json")).note).toBeUndefined()
    await interrupt(first)

    const second = await startInstance("second", env, children, { startTimeoutMs: 30_000 })
    // A new run of the sandbox against a file that remembers the last one: said at start.
    expect(second.output()).toMatch(/new run of the sandbox chain/i)
    const after = await walkThrough(second, key!, wallet, "ORDER-2")
    expect(after.status).toBe("succeeded")
    expect(after.transaction.hash).not.toBe(before.transaction.hash)
    // Each run's first collect took its collector's first nonce: the file's sequence was forgotten.
    expect([before.transaction.nonce, after.transaction.nonce]).toEqual([0, 0])
    // Nothing was refused and retried.
    expect(second.output()).not.toMatch(/Nonce too high|chain job retry/)

    // The first payment keeps its history: succeeded and settled, its transaction's hash.
    const kept = (await second.api.get(`/v1/payments/${before.paymentId}`, { key: key! })).body
    expect(kept.status).toBe("succeeded")
    expect(kept.settlement.status).toBe("settled")
    expect(kept.transaction.hash).toBe(before.transaction.hash)
    // ...with a note, for the operator, that its transactions were on the sandbox's earlier run.
    const shown = await pay("payments", "get", before.paymentId, "--json")
    expect(shown.transaction.hash).toBe(before.transaction.hash)
    expect(shown.note).toMatch(/earlier run of the sandbox chain/)
    expect((await pay("payments", "get", after.paymentId, "--json")).note).toBeUndefined()

    // A third start on the same file: the sandbox is new again, and pays again.
    await interrupt(second)
    const third = await startInstance("third", env, children, { startTimeoutMs: 30_000 })
    expect((await walkThrough(third, key!, wallet, "ORDER-3")).status).toBe("succeeded")
    expect(third.output()).not.toMatch(/Nonce too high|chain job retry/)
    await interrupt(third)
  }, 180_000)
})
