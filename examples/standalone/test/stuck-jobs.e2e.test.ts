/**
 * Refused chain work raises its hand (issue 34), on a real EVM in its own
 * process and the `npm start` server on a SQLite file: the collector has no
 * ether left for gas, so the node refuses every transaction the engine sends.
 * The job backs off with one warning line per step, is marked stuck after the
 * configured number of failures, and shows in `/ready` (still 200, `degraded`,
 * naming the job) and in `/metrics` (`pay_chain_jobs_stuck`, and the oldest-due
 * age counted from the first failure). Funded again, the payment goes through
 * and both say so.
 */
import type { ChildProcess } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  engineSetup,
  fundedBuyer,
  isSettled,
  openShop,
  removeSetup,
  requireChainWorkBundles,
  type Shop,
  startChain,
  startEngine,
  waitForPayment
} from "./chain-work-support.js"
import { eventually, type Json } from "./e2e-support.js"
import { type Instance, stopAll } from "./instances-support.js"

const spawned: Array<ChildProcess> = []
let chain: ChainProcess
let setup: EngineSetup
let engine: Instance
let shop: Shop

const STUCK_AFTER = 4

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  setup = engineSetup(chain, { url: chain.rpcUrl }, undefined, {
    jobs: { stuckAfterFailures: STUCK_AFTER, backoffCapSeconds: 1 }
  })
  engine = await startEngine("engine", setup, spawned)
  shop = await openShop(engine, setup, chain)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  if (setup) removeSetup(setup)
}, 30_000)

const ready = async (): Promise<{ status: number; body: Json }> => {
  const response = await fetch(`${engine.url}/ready`)
  return { status: response.status, body: await response.json() }
}

/** A gauge's value in the Prometheus text `/metrics` answers. */
const gauge = async (name: string): Promise<number> => {
  const text = await (await fetch(`${engine.url}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`no ${name} in /metrics:\n${text}`)
  return Number(line.split(" ")[1])
}

/** The engine's JSON log lines with this message, for this payment. */
const logLines = (message: string, paymentId: string) =>
  engine
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json)
    .filter((l) => l.message === message && l.paymentId === paymentId)

describe("a chain job the node keeps refusing", () => {
  it("backs off, is marked stuck, shows in /ready and /metrics, and goes through once funded", async () => {
    const buyer = await fundedBuyer(chain, 20_000_000n)
    const balance = await chain.client.getBalance({ address: chain.collector })
    await chain.rpc("hardhat_setBalance", [chain.collector, "0x0"])
    const id = await createPayment(engine, shop, 1050)
    await confirmAsWallet(engine, shop, id, buyer)

    const degraded = await eventually(
      async () => {
        const answer = await ready()
        expect(answer.body.status).toBe("degraded")
        return answer
      },
      { timeoutMs: 60_000 }
    )
    expect(degraded.status).toBe(200)
    expect(degraded.body.checks.every((c: Json) => c.status === "ok")).toBe(true)
    const [stuck] = degraded.body.stuckJobs
    expect(stuck).toMatchObject({ kind: "collect", paymentId: id, chainId: "eip155:31337" })
    expect(stuck.failures).toBeGreaterThanOrEqual(STUCK_AFTER)
    expect(stuck.lastError).toMatch(/funds|balance/i)
    expect(Date.parse(stuck.stuckSince)).toBeGreaterThanOrEqual(Date.parse(stuck.failingSince))

    expect(await gauge("pay_chain_jobs_stuck")).toBe(1)
    const age = await gauge("pay_chain_job_oldest_due_age_seconds")
    expect(age).toBeGreaterThanOrEqual((Date.now() - Date.parse(stuck.failingSince)) / 1000 - 2)
    expect(age).toBeGreaterThan(0)
    // One warning line per back-off step, never one per look; one line when it became stuck.
    const retries = logLines("chain job retry", id)
    expect(retries.length).toBeGreaterThanOrEqual(STUCK_AFTER)
    expect(retries.length).toBeLessThanOrEqual(stuck.failures)
    expect(retries.map((l) => l.attempt)).toEqual(retries.map((_, i) => i + 1))
    expect(logLines("chain job stuck", id)).toHaveLength(1)
    expect(
      (
        await waitForPayment(
          () => engine,
          id,
          () => true
        )
      ).status
    ).toBe("processing")

    // Funded again: paid, settled, and nothing stuck.
    await chain.rpc("hardhat_setBalance", [chain.collector, `0x${balance.toString(16)}`])
    const paid = await waitForPayment(() => engine, id, isSettled, 60_000)
    expect(paid.status).toBe("succeeded")
    const after = await ready()
    expect([after.status, after.body.status, after.body.stuckJobs]).toEqual([
      200,
      "ready",
      undefined
    ])
    expect(await gauge("pay_chain_jobs_stuck")).toBe(0)
  }, 120_000)
})
