/**
 * What a wallet payment costs the database (issue 18): from the confirm to the
 * merchant's settlement, four commits on SQLite (each an fsync), counted on
 * the real server's connection while one payment goes through the sandbox
 * chain: the confirm (the payment processing, its collect job queued held),
 * the collect's transaction recorded before it is sent, the success (the
 * collect job ended, the settle job queued held with its transfer recorded)
 * and the settlement.
 */
import { type PaymentId, Payments } from "@pay/core"
import { sqliteFileStorage } from "@pay/storage-sqlite"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countingCommits } from "./commit-counting.js"
import { client, type E2eServer, runtimeHost, startServer } from "./e2e-support.js"
import {
  confirm,
  fund,
  newBuyer,
  onlyOption,
  paymentFor,
  settledMerchant,
  signAction,
  signed,
  walletClient
} from "./gateway-support.js"

const counting = countingCommits(runtimeHost.sqlite.openConnection)
let server: E2eServer

beforeAll(async () => {
  server = await startServer(
    "sqlite",
    {},
    {},
    {
      ...runtimeHost,
      sqlite: sqliteFileStorage(counting.open)
    }
  )
})
afterAll(() => server?.stop())

const settlementOf = (id: string) =>
  server.runEngine(
    Effect.map(
      Effect.flatMap(Payments, (p) => p.find(id as PaymentId)),
      (p) => p.settlement?.status
    )
  )

describe("the commits of a wallet payment on SQLite", () => {
  it("takes four from confirm to settled", async () => {
    const partner = client(() => server.baseUrl)
    const merchantId = await settledMerchant(partner)
    const wallet = (await walletClient(server)).api
    for (let round = 0; round < 3; round++) {
      const buyer = newBuyer()
      await fund(server, buyer, 100_000_000n)
      const paymentId = (await paymentFor(partner, merchantId)).paymentId as string
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      // Whatever the requests before started has committed.
      await new Promise((done) => setTimeout(done, 300))
      const before = { ...counting.counts }
      const confirmed = await confirm(
        wallet,
        paymentId,
        signed(option.id, signature),
        "?maxPollMs=0"
      )
      expect(confirmed.status, confirmed.text).toBe(200)
      const deadline = Date.now() + 20_000
      while ((await settlementOf(paymentId)) !== "settled") {
        if (Date.now() > deadline) throw new Error(`payment ${paymentId} not settled in 20 s`)
        await new Promise((done) => setTimeout(done, 5))
      }
      // The last commit is the settlement itself: nothing of the payment's is still to come.
      await new Promise((done) => setTimeout(done, 200))
      const paymentWork = counting.counts.paymentWork - before.paymentWork
      const commits = counting.counts.writes.slice(before.paymentWork)
      expect(paymentWork, `round ${round}: ${JSON.stringify(commits, null, 1)}`).toBe(4)
    }
  })
})
