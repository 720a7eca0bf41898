/**
 * Two worker instances racing to claim the same chain job, run both ways on
 * purpose (issue 20): three engines in this process on one PostgreSQL schema
 * and a real EVM in its own process (the chain server). C serves only (no
 * background work, as a web tier), so a wallet's confirm through it queues
 * the payment's collect job for any worker to claim; A and B are workers
 * whose claims pass a gate (test/pause-points.ts). Once the job is queued,
 * each worker's next claim is held; the test lets the chosen winner's claim
 * through first, then the loser's, which finds the job leased. The winner
 * alone records the transfers, succeeds the payment and settles it; exactly
 * one collection and one settlement move the funds, the fees staying with
 * the collector. (chain-work-race.e2e.test.ts races two processes freely.)
 */
import type { ChildProcess } from "node:child_process"
import { ChainJobStore, type PaymentId, WalletApps } from "@pay/core"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  engineSetup,
  fundedBuyer,
  isSettled,
  openLedger,
  openShop,
  removeSetup,
  type Served,
  startChain,
  TEN_FIFTY,
  waitForPayment
} from "./chain-work-support.js"
import { client, type E2eServer, startServer } from "./e2e-support.js"
import { requireBundles, stopAll } from "./instances-support.js"
import { type PausePoints, pausePoints } from "./pause-points.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
const setups: Array<EngineSetup> = []
let chain: ChainProcess

const { paid: PAID, settled: SETTLED } = TEN_FIFTY

beforeAll(async () => {
  requireBundles("chain")
  chain = await startChain(spawned)
}, 60_000)

afterAll(async () => {
  await stopAll(spawned)
  for (const setup of setups) removeSetup(setup)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

const served = (server: E2eServer): Served => ({
  url: server.baseUrl,
  api: client(() => server.baseUrl)
})

interface Engines {
  readonly A: E2eServer
  readonly B: E2eServer
  readonly C: E2eServer
  readonly points: { readonly A: PausePoints; readonly B: PausePoints }
  readonly stop: () => Promise<void>
}

/** C (serving only), then the workers A and B with their claims closed, on a new schema. */
const threeEngines = async (): Promise<Engines> => {
  const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  const setup = engineSetup(chain, { url: chain.rpcUrl }, database)
  setups.push(setup)
  const config = { database, payConfigPath: Option.some(setup.payConfig) }
  const points = {
    A: pausePoints({ claimsClosed: true }),
    B: pausePoints({ claimsClosed: true })
  }
  const C = await startServer("postgres", config, { workers: false })
  const A = await startServer("postgres", config, { wrapStorage: points.A.wrap })
  const B = await startServer("postgres", config, { wrapStorage: points.B.wrap })
  return {
    A,
    B,
    C,
    points,
    stop: async () => {
      await Promise.all([A.stop(), B.stop()])
      await C.stop()
    }
  }
}

const jobOf = (server: E2eServer, paymentId: string, kind: "collect" | "settle") =>
  server
    .runEngine(
      Effect.flatMap(ChainJobStore, (jobs) => jobs.findByPayment(paymentId as PaymentId, kind))
    )
    .then(Option.getOrUndefined)

describe("two workers claim the same job: the order forced (PostgreSQL, in process)", () => {
  it.each([
    { winner: "A", loser: "B" },
    { winner: "B", loser: "A" }
  ] as const)(
    "$winner claims first: $winner does all the work, $loser finds the job taken",
    async ({ winner, loser }) => {
      const engines = await threeEngines()
      try {
        const { C, points } = engines
        const shop = await openShop(
          served(C),
          {
            walletKey: async () =>
              (
                await C.runEngine(
                  Effect.flatMap(WalletApps, (apps) => apps.create({ name: "Race wallet" }))
                )
              ).apiKey
          },
          chain
        )
        const buyer = await fundedBuyer(chain, 20_000_000n)
        const paymentId = await createPayment(served(C), shop, 1050)
        const ledger = await openLedger(
          chain,
          { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
          { paid: PAID, settled: SETTLED }
        )
        const nonceBefore = await chain.client.getTransactionCount({ address: chain.collector })

        // Confirmed through C, which runs no chain work: the collect job waits, unclaimed.
        const confirmed = await confirmAsWallet(served(C), shop, paymentId, buyer)
        expect(confirmed.status).toBe("processing")
        const queuedBy = new Date()
        const collect = await jobOf(C, paymentId, "collect")
        expect(collect).toMatchObject({ state: "active", attempts: 0 })

        // Both workers look for due jobs now: each one's claim is held at the gate.
        points.A.claims.arm(queuedBy)
        points.B.claims.arm(queuedBy)
        await Promise.all([points.A.claims.held(), points.B.claims.held()])
        const won = await points[winner].claims.open()
        expect(won.map((c) => c.job.id)).toEqual([collect!.id])
        const lost = await points[loser].claims.open()
        expect(lost.map((c) => c.job.id)).toEqual([])

        const payment = await waitForPayment(() => served(C), paymentId, isSettled, 60_000)
        expect(payment).toMatchObject({ status: "succeeded", settlement: { status: "settled" } })
        const settle = await jobOf(C, paymentId, "settle")
        expect(settle).toMatchObject({ state: "done" })
        expect(await jobOf(C, paymentId, "collect")).toMatchObject({ state: "done", attempts: 1 })

        // The winner did every write of the work; the loser none.
        expect(points[winner].writes()).toEqual([
          `claim ${collect!.id}`,
          `record ${collect!.id}`,
          `${paymentId} -> succeeded +settle held`,
          `complete ${settle!.id}`
        ])
        expect(points[loser].writes()).toEqual([])

        // Exactly one collection and one settlement; the collector keeps the fees.
        await ledger.expectMovedOnce()
        expect(await chain.client.getTransactionCount({ address: chain.collector })).toBe(
          nonceBefore + 2
        )
      } finally {
        await engines.stop()
      }
    },
    90_000
  )
})
