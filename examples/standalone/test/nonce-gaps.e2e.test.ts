/**
 * A chain behind the engine's nonces (issue 34), on PostgreSQL with two engine
 * processes and a real EVM in its own process: payments confirmed through
 * both instances are signed and sent, then every one of their transactions is
 * dropped from the node's pool before a block takes them (what an RPC failover
 * to a node that lost its pool looks like). The chain now expects the first of
 * those nonces while the database's sequence is past them all, so each
 * instance's next send is refused as "nonce too high" until what is missing
 * below it is sent again (core chainwork/NonceGaps.ts). The first nonce's
 * transaction is kept from the node (an RPC proxy holds its sends) until the
 * gap rule has been seen sending it again, so the rule is what the test meets,
 * whichever instance looks first. Exactly one transfer per
 * job: each payment collected once, by the very transaction first signed (sent
 * again as the same bytes, never signed anew), and settled once; no cancel, no
 * nonce skipped or used twice.
 */
import type { ChildProcess } from "node:child_process"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import type { Address, Hex } from "viem"
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
  removeSetup,
  requireChainWorkBundles,
  type Shop,
  startChain,
  startEngine,
  TEN_FIFTY,
  transfersOnChain,
  waitForPayment
} from "./chain-work-support.js"
import { eventually, exactlyAfterQuiet, type Json } from "./e2e-support.js"
import { type Instance, stopAll } from "./instances-support.js"
import { decodeRawTransaction, type RpcProxy, startRpcProxy } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
let chain: ChainProcess
let proxy: RpcProxy
let setup: EngineSetup
let A: Instance
let B: Instance
let shop: Shop

/** 10.50 USD in USDC; fees 0.10 + 1.5 % (core fees/Fees.ts), the rest settled. */
const { cents: CENTS, paid: PAID, settled: SETTLED } = TEN_FIFTY
const PAYMENTS = 6

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  proxy = await startRpcProxy(chain.rpcUrl)
  setup = engineSetup(chain, proxy, database)
  // One at a time: the first start makes the partner both use.
  A = await startEngine("A", setup, spawned)
  B = await startEngine("B", setup, spawned)
  shop = await openShop(A, setup, chain)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  if (setup) removeSetup(setup)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

/** The collector's mined transactions, in nonce order, read from the chain's blocks. */
const collectorTransactions = async (collector: Address) => {
  const head = await chain.client.getBlockNumber()
  const found: Array<{ readonly nonce: number; readonly hash: Hex; readonly to: Address | null }> =
    []
  for (let n = 0n; n <= head; n++) {
    const block = await chain.client.getBlock({ blockNumber: n, includeTransactions: true })
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() === collector.toLowerCase()) {
        found.push({ nonce: tx.nonce, hash: tx.hash, to: tx.to })
      }
    }
  }
  return found.sort((a, b) => a.nonce - b.nonce)
}

describe("a chain that lost the engine's transactions, two instances on PostgreSQL", () => {
  it("sends each lost transaction again as it was, in nonce order: one transfer per job", async () => {
    // Funded first: the faucet needs a chain that mines.
    const buyers: Array<Buyer> = []
    for (let i = 0; i <= PAYMENTS; i++) buyers.push(await fundedBuyer(chain, PAID))
    const startNonce = await chain.client.getTransactionCount({ address: chain.collector })
    await chain.rpc("evm_setAutomine", [false])
    const payments: Array<{ id: string; buyer: Buyer; via: Instance }> = []
    for (let i = 0; i < PAYMENTS; i++) {
      const via = i % 2 === 0 ? A : B
      const buyer = buyers[i]!
      const id = await createPayment(via, shop, CENTS)
      await confirmAsWallet(via, shop, id, buyer)
      payments.push({ id, buyer, via })
    }
    // Every collect signed, recorded and in the node's pool, none mined.
    const sent: Array<Json> = []
    for (const p of payments) {
      sent.push(
        await waitForPayment(
          () => p.via,
          p.id,
          (v) => v.transaction?.hash !== undefined
        )
      )
    }
    const nonces = sent.map((v) => v.transaction.nonce as number).sort((a, b) => a - b)
    expect(nonces).toEqual(Array.from({ length: PAYMENTS }, (_, i) => startNonce + i))
    for (const v of sent) {
      expect(await chain.rpc("eth_getTransactionByHash", [v.transaction.hash])).not.toBeNull()
    }
    // The first nonce's transaction is kept from the node for now, however often it is sent
    // (its own job's looks, or another's filling the gap), so every send above it meets the gap.
    const first = proxy.hold(
      (r) =>
        r.method === "eth_sendRawTransaction" &&
        decodeRawTransaction(r.params[0] as Hex).nonce === startNonce
    )
    // The node loses them all: it expects the first nonce again, the database is past them.
    for (const v of sent) {
      expect(await chain.rpc("hardhat_dropTransaction", [v.transaction.hash])).toBe(true)
    }
    expect(await chain.client.getTransactionCount({ address: chain.collector })).toBe(startNonce)
    await chain.rpc("evm_setAutomine", [true])

    // One more payment meanwhile: its nonce is past the whole gap.
    const late = buyers[PAYMENTS]!
    const lateId = await createPayment(B, shop, CENTS)
    await confirmAsWallet(B, shop, lateId, late)
    payments.push({ id: lateId, buyer: late, via: B })

    // A send above the gap was refused, and the gap's recorded transaction sent again (held).
    await eventually(
      async () => {
        expect(A.output() + B.output()).toMatch(
          /chain nonce gap: sending the recorded transaction again/
        )
        await first.waitForHeld(1)
      },
      { timeoutMs: 30_000 }
    )
    first.stop()
    await first.release("forward")

    const settled: Array<Json> = []
    for (const p of payments)
      settled.push(await waitForPayment(() => p.via, p.id, isSettled, 60_000))

    // Each collected by the transaction first signed for it, sent again as the same bytes.
    for (const [i, v] of sent.entries()) {
      expect(settled[i]!.status).toBe("succeeded")
      expect(settled[i]!.transaction.hash).toBe(v.transaction.hash)
    }
    // Exactly one transfer in per buyer and one settlement out per payment.
    for (const p of payments) {
      expect(await transfersOnChain(chain, p.buyer.address, chain.collector)).toEqual([PAID])
    }
    // Still so through the quiet period after the last settlement: no second settlement and
    // no other transaction of the collector's (a cancel, a resend at a new nonce) comes after.
    await exactlyAfterQuiet(
      async () => ({
        settled: await transfersOnChain(chain, chain.collector, shop.destination),
        collectorNonce: await chain.client.getTransactionCount({ address: chain.collector })
      }),
      { settled: payments.map(() => SETTLED), collectorNonce: startNonce + payments.length * 2 },
      { what: "settlements to the merchant; the collector's next nonce" }
    )
    // The collector's nonces from the start: each used once, none skipped, no cancel among them.
    const mined = (await collectorTransactions(chain.collector)).filter(
      (t) => t.nonce >= startNonce
    )
    expect(mined.map((t) => t.nonce)).toEqual(
      Array.from({ length: payments.length * 2 }, (_, i) => startNonce + i)
    )
    expect(mined.every((t) => t.to?.toLowerCase() === chain.token.address.toLowerCase())).toBe(true)
    const collectHashes = new Set(settled.map((v) => v.transaction.hash as string))
    const settleHashes = new Set(settled.map((v) => v.settlement.txHash as string))
    expect(new Set(mined.map((t) => t.hash))).toEqual(new Set([...collectHashes, ...settleHashes]))
  }, 180_000)
})
