/**
 * What a wallet payment costs the database (issue 18): from the confirm to the
 * merchant's settlement, four commits on SQLite (each an fsync), counted on
 * the real server's connection while one payment goes through the sandbox
 * chain: the confirm (the payment processing, its collect job queued held),
 * the collect's transaction recorded before it is sent, the success (the
 * collect job ended, the settle job queued held with its transfer recorded)
 * and the settlement. Four in all, too, while the partner has no webhook
 * endpoint: no other commit comes between or after them, each event written in
 * the payment's own commit. With one endpoint, the deliveries of the payment's
 * three events (processing, succeeded, settled) add their own: each delivery's
 * outcome a commit, and its claim one (claims due at once may share one), so
 * eight to ten in all, ten as measured. Each count holds through the quiet
 * period after the last (exactlyAfterQuiet), so a commit a moment later fails it.
 */
import { type PaymentId, Payments } from "@pay/core"
import { sqliteFileStorage } from "@pay/storage-sqlite"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CommitCounts, countingCommits } from "./commit-counting.js"
import {
  client,
  type E2eServer,
  eventually,
  exactlyAfterQuiet,
  runtimeHost,
  startServer
} from "./e2e-support.js"
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
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const counting = countingCommits(runtimeHost.sqlite.openConnection)
let server: E2eServer
let receiver: WebhookReceiver | undefined

beforeAll(async () => {
  server = await startServer(
    "sqlite",
    { fetchAllowPrivate: true },
    { webhookDelivery: { pollMs: 20 } },
    {
      ...runtimeHost,
      sqlite: sqliteFileStorage(counting.open)
    }
  )
})
afterAll(async () => {
  await receiver?.close()
  await server?.stop()
})

const settlementOf = (id: string) =>
  server.runEngine(
    Effect.map(
      Effect.flatMap(Payments, (p) => p.find(id as PaymentId)),
      (p) => p.settlement?.status
    )
  )

/** The first line of each write of every commit since `before`. */
const commitsSince = (before: CommitCounts) => counting.counts.everyWrite.slice(before.all)

/**
 * Pays `rounds` wallet payments one after the other, each from confirm to settled, and checks
 * the commits made from its confirm on: `summary` of them must equal `expected`, and still
 * through the quiet period after the last (a failure lists every commit).
 */
const payAndCount = async <A>(
  rounds: number,
  summary: (since: { readonly before: CommitCounts }) => A,
  expected: A
) => {
  const partner = client(() => server.baseUrl)
  const merchantId = await settledMerchant(partner)
  const wallet = (await walletClient(server)).api
  for (let round = 0; round < rounds; round++) {
    const buyer = newBuyer()
    await fund(server, buyer, 100_000_000n)
    const paymentId = (await paymentFor(partner, merchantId)).paymentId as string
    const option = await onlyOption(wallet, paymentId, buyer)
    const signature = await signAction(buyer.key, option.actions[0])
    // Whatever the requests before started has committed (the webhook deliveries of the
    // merchant's events, say): waits for a quiet period in which no commit comes.
    await eventually(() =>
      exactlyAfterQuiet(() => counting.counts.all, counting.counts.all, {
        what: `round ${round}: commits before the confirm, still coming`
      })
    )
    const before = { ...counting.counts }
    const confirmed = await confirm(wallet, paymentId, signed(option.id, signature), "?maxPollMs=0")
    expect(confirmed.status, confirmed.text).toBe(200)
    const deadline = Date.now() + 20_000
    while ((await settlementOf(paymentId)) !== "settled") {
      if (Date.now() > deadline) throw new Error(`payment ${paymentId} not settled in 20 s`)
      await new Promise((done) => setTimeout(done, 5))
    }
    // The last commit of the payment is the settlement itself: nothing of the payment's, nor
    // any other commit, is still to come through the quiet period after the last expected.
    await exactlyAfterQuiet(() => summary({ before }), expected, {
      what: `round ${round}: the commits since the confirm`
    }).catch((error) => {
      throw new Error(
        `${error.message}\nround ${round}, every commit since the confirm: ${JSON.stringify(commitsSince(before), null, 1)}`
      )
    })
  }
}

// The delivery claim reads what is due first, in its write (SqliteWebhookDeliveryStore.ts's `due`:
// a WITH over the deliveries and their endpoints), then leases it.
const WEBHOOK_ONLY =
  /^((UPDATE|INSERT INTO) webhook_(deliveries|attempts)\b|WITH busy AS MATERIALIZED \()/
const OUTCOME = /^UPDATE webhook_deliveries SET state = /

describe("the commits of a wallet payment on SQLite", () => {
  it("takes four from confirm to settled, four in all (no other commit)", async () => {
    await payAndCount(
      3,
      ({ before }) => ({
        paymentWork: counting.counts.paymentWork - before.paymentWork,
        all: counting.counts.all - before.all
      }),
      { paymentWork: 4, all: 4 }
    )
  })

  it("with a webhook endpoint: still four of the payment's, and its three events' deliveries: eight to ten in all", async () => {
    const partner = client(() => server.baseUrl)
    receiver = await startWebhookReceiver()
    const endpoint = await partner.request("POST", "/v1/webhook-endpoints", {
      idempotencyKey: `wallet-commits-${Date.now()}`,
      body: { url: receiver.url }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    await payAndCount(
      3,
      ({ before }) => {
        const commits = commitsSince(before)
        const others = commits.filter((writes) => !writes.every((w) => WEBHOOK_ONLY.test(w)))
        const webhook = commits.filter((writes) => writes.every((w) => WEBHOOK_ONLY.test(w)))
        const outcomes = webhook.filter((writes) => writes.some((w) => OUTCOME.test(w))).length
        const claims = webhook.length - outcomes
        return {
          paymentWork: counting.counts.paymentWork - before.paymentWork,
          // The payment's own four: each writes the payment or its chain work.
          others: others.length,
          // One outcome a delivery (processing, succeeded, settled), each its own commit.
          outcomes,
          // Their claims: one each, or fewer when deliveries fall due at once.
          claimsOneToThree: claims >= 1 && claims <= 3,
          all: commits.length >= 8 && commits.length <= 10
        }
      },
      { paymentWork: 4, others: 4, outcomes: 3, claimsOneToThree: true, all: true }
    )
    // Each event delivered once.
    expect(
      receiver.received.map((r) => r.event.type).filter((t) => t.startsWith("payment."))
    ).toHaveLength(9)
  })
})
