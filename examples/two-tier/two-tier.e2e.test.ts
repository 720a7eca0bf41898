/**
 * The two-tier example as it runs: a fresh PostgreSQL schema, the sandbox
 * chain as its own process, two web processes (workers: false) and one worker
 * process, all real processes on the same database and the same PAY_CONFIG.
 *
 * What it proves, with counts:
 * - the split: while no worker runs, a payment confirmed through a web process
 *   stays `processing`, its collect job sits due and unclaimed, and nothing is
 *   sent on chain (the collector's nonce, its transfers, the recorded
 *   transactions all stay at zero), though the jobs are looked for every 50 ms;
 * - the worker does that work, once: one buyer→collector transfer and one
 *   collector→merchant transfer, the collector's nonce up by exactly two;
 * - the tiers talk through the database: a payment made on web A is paid
 *   through web B, and a long-poll held on web A is woken by the worker's
 *   change (LISTEN/NOTIFY), not by its deadline.
 */
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPaymentEngine } from "@pay/core"
import { payWithWallet } from "@pay/sandbox"
import * as PgStorage from "@pay/storage-postgres"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Json } from "../embed-support.js"
import {
  type ChainProcess,
  sleep,
  startChain,
  tokenBalance,
  transfersOnChain
} from "../standalone/test/chain-work-support.js"
import { stopAll } from "../standalone/test/instances-support.js"
import {
  type Bundles,
  buildBundles,
  failedStart,
  startTier,
  type TierProcess,
  writePayConfig
} from "./tiers-support.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
const dir = mkdtempSync(join(tmpdir(), "pay-two-tier-"))
let bundles: Bundles
let chain: ChainProcess
let env: NodeJS.ProcessEnv
let webA: TierProcess
let webB: TierProcess
let keys: { readonly partner: string; readonly wallet: string }

/** 4.50 USD in the chain's 6-decimal USDC, priced 1:1; no fees, so all of it is settled. */
const PAID = 4_500_000n

beforeAll(async () => {
  bundles = buildBundles()
  const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  // The keys, made in this process on the same database, by an engine that serves
  // nothing and runs no work; it also applies the migrations before the tiers start.
  const [started] = await Promise.all([
    startChain(spawned, bundles.chain),
    (async () => {
      const engine = await createPaymentEngine({
        publicUrl: "http://127.0.0.1",
        storage: PgStorage.layer({ url: database }),
        workers: false
      })
      try {
        keys = {
          partner: (await engine.partners.create({ name: "Two-tier platform" })).apiKey,
          wallet: (await engine.walletApps.create({ name: "Two-tier wallet" })).apiKey
        }
      } finally {
        await engine.close()
      }
    })()
  ])
  chain = started
  env = { PAY_DATABASE: database, PAY_CONFIG: writePayConfig(dir, chain) }
  ;[webA, webB] = await Promise.all([
    startTier("web A", "web", bundles, env, spawned),
    startTier("web B", "web", bundles, env, spawned)
  ])
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  // After the processes: the schema is dropped once nothing uses it.
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
  if (bundles !== undefined) rmSync(bundles.dir, { recursive: true, force: true })
}, 30_000)

/** Reads the tiers' shared database as an operator would. */
const query = async (text: string, values: ReadonlyArray<unknown> = []): Promise<Array<Json>> => {
  const client = new pg.Client({ connectionString: env.PAY_DATABASE })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows
  } finally {
    await client.end()
  }
}

const jobsOf = (paymentId: string) =>
  query(
    `SELECT kind, state, lease_token IS NOT NULL AS leased, attempts, run_at <= now() AS due
     FROM chain_jobs WHERE payment_id = $1 ORDER BY kind`,
    [paymentId]
  )

const recordedTransactions = async () =>
  Number((await query("SELECT count(*) AS n FROM chain_transfers"))[0].n)

/** The partner's view of the payment on `web`. */
const viewOn = async (web: TierProcess, paymentId: string): Promise<Json> => {
  const view = await call(`${web.url}/v1/payments/${paymentId}`, keys.partner)
  expect(view.status, JSON.stringify(view.body)).toBe(200)
  return view.body
}

/** Reads the view on `web` until `done` holds; fails with the last view after `timeoutMs`. */
const waitForView = async (
  web: TierProcess,
  paymentId: string,
  done: (view: Json) => boolean,
  timeoutMs: number
): Promise<Json> => {
  const until = Date.now() + timeoutMs
  let last = await viewOn(web, paymentId)
  while (!done(last)) {
    if (Date.now() > until) {
      throw new Error(`payment ${paymentId} did not get there: ${JSON.stringify(last)}`)
    }
    await sleep(100)
    last = await viewOn(web, paymentId)
  }
  return last
}

const collectorNonce = () => chain.client.getTransactionCount({ address: chain.collector })

/** The engine's longest hold (its default maxLongPollMs): room for a slow worker start. */
const LONG_POLL_MS = 30_000

describe("a two-tier deployment on PostgreSQL", () => {
  it("takes a payment: made on web A, paid through web B, collected and settled by the worker alone", async () => {
    // The platform, through web A: a merchant, its settlement destination, a payment.
    const merchant = await call(`${webA.url}/v1/merchants`, keys.partner, {
      headers: { "idempotency-key": "two-tier-merchant" },
      body: { merchantName: "Coffee", merchantEmail: "owner@coffee.example" }
    })
    expect(merchant.status, JSON.stringify(merchant.body)).toBe(201)
    const merchantId: string = merchant.body.merchant.id
    const destination = privateKeyToAccount(generatePrivateKey()).address
    const settlement = await call(
      `${webA.url}/v1/merchants/${merchantId}/settlements/crypto`,
      keys.partner,
      {
        headers: { "idempotency-key": "two-tier-settlement" },
        body: {
          settlements: [{ asset: chain.token.asset, destination: `eip155:31337:${destination}` }]
        }
      }
    )
    expect(settlement.status, JSON.stringify(settlement.body)).toBe(201)
    const created = await call(`${webA.url}/v1/payments`, keys.partner, {
      headers: { "merchant-id": merchantId },
      body: { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "450" } }
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const paymentId: string = created.body.paymentId
    // Web A's link: the gateway of any web process takes it.
    expect(created.body.gatewayUrl).toBe(`${webA.url}/${paymentId}`)

    // A buyer with test USDC, minted on the chain process (the web tier serves no faucet).
    const buyerKey = generatePrivateKey()
    const buyer = privateKeyToAccount(buyerKey).address
    await chain.rpc("sandbox_faucet", [buyer, "10000000"])
    const nonceBefore = await collectorNonce()
    const collectorBefore = await tokenBalance(chain, chain.collector)

    // The wallet pays through web B; with no worker running it cannot finish yet.
    const walletLog: Array<string> = []
    const wallet = payWithWallet({
      engineUrl: webB.url,
      payment: created.body.gatewayUrl,
      apiKey: keys.wallet,
      privateKey: buyerKey,
      log: (line) => walletLog.push(line)
    })
    let walletDone = false
    // Kept, so a failure before the worker starts is reported by the await below, not lost.
    const walletOutcome = wallet.finally(() => {
      walletDone = true
    })
    walletOutcome.catch(() => {})
    // Until the confirm shows on web A; a wallet that stops first (it failed, or the
    // payment went final without a worker) fails the test with what it saw.
    const confirmed = await Promise.race([
      waitForView(webA, paymentId, (p) => p.status !== "requires_action", 30_000),
      walletOutcome.then((o) => {
        throw new Error(
          `the wallet finished before any worker ran (${o.status}):\n${walletLog.join("\n")}`
        )
      })
    ])
    expect(confirmed.status, walletLog.join("\n")).toBe("processing")

    // The split: 40 of the jobs' poll periods with web processes only, and nothing moves.
    await sleep(2_000)
    expect((await viewOn(webA, paymentId)).status).toBe("processing")
    expect((await viewOn(webB, paymentId)).status).toBe("processing")
    expect(await jobsOf(paymentId)).toEqual([
      { kind: "collect", state: "active", leased: false, attempts: 0, due: true }
    ])
    expect(await recordedTransactions()).toBe(0)
    expect(await collectorNonce()).toBe(nonceBefore)
    expect(await transfersOnChain(chain, buyer, chain.collector)).toEqual([])
    expect(await tokenBalance(chain, buyer)).toBe(10_000_000n)
    expect(walletDone).toBe(false)

    // A long-poll held on web A from before the worker exists.
    const held = (async () => {
      const started = Date.now()
      const answer = await call(
        `${webA.url}/v1/payments/${paymentId}/status?maxPollMs=${LONG_POLL_MS}`,
        keys.partner,
        { headers: { "merchant-id": merchantId } }
      )
      return { answer, heldMs: Date.now() - started }
    })()
    await sleep(500)

    const worker = await startTier("worker", "worker", bundles, env, spawned)

    // Web A's long-poll, held since before the worker existed, is answered by the
    // worker's change, carried by NOTIFY: before its deadline (at the deadline it
    // would read the payment again, and could find it succeeded all the same).
    const polled = await held
    expect(polled.answer.status, JSON.stringify(polled.answer.body)).toBe(200)
    expect(polled.answer.body.status, worker.output()).toBe("succeeded")
    expect(polled.heldMs).toBeLessThan(LONG_POLL_MS - 1_000)

    const outcome = await walletOutcome
    expect(outcome.status, walletLog.join("\n")).toBe("succeeded")

    const paid = await waitForView(
      webA,
      paymentId,
      (p) => p.settlement?.status !== "pending",
      30_000
    )
    expect(paid).toMatchObject({
      status: "succeeded",
      transaction: { hash: outcome.txId },
      settlement: { settled: true, status: "settled", amount: { value: PAID.toString() } }
    })

    // Exactly one transfer each way, and the collector sent exactly those two transactions.
    expect(await transfersOnChain(chain, buyer, chain.collector)).toEqual([PAID])
    expect(await transfersOnChain(chain, chain.collector, destination)).toEqual([PAID])
    expect(await tokenBalance(chain, destination)).toBe(PAID)
    // The buyer paid once; with no fees the collector passed all of it on and kept nothing.
    expect(await tokenBalance(chain, buyer)).toBe(10_000_000n - PAID)
    expect(await tokenBalance(chain, chain.collector)).toBe(collectorBefore)
    expect(await collectorNonce()).toBe(nonceBefore + 2)
    expect((await jobsOf(paymentId)).map((j) => [j.kind, j.state, j.leased])).toEqual([
      ["collect", "done", false],
      ["settle", "done", false]
    ])
    expect(await recordedTransactions()).toBe(2)
    for (const tier of [webA, webB, worker]) expect(tier.output()).not.toMatch(/step failed/)
  }, 120_000)

  it("stops each tier cleanly on SIGTERM", async () => {
    const worker = await startTier("second worker", "worker", bundles, env, spawned)
    webB.child.kill("SIGTERM")
    worker.child.kill("SIGTERM")
    expect(await webB.exited, webB.output()).toBe(0)
    expect(await worker.exited, worker.output()).toBe(0)
    expect(webB.output()).toMatch(/^web: stopped$/m)
    expect(worker.output()).toMatch(/^worker: stopped$/m)
    // Web A was left alone and still serves.
    expect((await call(`${webA.url}/health`, keys.partner)).status).toBe(200)
  }, 60_000)

  it("refuses invalid settings in one line, with exit code 1", async () => {
    const [noDatabase, badConfig] = await Promise.all([
      failedStart("web", bundles, { PAY_CONFIG: env.PAY_CONFIG }, spawned),
      failedStart(
        "worker",
        bundles,
        { PAY_DATABASE: env.PAY_DATABASE, PAY_CONFIG: join(dir, "none.json") },
        spawned
      )
    ])
    expect(noDatabase).toEqual({
      code: 1,
      stderr:
        "web: PAY_DATABASE must be a postgres:// (postgresql://) URL: the database every tier shares\n"
    })
    expect(badConfig.code).toBe(1)
    expect(badConfig.stderr).toMatch(
      /^worker: PAY_CONFIG: cannot read .*none\.json \(ENOENT[^\n]*\)\n$/
    )
  }, 60_000)
})
