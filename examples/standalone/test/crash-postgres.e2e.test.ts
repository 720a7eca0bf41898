/**
 * The crash suite on PostgreSQL (issue 40): two server processes (`npm start`'s bundle) on one
 * fresh PostgreSQL schema, a real EVM in its own process (the chain server, each instance
 * reaching it through an RPC proxy of its own), and a webhook receiver on loopback with one
 * endpoint registered. Under load (payment creates through both instances, a few of them
 * cancelled, wallet payments confirmed so that collects and settlements are under way, and the
 * events of all that on their way to the receiver), 20 rounds each SIGKILL one instance, the
 * two in turn, at a point drawn from a seeded sequence (crash-support.ts KILL_POINTS;
 * PAY_CRASH_SEED makes a failing run's draws again), and start it again on the same database;
 * the other serves meanwhile, and is always up again before it is the one killed. Then the
 * load stops, the work drains (waited for by its rows and counters), and the records are
 * counted:
 * - every create answered 201 is in the database: 0 lost;
 * - every confirmed payment was collected once and settled once on chain (Transfer logs,
 *   balances, the collector's nonces), ends succeeded and settled, with one event of each kind;
 * - every event the engine recorded reached the receiver at least once with a valid signature
 *   (duplicates allowed, none missing), a payment's events first arriving in their order.
 */
import type { ChildProcess } from "node:child_process"
import { freshSchema, withAdmin } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Buyer,
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  engineSetup,
  fundedBuyer,
  isSettled,
  openShop,
  paymentOf,
  removeSetup,
  requireChainWorkBundles,
  sleep,
  startChain,
  startRpcProxy,
  TEN_FIFTY,
  tokenBalance,
  transfersOnChain,
  waitForPayment
} from "./chain-work-support.js"
import {
  draw,
  HELD_CALLS,
  InstancePair,
  KILL_POINTS,
  releaseModes,
  seededRandom,
  startLoad
} from "./crash-support.js"
import { eventually, exactlyAfterQuiet, type Json, newKey } from "./e2e-support.js"
import { type Instance, startInstance, stopAll } from "./instances-support.js"
import type { Holder, RpcProxy } from "./rpc-proxy.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const ROUNDS = 20
/** Printed with the results; set PAY_CRASH_SEED to it to make a failing run's draws again. */
const SEED = Number(process.env.PAY_CRASH_SEED ?? 40)
/** What a buyer is given: enough for one payment (TEN_FIFTY), its balance checked after. */
const FUNDS = 20_000_000n

const { cents: CENTS, paid: PAID, fees: FEES, settled: SETTLED } = TEN_FIFTY

const ENV = {
  // The receiver is on 127.0.0.1.
  PAY_FETCH_ALLOW_PRIVATE: "1",
  PAY_WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1",
  // A short lease: a killed instance's claimed deliveries are sent again 5 s later. Longer
  // than an attempt here takes (the receiver's slowest answer is 1.5 s), so that what is sent
  // twice is what a kill cut short, not an attempt that outlasted its lease.
  PAY_WEBHOOK_LEASE_SECONDS: "5"
}

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
const proxies: Array<RpcProxy> = []
const setups: Array<EngineSetup> = []
let chain: ChainProcess
let database: string
let receiver: WebhookReceiver
let slowAnswers = false

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  // One proxy and PAY_CONFIG per instance, so a round holds the victim's chain calls alone.
  // Chain jobs polled every 50 ms and leased for 5 s: with engineSetup's 2 s, an instance
  // starved of CPU by a loaded machine renewed its leases late and the two took jobs from each
  // other back and forth (safely, but the victim's calls were then not the ones to hold).
  for (let slot = 0; slot < 2; slot++) {
    proxies.push(await startRpcProxy(chain.rpcUrl))
    setups.push(engineSetup(chain, proxies[slot]!, database, { jobs: { leaseSeconds: 5 } }))
  }
  receiver = await startWebhookReceiver()
  // Answered at once, but slowly in a round's last moments: deliveries the victim sends then
  // are still on their way when it dies (and the other instance is mostly still starting).
  receiver.answer = () => ({ status: 200, delayMs: slowAnswers ? 1_500 : 20 })
}, 60_000)

afterAll(async () => {
  await stopAll(spawned)
  await receiver?.close()
  for (const proxy of proxies) await proxy.close()
  for (const setup of setups) removeSetup(setup)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

/** Rows of the instances' database, read on a connection of the test's own. */
const query = <A = Json>(statement: string): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(withAdmin(database, (sql) => sql.unsafe<A & object>(statement)))

interface WalletPayment {
  readonly paymentId: string
  readonly buyer: Buyer
}

type EventRow = { id: string; type: string; payment_id: string | null; seq: string }

/** Each event id the receiver answered 2xx, with the index of its first such request. */
const answeredOk = (r: WebhookReceiver) => {
  const first = new Map<string, number>()
  r.received.forEach((request, i) => {
    const ok = request.answered !== null && request.answered >= 200 && request.answered < 300
    if (ok && !first.has(request.id)) first.set(request.id, i)
  })
  return first
}

/**
 * Waits until the victim's proxy holds a call (true), or every payment of the round is settled
 * without one (false: their work went to the other instance); fails after a minute, naming what
 * the engines logged about the payments.
 */
const heldOrSettled = async (
  holder: Holder,
  victim: Instance,
  paid: ReadonlyArray<WalletPayment>,
  pair: InstancePair
): Promise<boolean> => {
  const until = Date.now() + 60_000
  while (Date.now() < until) {
    if (holder.held.length > 0) return true
    const views = await Promise.all(paid.map((p) => paymentOf(victim, p.paymentId)))
    if (views.every(isSettled)) return false
    await sleep(20)
  }
  const lines = paid.flatMap((p) => pair.linesAbout(p.paymentId))
  throw new Error(`nothing held on ${victim.name}, nothing settled:\n${lines.join("\n")}`)
}

describe("the crash suite on PostgreSQL: two instances, one killed 20 times under load", () => {
  it("loses no acknowledged create, moves each payment's money once, delivers every event", async () => {
    const started = Date.now()
    const envs = [
      { ...setups[0]!.env, ...ENV },
      { ...setups[1]!.env, ...ENV }
    ] as const
    // The first alone migrates the schema and creates the partner; then the second joins.
    const first = await startInstance("A1", envs[0], spawned)
    const pair = new InstancePair(first, await startInstance("B1", envs[1], spawned), envs, spawned)

    // The endpoint before anything else, so that every event the engine records is queued for it.
    const endpoint = await first.api.request("POST", "/v1/webhook-endpoints", {
      idempotencyKey: newKey(),
      body: { url: receiver.url }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    receiver.secrets.push(endpoint.body.secret)
    const shop = await openShop(first, setups[0]!, chain)
    const nonceBefore = await chain.client.getTransactionCount({ address: chain.collector })
    const collectorBefore = await tokenBalance(chain, chain.collector)
    // A buyer for every wallet payment the rounds may make (at most two a round), funded first.
    const buyers: Array<Buyer> = []
    while (buyers.length < 2 * ROUNDS) {
      buyers.push(
        ...(await Promise.all(Array.from({ length: 10 }, () => fundedBuyer(chain, FUNDS))))
      )
    }

    const random = seededRandom(SEED)
    const load = startLoad(pair, shop.merchantId, { workers: 4, perWorker: 4_000, pauseMs: 10 })
    const wallet: Array<WalletPayment> = []
    const rounds: Array<string> = []
    const cancelling: Array<Promise<void>> = []
    /** How long each restart took, to its start banner. */
    const starts: Array<number> = []
    let heldKills = 0
    // The instance killed last round, on its way up again: it must be up before the other dies.
    let restarting: Promise<unknown> = Promise.resolve()
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const victim = round % 2
        const point = draw(random, KILL_POINTS)
        const release = draw(random, releaseModes(point))
        const payments = 1 + Math.floor(random() * 2)
        const creates = 5 + Math.floor(random() * 30)
        const cancels = 2 + Math.floor(random() * 4)
        const roundStart = Date.now()
        const ackedBefore = load.acknowledged.length
        slowAnswers = true
        cancelling.push(load.cancelSome(cancels))
        const predicate = HELD_CALLS[point]
        const holder = predicate === undefined ? undefined : proxies[victim]!.hold(predicate)
        // Confirmed through the victim: it holds their chain jobs when it dies.
        const on = pair.at(victim)
        const paid = await Promise.all(
          Array.from({ length: payments }, async () => {
            const buyer = buyers.pop()!
            const paymentId = await createPayment(on, shop, CENTS)
            await confirmAsWallet(on, shop, paymentId, buyer)
            return { paymentId, buyer }
          })
        )
        wallet.push(...paid)
        // Whether the victim dies with chain calls held: it may not, when a lease it was slow to
        // renew on a loaded machine went to the other instance, which did the work instead.
        const held = holder === undefined ? false : await heldOrSettled(holder, on, paid, pair)
        if (held) heldKills++
        if (point === "creates") {
          const target = load.acknowledged.length + creates
          await eventually(async () =>
            expect(load.acknowledged.length).toBeGreaterThanOrEqual(target)
          )
        }
        await restarting
        await pair.kill(victim)
        slowAnswers = false
        let released = ""
        if (holder !== undefined) {
          holder.stop()
          // Whatever is parked now goes, a call held after the check too.
          released = ` ${await holder.release(release)} ${release}${held ? "" : " (not held)"}`
        }
        expect(load.acknowledged.length, `creates acknowledged in round ${round}`).toBeGreaterThan(
          ackedBefore
        )
        rounds.push(
          `${round} ${victim === 0 ? "A" : "B"}@${point}${released}, ${payments} paid, ` +
            `${Date.now() - roundStart} ms`
        )
        const restartAt = Date.now()
        restarting = pair.restart(victim).then(() => starts.push(Date.now() - restartAt))
        // Awaited next round; a start that fails while this test is failing anyway is not news.
        restarting.catch(() => {})
      }
      await restarting
    } finally {
      await load.stop()
      await Promise.all(cancelling)
    }
    console.info(
      `seed ${SEED}, ${ROUNDS} rounds in ${Date.now() - started} ms (restarts took ` +
        `${Math.min(...starts)} to ${Math.max(...starts)} ms), ${heldKills} killed with chain ` +
        `calls held:\n${rounds.join("\n")}`
    )
    expect(heldKills, "kills with the victim's chain calls held").toBeGreaterThan(0)
    const live = () => pair.pick()

    // Every create answered 201 is in the database: counted against the table.
    const stored = new Set(
      (await query<{ id: string }>("SELECT id FROM payments")).map((row) => row.id)
    )
    const lost = load.acknowledged.filter((id) => !stored.has(id))
    console.info(
      `creates: ${load.acknowledged.length} acknowledged, ${lost.length} lost, ` +
        `${load.cutOff} requests cut off by the kills, ${stored.size} payments stored; ` +
        `${load.cancelled.length} cancels acknowledged`
    )
    expect(lost).toEqual([])
    expect(load.refused).toEqual([])
    expect(load.cutOff, "requests cut off by the kills: the kills hit the load").toBeGreaterThan(0)

    // Chain work: every confirmed payment ends succeeded and settled...
    const views = await Promise.all(
      wallet.map((w) => waitForPayment(live, w.paymentId, isSettled, 60_000))
    )
    for (const view of views) {
      expect(view).toMatchObject({
        status: "succeeded",
        settlement: { settled: true, status: "settled", amount: { value: SETTLED.toString() } }
      })
    }
    // ...collected once from its buyer and settled once to the merchant, and still so through
    // a quiet period (a transfer sent again a moment later fails it).
    const moved = async () => ({
      collected: await Promise.all(
        wallet.map((w) => transfersOnChain(chain, w.buyer.address, chain.collector))
      ),
      settled: await transfersOnChain(chain, chain.collector, shop.destination)
    })
    await exactlyAfterQuiet(
      moved,
      { collected: wallet.map(() => [PAID]), settled: wallet.map(() => SETTLED) },
      { timeoutMs: 30_000, quietMs: 2_000, what: "collects per payment; settlements" }
    )
    const count = BigInt(wallet.length)
    expect(await Promise.all(wallet.map((w) => tokenBalance(chain, w.buyer.address)))).toEqual(
      wallet.map(() => FUNDS - PAID)
    )
    expect(await tokenBalance(chain, shop.destination)).toBe(count * SETTLED)
    expect(await tokenBalance(chain, chain.collector)).toBe(collectorBefore + count * FEES)
    // One transaction per collect and per settlement: no nonce used twice or spent otherwise.
    expect(await chain.client.getTransactionCount({ address: chain.collector })).toBe(
      nonceBefore + 2 * wallet.length
    )
    expect(new Set(views.map((v) => v.transaction.hash)).size).toBe(wallet.length)
    // A payment's events: one of each, in order, whichever instance wrote them.
    const paymentEvents = await query<{ payment_id: string; types: string }>(
      `SELECT payment_id, string_agg(type, ',' ORDER BY seq) AS types FROM events
       WHERE payment_id IS NOT NULL GROUP BY payment_id`
    )
    const typesOf = new Map(paymentEvents.map((row) => [row.payment_id, row.types]))
    expect(wallet.map((w) => [w.paymentId, typesOf.get(w.paymentId)])).toEqual(
      wallet.map((w) => [w.paymentId, "payment.processing,payment.succeeded,payment.settled"])
    )
    for (const id of load.cancelled) expect(typesOf.get(id), id).toBe("payment.cancelled")

    // Webhooks: every event recorded has its delivery, delivered, and the receiver answered it
    // 2xx at least once; waited for by the rows and the receiver's record.
    const events = await query<EventRow>(
      "SELECT id, type, payment_id, seq::text AS seq FROM events ORDER BY events.seq"
    )
    await eventually(
      async () => {
        const pending = await query<{ event_id: string; state: string }>(
          "SELECT event_id, state FROM webhook_deliveries WHERE state <> 'delivered'"
        )
        expect(pending, "deliveries not delivered yet").toEqual([])
        const answered = answeredOk(receiver)
        expect(events.filter((e) => !answered.has(e.id)).map((e) => e.id)).toEqual([])
      },
      { timeoutMs: 60_000, intervalMs: 200 }
    )
    const deliveries = await query<{ event_id: string }>("SELECT event_id FROM webhook_deliveries")
    expect(deliveries.map((d) => d.event_id).sort()).toEqual(events.map((e) => e.id).sort())
    // Nothing the engine did not record; each signed with the endpoint's secret, its body the
    // event its webhook-id names.
    const known = new Set(events.map((e) => e.id))
    expect(receiver.received.filter((r) => !known.has(r.id)).map((r) => r.id)).toEqual([])
    expect(receiver.received.filter((r) => r.verifiedBy.length !== 1).map((r) => r.id)).toEqual([])
    expect(receiver.received.filter((r) => r.event?.id !== r.id).map((r) => r.id)).toEqual([])
    // A payment's events first arrive in the order they were recorded: none went ahead of an
    // earlier one (missing at the receiver while it was being sent again).
    const firstArrival = new Map<string, number>()
    receiver.received.forEach((r, i) => {
      if (!firstArrival.has(r.id)) firstArrival.set(r.id, i)
    })
    const byPayment = new Map<string, Array<EventRow>>()
    for (const e of events) {
      if (e.payment_id !== null)
        byPayment.set(e.payment_id, [...(byPayment.get(e.payment_id) ?? []), e])
    }
    for (const [paymentId, recorded] of byPayment) {
      const arrived = [...recorded]
        .sort((a, b) => firstArrival.get(a.id)! - firstArrival.get(b.id)!)
        .map((e) => e.type)
      const inOrder = recorded.map((e) => e.type)
      // On a failure, what the engines logged about the payment and its events says why.
      const why = () =>
        [paymentId, ...recorded.map((e) => e.id)].flatMap((id) => pair.linesAbout(id)).join("\n")
      expect(arrived, arrived.join() === inOrder.join() ? paymentId : why()).toEqual(inOrder)
    }
    // Requests whose sender died before the receiver answered: the kills hit deliveries too.
    const cutOff = receiver.received.filter((r) => r.answered === null).length
    console.info(
      `chain: ${wallet.length} payments collected once and settled once; webhooks: ` +
        `${events.length} events, ${receiver.received.length} requests ` +
        `(${receiver.received.length - answeredOk(receiver).size} beyond one per event, ` +
        `${cutOff} cut off by the kills); ${Date.now() - started} ms in all`
    )
    expect(cutOff, "deliveries cut off by the kills").toBeGreaterThan(0)
    // Its own time: 79 s alone, 162 s and past 240 s in CI's release pass beside the packing
    // and the CLI's processes on two cores. Each wait inside has a bound of its own.
  }, 600_000)
})
