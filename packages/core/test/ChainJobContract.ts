/**
 * The storage contract for durable chain work (chainwork/ChainJobStore.ts):
 * jobs queued in the payment change that wins, claims under leases that
 * fence every write, per-sender nonce sequences, recorded transfers, and the
 * settlement written when a job completes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { Address, Hex } from "viem"
import { AuditEntry, type AuditEntryId, cliActor } from "../src/audit/AuditEntry.js"
import { AuditStore } from "../src/audit/AuditStore.js"
import { auditEntryOf } from "../src/audit/NewAuditEntry.js"
import { ChainJobStore, type ReturnableFunds } from "../src/chainwork/ChainJobStore.js"
import { StorageProbe } from "../src/health/StorageProbe.js"
import { Partner, type PartnerId } from "../src/identity/Partner.js"
import { Merchant, type MerchantId } from "../src/merchants/Merchant.js"
import { MerchantStore } from "../src/merchants/MerchantStore.js"
import { PartnerStore } from "../src/partners/PartnerStore.js"
import type {
  BuyerTransfer,
  ChainJob,
  ChainJobId,
  ChainJobKind,
  ChainJobLease,
  ChainTransfer,
  ClaimedJob,
  NewChainJob
} from "../src/payments/ChainJob.js"
import { NOT_FAILING } from "../src/payments/ChainJob.js"
import type {
  Payment,
  PaymentFees,
  PaymentId,
  PaymentSettlement,
  PaymentStatus
} from "../src/payments/Payment.js"
import { applyChange, type PaymentChange } from "../src/payments/PaymentStateMachine.js"
import { PaymentStore } from "../src/payments/PaymentStore.js"
import type { Caip2, Caip10, Caip19 } from "../src/shared/Caip.js"
import { makeIdBody } from "../src/shared/Ids.js"
import { partnerKey } from "./KeyFixtures.js"

export type ChainJobStores =
  | PartnerStore
  | MerchantStore
  | PaymentStore
  | ChainJobStore
  | StorageProbe
  | AuditStore

const T0 = Date.UTC(2026, 3, 1)
const at = (ms: number) => new Date(T0 + ms)
const BASE = "eip155:8453" as Caip2
const ETH = "eip155:1" as Caip2
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
/** The network's own coin (CAIP-19 slip44:60). */
const ETH_BASE = "eip155:8453/slip44:60" as Caip19
const ETH_MAINNET = "eip155:1/slip44:60" as Caip19
const BUYER = "0x00000000000000000000000000000000000000b0" as Address
const MAX_UINT256 = 2n ** 256n - 1n
/** The network's deployer: a deploy job's sender, with a nonce sequence of its own. */
const DEPLOYER = "0x0000000000000000000000000000000000000De0" as Address
/** An ERC-6492 signature as a deploy job keeps it: factory, calldata, inner signature, magic suffix. */
const WRAPPED =
  `0x${"00".repeat(12)}${"fa".repeat(20)}${"c0".repeat(100)}${"6492".repeat(16)}` as Hex
const COLLECTOR = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as Address
const OTHER_COLLECTOR = "0x00000000000000000000000000000000000000C0" as Address
const DESTINATION = "eip155:8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0dEaD" as Caip10
const LEASE = 60_000

let seq = 0
const uniqueBody = () => {
  seq++
  return makeIdBody(T0).slice(0, 8) + String(seq).padStart(12, "0")
}

const setup = Effect.gen(function* () {
  const partner = new Partner({
    id: `ptnr_${uniqueBody()}` as PartnerId,
    name: "P",
    apiVersion: "2026-02-18",
    createdAt: at(0)
  })
  yield* (yield* PartnerStore).insert(partner, partnerKey(partner))
  const merchant = new Merchant({
    id: `mrch_${uniqueBody()}` as MerchantId,
    partnerId: partner.id,
    name: "M",
    email: null,
    iconUrl: null,
    status: "active",
    createdAt: at(0),
    updatedAt: at(0),
    deletedAt: null
  })
  yield* (yield* MerchantStore).insert(merchant)
  /** A stored payment in `status`. */
  const payment = (status: PaymentStatus = "processing", fields: Partial<Payment> = {}) =>
    Effect.gen(function* () {
      const p: Payment = {
        id: `pay_${uniqueBody()}` as PaymentId,
        partnerId: partner.id,
        merchantId: merchant.id,
        referenceId: `ORDER-${seq}`,
        amount: { unit: { kind: "token", asset: USDC_BASE }, value: 10_500_000n },
        status,
        failureCode: null,
        cancelledReason: null,
        expiresAt: at(300_000),
        createdAt: at(0),
        updatedAt: at(0),
        finalAt: null,
        checkout: null,
        tokenAmount: status === "requires_action" ? null : { asset: USDC_BASE, value: 10_500_000n },
        buyer:
          status === "requires_action"
            ? null
            : {
                account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
                providerName: "Wallet",
                providerIcon: null
              },
        transaction: null,
        txId: null,
        refund: null,
        fees: null,
        settlement: null,
        livemode: true,
        ...fields
      }
      yield* (yield* PaymentStore).insert(p)
      return p
    })
  return { partner, merchant, payment }
})

const aJob = (
  paymentId: PaymentId,
  kind: ChainJobKind = "collect",
  fields: Partial<NewChainJob> = {}
): NewChainJob => ({
  id: `cjob_${uniqueBody()}` as ChainJobId,
  paymentId,
  chainId: BASE,
  payload:
    kind === "settle"
      ? { kind: "settle", asset: USDC_BASE, amount: 10_458_000n }
      : { kind, optionId: `opt_${uniqueBody()}`, signature: `0x${"aB".repeat(65)}` },
  runAt: at(0),
  createdAt: at(0),
  ...fields
})

/** The job as it reads back right after it was queued. */
const queued = (job: NewChainJob): ChainJob => ({
  ...job,
  kind: job.payload.kind,
  state: "active",
  nonce: null,
  destination: null,
  ...NOT_FAILING,
  attempts: 0,
  lastError: null,
  updatedAt: job.createdAt
})

const aTransfer = (
  lease: ChainJobLease,
  nonce: number,
  createdAt: number,
  fields: Partial<ChainTransfer> = {}
): ChainTransfer => {
  const mark = (seq++).toString(16).padStart(8, "0")
  return {
    hash: `0x${"9f".repeat(28)}${mark}` as Hex,
    jobId: lease.jobId,
    chainId: BASE,
    sender: COLLECTOR,
    nonce,
    purpose: "call",
    to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    data: `0xe3ee160e${"00".repeat(32)}AbCd` as Hex,
    gas: 95_000n,
    value: 0n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
    raw: `0x02f8${"aB".repeat(120)}${mark}` as Hex,
    createdAt: at(createdAt),
    ...fields
  }
}

const fees: PaymentFees = { fixed: 10_000n, percentage: "0.3", total: 41_500n }
const pending: PaymentSettlement = {
  amount: 10_458_500n,
  status: "pending",
  destination: null,
  txHash: null,
  settledAt: null
}

/** The payment succeeded at 30 ms with `pending` settlement, its settle job queued: the job. */
const succeededWithSettleJob = (id: PaymentId) =>
  Effect.gen(function* () {
    const settle = aJob(id, "settle", { runAt: at(30), createdAt: at(30) })
    yield* (yield* PaymentStore).transition(id, "processing", {
      status: "succeeded",
      at: at(30),
      finalAt: at(30),
      txId: "0x1",
      fees,
      settlement: pending,
      enqueue: settle
    })
    return settle
  })

/** Fails the test unless `effect` failed with `ChainJobLeaseLost` for `lease`'s job. */
const expectLeaseLost = <A, E extends { readonly _tag: string }, R>(
  lease: ChainJobLease,
  effect: Effect.Effect<A, E, R>
) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error._tag).toBe("ChainJobLeaseLost")
    expect((error as unknown as { jobId: string }).jobId).toBe(lease.jobId)
  })

const ids = (claimed: ReadonlyArray<ClaimedJob>) => claimed.map((c) => c.job.id)

/**
 * What the runner does for a job without a nonce: reads the sender's next, then records a
 * transfer signed at it, which takes it. The nonce, or `NonceTaken`.
 */
const takeNext = (
  lease: ChainJobLease,
  chainId: Caip2,
  sender: Address,
  chainNext: number,
  createdAt: number
) =>
  Effect.gen(function* () {
    const jobs = yield* ChainJobStore
    const nonce = yield* jobs.nextNonce(chainId, sender, chainNext)
    yield* jobs.recordTransfer(lease, aTransfer(lease, nonce, createdAt, { chainId, sender }))
    return nonce
  })

/** Claims every job due at `now` (one each, a fresh lease), by job id. */
const claimAll = (now: Date) =>
  Effect.flatMap(ChainJobStore, (store) => store.claimDue(now, 1000, LEASE)).pipe(
    Effect.map((claimed) => new Map(claimed.map((c) => [c.job.id as string, c])))
  )

export const chainJobStorageContract = (
  name: string,
  layer: () => Layer.Layer<ChainJobStores, unknown>
) =>
  describe(`chain job storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, ChainJobStores>) =>
      it.effect(title, () => Effect.provide(body, layer()), 30_000)

    test(
      "the probe counts active and due jobs and finds the longest-due one; a done job leaves",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const probe = yield* StorageProbe
        expect(yield* probe.chainJobQueue(at(0))).toEqual({
          active: 0,
          due: 0,
          oldestDueAt: null,
          stuck: 0
        })
        const queue = (runAt: number) =>
          Effect.gen(function* () {
            const p = yield* payment("requires_action")
            yield* payments.transition(p.id, "requires_action", {
              status: "processing",
              at: at(runAt),
              finalAt: null,
              tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
              enqueue: aJob(p.id, "collect", { runAt: at(runAt), createdAt: at(runAt) })
            })
          })
        yield* queue(1_000)
        yield* queue(5_000)
        yield* queue(60_000)
        expect(yield* probe.chainJobQueue(at(500))).toEqual({
          active: 3,
          due: 0,
          oldestDueAt: null,
          stuck: 0
        })
        expect(yield* probe.chainJobQueue(at(10_000))).toEqual({
          active: 3,
          due: 2,
          oldestDueAt: at(1_000),
          stuck: 0
        })
        // The longest-due one claimed and done: the next is the oldest.
        const [claimed] = yield* jobs.claimDue(at(10_000), 1, LEASE)
        yield* jobs.complete(claimed!.lease, at(10_001))
        expect(yield* probe.chainJobQueue(at(10_000))).toEqual({
          active: 2,
          due: 1,
          oldestDueAt: at(5_000),
          stuck: 0
        })
        const migrations = yield* probe.migrations
        expect(migrations.latestApplied).toBe(
          migrations.known === 0 ? null : migrations.latestKnown
        )
      })
    )

    test(
      "a release keeps the job's failing steps: the probe counts from the first failure and names the stuck",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const probe = yield* StorageProbe
        const queue = (runAt: number) =>
          Effect.gen(function* () {
            const p = yield* payment("requires_action")
            const job = aJob(p.id, "collect", { runAt: at(runAt), createdAt: at(runAt) })
            yield* payments.transition(p.id, "requires_action", {
              status: "processing",
              at: at(runAt),
              finalAt: null,
              tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
              enqueue: job
            })
            return job
          })
        const failing = yield* queue(1_000)
        const stuck = yield* queue(2_000)
        const claimed = yield* claimAll(at(3_000))
        // Failing since 1.5 s, backing off until 60 s: not due, yet the oldest work.
        yield* jobs.release(
          claimed.get(failing.id)!.lease,
          at(60_000),
          "nonce too high",
          at(3_000),
          {
            failures: 4,
            failingSince: at(1_500),
            stuckSince: null
          }
        )
        yield* jobs.release(claimed.get(stuck.id)!.lease, at(70_000), "refused", at(3_000), {
          failures: 30,
          failingSince: at(2_500),
          stuckSince: at(2_900)
        })
        expect(yield* probe.chainJobQueue(at(4_000))).toEqual({
          active: 2,
          due: 0,
          oldestDueAt: at(1_500),
          stuck: 1
        })
        expect(yield* probe.stuckJobs(10)).toEqual([
          {
            id: stuck.id,
            kind: "collect",
            paymentId: stuck.paymentId,
            chainId: BASE,
            stuckSince: at(2_900),
            failingSince: at(2_500),
            failures: 30,
            lastError: "refused"
          }
        ])
        expect(yield* probe.stuckJobs(0)).toEqual([])
        // Read back with the job, as a claim gives it to the runner's back-off.
        const again = yield* claimAll(at(80_000))
        expect(again.get(stuck.id)!.job).toMatchObject({
          failures: 30,
          failingSince: at(2_500),
          stuckSince: at(2_900)
        })
        // A step that went through clears them all.
        yield* jobs.release(again.get(stuck.id)!.lease, at(90_000), null, at(80_000), NOT_FAILING)
        yield* jobs.release(again.get(failing.id)!.lease, at(90_000), null, at(80_000), NOT_FAILING)
        expect(yield* probe.chainJobQueue(at(80_000))).toEqual({
          active: 2,
          due: 0,
          oldestDueAt: null,
          stuck: 0
        })
        expect(yield* probe.stuckJobs(10)).toEqual([])
      })
    )

    test(
      "transfers at a nonce come with their jobs, whichever; a replacement is recorded only for a job that is over",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p1 = yield* payment("requires_action")
        const p2 = yield* payment("requires_action")
        for (const p of [p1, p2]) {
          yield* payments.transition(p.id, "requires_action", {
            status: "processing",
            at: at(10),
            finalAt: null,
            tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
            enqueue: aJob(p.id, "collect", { runAt: at(10), createdAt: at(10) })
          })
        }
        const claimed = [...(yield* claimAll(at(20))).values()]
        const chainNext = 7
        const [first, second] = claimed
        const n1 = yield* takeNext(first!.lease, BASE, COLLECTOR, chainNext, 21)
        const n2 = yield* takeNext(second!.lease, BASE, COLLECTOR, chainNext, 22)
        expect([n1, n2]).toEqual([7, 8])
        const at7 = yield* jobs.transfersAtNonce(BASE, COLLECTOR, 7)
        expect(at7.map((r) => [r.transfer.nonce, r.job.id, r.job.state])).toEqual([
          [7, first!.job.id, "active"]
        ])
        expect(at7[0]!.job.payload).toEqual(first!.job.payload)
        expect(yield* jobs.transfersAtNonce(BASE, COLLECTOR, 9)).toEqual([])
        expect(yield* jobs.transfersAtNonce(ETH, COLLECTOR, 7)).toEqual([])
        expect(yield* jobs.transfersAtNonce(BASE, OTHER_COLLECTOR, 7)).toEqual([])
        // While its job is active, the nonce is its holder's to replace.
        const cancel = aTransfer(first!.lease, 7, 30, { purpose: "cancel", data: "0x" as Hex })
        expect(yield* jobs.recordReplacement(cancel)).toBe(false)
        expect((yield* jobs.transfersAtNonce(BASE, COLLECTOR, 7)).length).toBe(1)
        yield* jobs.complete(first!.lease, at(40))
        expect(yield* jobs.recordReplacement(cancel)).toBe(true)
        const replaced = yield* jobs.transfersAtNonce(BASE, COLLECTOR, 7)
        expect(replaced.map((r) => [r.transfer.hash, r.transfer.purpose, r.job.state])).toEqual([
          [at7[0]!.transfer.hash, "call", "done"],
          [cancel.hash, "cancel", "done"]
        ])
        expect(replaced[1]!.transfer).toEqual(cancel)
      })
    )

    test(
      "a new run of a chain forgets its nonce sequence and recorded transactions; its active jobs are listed and ended once",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        expect(yield* jobs.chainInstance(BASE)).toEqual(Option.none())
        expect(yield* jobs.swapChainInstance(BASE, "run-1", at(0))).toEqual(Option.none())
        expect(yield* jobs.chainInstance(BASE)).toEqual(
          Option.some({ instance: "run-1", since: at(0) })
        )
        const p = yield* payment("requires_action")
        const job = aJob(p.id, "collect", { runAt: at(10), createdAt: at(10) })
        yield* payments.transition(p.id, "requires_action", {
          status: "processing",
          at: at(10),
          finalAt: null,
          tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
          enqueue: job
        })
        const [claimed] = yield* jobs.claimDue(at(20), 1, LEASE)
        expect(yield* takeNext(claimed!.lease, BASE, COLLECTOR, 5, 21)).toBe(5)
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(6)
        expect(yield* jobs.nextNonce(ETH, COLLECTOR, 0)).toBe(0)
        // The same run again: nothing forgotten.
        expect(yield* jobs.swapChainInstance(BASE, "run-1", at(30))).toEqual(
          Option.some({ instance: "run-1", since: at(0) })
        )
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(6)
        expect((yield* jobs.transfersAtNonce(BASE, COLLECTOR, 5)).length).toBe(1)
        // Another chain's sequence stays as it is.
        expect(yield* jobs.swapChainInstance(BASE, "run-2", at(40))).toEqual(
          Option.some({ instance: "run-1", since: at(0) })
        )
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(0)
        // Its transactions too: the new run may sign the same bytes, to the same hash, again.
        expect(yield* jobs.transfersAtNonce(BASE, COLLECTOR, 5)).toEqual([])
        expect(yield* jobs.transfersOf(job.id)).toEqual([])
        expect(yield* jobs.swapChainInstance(BASE, "run-2", at(50))).toEqual(
          Option.some({ instance: "run-2", since: at(40) })
        )
        expect(yield* jobs.chainInstance(BASE)).toEqual(
          Option.some({ instance: "run-2", since: at(40) })
        )
        expect(yield* jobs.chainInstance(ETH)).toEqual(Option.none())
        expect((yield* jobs.activeJobsOn(BASE)).map((j) => j.id)).toEqual([job.id])
        expect(yield* jobs.activeJobsOn(ETH)).toEqual([])
        // Ended whatever its lease (its holder worked on the earlier run).
        expect(yield* jobs.endJob(job.id, "the chain started afresh", at(60))).toBe(true)
        expect(yield* jobs.endJob(job.id, "the chain started afresh", at(61))).toBe(false)
        expect(yield* jobs.activeJobsOn(BASE)).toEqual([])
        const ended = Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))
        expect(ended).toMatchObject({ state: "done", lastError: "the chain started afresh" })
        expect(yield* jobs.claimDue(at(10_000_000), 10, LEASE)).toEqual([])
        yield* expectLeaseLost(claimed!.lease, jobs.renew(claimed!.lease, at(70), 10))
      })
    )

    test(
      "queues a job with the payment change that wins, and keeps the first of a kind",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p = yield* payment("requires_action")
        const collect = aJob(p.id, "collect", { runAt: at(10), createdAt: at(10) })
        const start: PaymentChange = {
          status: "processing",
          at: at(10),
          finalAt: null,
          tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
          enqueue: collect
        }
        // A change decided from a status the payment is not in queues nothing.
        expect(Option.isNone(yield* payments.transition(p.id, "processing", start))).toBe(true)
        expect(Option.isNone(yield* jobs.findByPayment(p.id, "collect"))).toBe(true)

        const started = yield* payments.transition(p.id, "requires_action", start)
        expect(Option.isSome(started)).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))).toEqual(
          queued(collect)
        )
        expect(Option.isNone(yield* jobs.findByPayment(p.id, "settle"))).toBe(true)

        // A second job of the kind with a change that applies: the change, not the job.
        const again = aJob(p.id, "collect", { runAt: at(20), createdAt: at(20) })
        const recorded = yield* payments.transition(p.id, "processing", {
          status: "processing",
          at: at(20),
          finalAt: null,
          transaction: { networkId: "8453", hash: `0x${"12".repeat(32)}`, nonce: 3 },
          enqueue: again
        })
        expect(Option.getOrThrow(recorded).transaction?.nonce).toBe(3)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))).toEqual(
          queued(collect)
        )

        // Success writes fees and settlement and queues the settle job, in one change.
        const settle = aJob(p.id, "settle", {
          runAt: at(30),
          createdAt: at(30),
          payload: { kind: "settle", asset: USDC_BASE, amount: MAX_UINT256 }
        })
        const succeed: PaymentChange = {
          status: "succeeded",
          at: at(30),
          finalAt: at(30),
          txId: `0x${"34".repeat(32)}`,
          fees,
          settlement: pending,
          enqueue: settle
        }
        const before = Option.getOrThrow(yield* payments.find(p.id))
        const succeeded = Option.getOrThrow(yield* payments.transition(p.id, "processing", succeed))
        expect(succeeded).toEqual(applyChange(before, succeed))
        expect(succeeded.fees).toEqual(fees)
        expect(succeeded.settlement).toEqual(pending)
        expect(Option.getOrThrow(yield* payments.find(p.id))).toEqual(succeeded)
        const stored = Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))
        expect(stored).toEqual(queued(settle))
        expect(stored.payload).toEqual({ kind: "settle", asset: USDC_BASE, amount: MAX_UINT256 })

        // Of two concurrent changes from one status, only the winner's job is queued.
        const q = yield* payment("requires_action")
        const rivals = [aJob(q.id), aJob(q.id)]
        const results = yield* Effect.all(
          rivals.map((job) =>
            payments.transition(q.id, "requires_action", { ...start, enqueue: job })
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Option.isSome)).toHaveLength(1)
        const winner = rivals[results.findIndex(Option.isSome)]!
        expect(Option.getOrThrow(yield* jobs.findByPayment(q.id, "collect"))).toEqual(
          queued(winner)
        )
        // Jobs of other payments are theirs alone.
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect")).id).toBe(collect.id)
      })
    )

    test(
      "claims due jobs only, oldest due first, up to the limit, each under a fresh token",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const queue = (runAt: number, kind: ChainJobKind = "collect") =>
          Effect.flatMap(payment(), (p) => {
            const job = aJob(p.id, kind, { runAt: at(runAt), createdAt: at(0) })
            return Effect.as(jobs.requeue(job, kind), job)
          })
        const late = yield* queue(3000)
        const first = yield* queue(1000, "settle")
        const second = yield* queue(2000)
        const future = yield* queue(10_000)
        const finished = yield* queue(500)

        // The finished one is claimed, completed, and never claimed again.
        const [done] = yield* jobs.claimDue(at(500), 1, LEASE)
        expect(done!.job.id).toBe(finished.id)
        yield* jobs.complete(done!.lease, at(600))

        const now = at(5000)
        const batch = yield* jobs.claimDue(now, 2, LEASE)
        expect(ids(batch)).toEqual([first.id, second.id])
        expect(batch[0]!.job).toEqual({ ...queued(first), attempts: 1, updatedAt: now })
        expect(batch[1]!.job).toEqual({ ...queued(second), attempts: 1, updatedAt: now })
        expect(batch.map((c) => c.lease.jobId)).toEqual([first.id, second.id])
        expect(batch.map((c) => c.transfers)).toEqual([[], []])

        const rest = yield* jobs.claimDue(now, 10, LEASE)
        expect(ids(rest)).toEqual([late.id])
        expect(yield* jobs.claimDue(now, 10, LEASE)).toEqual([])
        expect(yield* jobs.claimDue(at(9999), 10, LEASE)).toEqual([])
        const tokens = [...batch, ...rest].map((c) => c.lease.token)
        expect(new Set(tokens).size).toBe(3)
        expect(tokens.every((t) => typeof t === "string" && t.length >= 16)).toBe(true)

        const last = yield* jobs.claimDue(at(10_000), 10, LEASE)
        expect(ids(last)).toEqual([future.id])
        expect(yield* jobs.claimDue(at(10_000), 0, LEASE)).toEqual([])

        // Every claim counts one attempt and gives a new token.
        const after = yield* jobs.claimDue(at(5000 + LEASE), 10, LEASE)
        expect(ids(after)).toEqual([first.id, second.id, late.id])
        expect(after.map((c) => c.job.attempts)).toEqual([2, 2, 2])
        expect(after.every((c) => !tokens.includes(c.lease.token))).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(finished.paymentId, "collect"))).toEqual(
          { ...queued(finished), attempts: 1, state: "done", updatedAt: at(600) }
        )
      })
    )

    test(
      "keeps an operator's release on a settle job's payload; a requeue without it drops it",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const p = yield* payment()
        const released = aJob(p.id, "settle", {
          payload: { kind: "settle", asset: USDC_BASE, amount: 10_458_000n, release: true }
        })
        expect(yield* jobs.requeue(released, "settle")).toBe(true)
        const stored = yield* jobs.findByPayment(p.id, "settle")
        expect(Option.getOrThrow(stored).payload).toEqual(released.payload)
        const claimed = (yield* jobs.claimDue(at(0), 5, LEASE)).find(
          (c) => c.job.id === released.id
        )
        expect(claimed?.job.payload).toEqual(released.payload)
        yield* jobs.complete(claimed!.lease, at(1))

        const plain = aJob(p.id, "settle")
        expect(yield* jobs.requeue(plain, "settle")).toBe(true)
        const again = Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))
        expect(again.payload).toEqual(plain.payload)
        expect("release" in again.payload).toBe(false)
      })
    )

    test(
      "keeps an operator's destination override on the payload, its audit entry written only with the queueing",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const audit = yield* AuditStore
        const p = yield* payment()
        const destination = "eip155:8453:0x00000000000000000000000000000000000000E1" as Caip10
        const redirected = aJob(p.id, "settle", {
          payload: {
            kind: "settle",
            asset: USDC_BASE,
            amount: 10_458_000n,
            release: true,
            destination
          }
        })
        const entry = auditEntryOf(
          { id: `aud_${makeIdBody(at(0).getTime())}` as AuditEntryId, at: at(0) },
          {
            partnerId: p.partnerId,
            actor: cliActor,
            action: "payment.settlement_redirected",
            subject: p.id,
            merchantId: p.merchantId,
            before: { destination: null },
            after: { destination }
          }
        )
        expect(yield* jobs.requeue(redirected, "settle", [entry])).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle")).payload).toEqual(
          redirected.payload
        )
        const listed = yield* audit.list({ partnerId: p.partnerId, limit: 10 })
        expect(listed.map((e) => [e.action, e.subject, e.after])).toEqual([
          ["payment.settlement_redirected", p.id, { destination }]
        ])
        // Still active: not queued again, and nothing more recorded.
        const second = { ...entry, id: `aud_${makeIdBody(at(1).getTime())}` as AuditEntryId }
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle", [new AuditEntry(second)])).toBe(
          false
        )
        expect(yield* audit.list({ partnerId: p.partnerId, limit: 10 })).toHaveLength(1)
      })
    )

    test(
      "keeps a live lease; once it runs out another claim takes the job and fences out the old holder",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const p = yield* payment()
        const job = aJob(p.id, "settle")
        expect(yield* jobs.requeue(job, "settle")).toBe(true)

        const [old] = yield* jobs.claimDue(at(0), 5, 1000)
        expect(yield* jobs.claimDue(at(999), 5, 1000)).toEqual([])
        // A renewed lease lasts from the renewal.
        yield* jobs.renew(old!.lease, at(900), 1000)
        expect(yield* jobs.claimDue(at(1899), 5, 1000)).toEqual([])
        const [taken] = yield* jobs.claimDue(at(1900), 5, 1000)
        expect(taken!.job.id).toBe(job.id)
        expect(taken!.job.attempts).toBe(2)
        expect(taken!.lease.token).not.toBe(old!.lease.token)
        const stored = Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))

        const lease = old!.lease
        yield* expectLeaseLost(lease, jobs.renew(lease, at(1901), 1000))
        yield* expectLeaseLost(lease, jobs.release(lease, at(1901), "late", at(1901), NOT_FAILING))
        yield* expectLeaseLost(lease, jobs.recordTransfer(lease, aTransfer(lease, 0, 1901)))
        yield* expectLeaseLost(lease, jobs.dropNonce(lease, at(1901)))
        yield* expectLeaseLost(lease, jobs.setDestination(lease, DESTINATION, at(1901)))
        yield* expectLeaseLost(
          lease,
          jobs.complete(lease, at(1901), {
            paymentId: p.id,
            settlement: { ...pending, status: "settled" }
          })
        )
        // A lease that never was: a job that does not exist, a made-up token.
        const ghost: ChainJobLease = {
          jobId: "cjob_00000000000000000000" as ChainJobId,
          token: "nope"
        }
        yield* expectLeaseLost(ghost, jobs.renew(ghost, at(1901), 1000))
        const forged: ChainJobLease = { jobId: job.id, token: "not-a-token" }
        yield* expectLeaseLost(forged, jobs.setDestination(forged, DESTINATION, at(1901)))

        // Nothing the old holder tried changed anything.
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))).toEqual(stored)
        expect(yield* jobs.transfersOf(job.id)).toEqual([])
        expect(Option.getOrThrow(yield* (yield* PaymentStore).find(p.id)).settlement).toBeNull()
        expect(yield* jobs.claimDue(at(2899), 5, 1000)).toEqual([])

        // The new holder writes; a released job waits for its time, its note kept.
        const held = taken!.lease
        yield* jobs.renew(held, at(1950), 1000)
        yield* jobs.setDestination(held, DESTINATION, at(1960))
        yield* jobs.release(held, at(5000), "node unreachable", at(1970), NOT_FAILING)
        yield* expectLeaseLost(held, jobs.renew(held, at(1980), 1000))
        expect(yield* jobs.claimDue(at(4999), 5, 1000)).toEqual([])
        const [third] = yield* jobs.claimDue(at(5000), 5, 1000)
        expect(third!.job).toEqual({
          ...queued(job),
          runAt: at(5000),
          destination: DESTINATION,
          lastError: "node unreachable",
          attempts: 3,
          updatedAt: at(5000)
        })
        yield* jobs.release(third!.lease, at(5000), null, at(5001), NOT_FAILING)
        const [fourth] = yield* jobs.claimDue(at(5002), 5, 1000)
        expect(fourth!.job.lastError).toBeNull()
        expect(fourth!.job.attempts).toBe(4)
      })
    )

    test(
      "never hands one job to two concurrent claimers",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const queuedIds = yield* Effect.forEach(Array.from({ length: 16 }), (_, i) =>
          Effect.flatMap(payment(), (p) => {
            const job = aJob(p.id, "collect", { runAt: at(i % 4) })
            return Effect.as(jobs.requeue(job, "collect"), job.id as string)
          })
        )
        const seen: Array<string> = []
        for (let round = 0; round < 20; round++) {
          const claims = yield* Effect.all(
            Array.from({ length: 6 }, () => jobs.claimDue(at(100), 3, LEASE)),
            { concurrency: "unbounded" }
          )
          const claimed = claims.flat()
          if (claimed.length === 0) break
          seen.push(...ids(claimed))
        }
        expect(new Set(seen).size).toBe(seen.length)
        expect([...seen].sort()).toEqual([...queuedIds].sort())
      })
    )

    test(
      "hands out nonces per chain and sender, once each, recovering from the chain's count",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const queuedJobs: Array<NewChainJob> = []
        for (let i = 0; i < 8; i++) {
          const p = yield* payment()
          const job = aJob(p.id, "collect", { runAt: at(i) })
          yield* jobs.requeue(job, "collect")
          queuedJobs.push(job)
        }
        const claimed = yield* claimAll(at(100))
        const [A, B, C, D, E, F, G, H] = queuedJobs.map((job) => claimed.get(job.id)!.lease) as [
          ChainJobLease,
          ChainJobLease,
          ChainJobLease,
          ChainJobLease,
          ChainJobLease,
          ChainJobLease,
          ChainJobLease,
          ChainJobLease
        ]
        const findJob = (lease: ChainJobLease) =>
          Effect.map(
            jobs.findByPayment(queuedJobs.find((j) => j.id === lease.jobId)!.paymentId, "collect"),
            Option.getOrThrow
          )

        // The sequence starts at the chain's count and counts up.
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 5)).toBe(5)
        expect(yield* takeNext(A, BASE, COLLECTOR, 5, 101)).toBe(5)
        expect(yield* takeNext(B, BASE, COLLECTOR, 0, 101)).toBe(6)
        // Reading takes nothing.
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(7)
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(7)
        // A job's further transfers are at the nonce it holds, and take none.
        yield* jobs.recordTransfer(A, aTransfer(A, 5, 102))
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(7)
        // Raised to the chain's count when the stored sequence is behind it.
        expect(yield* takeNext(C, BASE, COLLECTOR, 20, 101)).toBe(20)
        // Never lowered by a chain count behind it.
        expect(yield* takeNext(D, BASE, COLLECTOR, 3, 101)).toBe(21)
        // Separate sequences per chain and per sender.
        expect(yield* takeNext(E, ETH, COLLECTOR, 0, 101)).toBe(0)
        expect(yield* takeNext(F, BASE, OTHER_COLLECTOR, 2, 101)).toBe(2)
        expect((yield* findJob(A)).nonce).toBe(5)
        expect((yield* findJob(A)).updatedAt).toEqual(at(101))
        expect((yield* findJob(F)).nonce).toBe(2)

        // Two jobs that read the same next nonce: the first to record takes it; the second's
        // record is refused whole (no nonce, no transfer) and it signs again at the next.
        const next = yield* jobs.nextNonce(BASE, COLLECTOR, 0)
        yield* jobs.recordTransfer(G, aTransfer(G, next, 103))
        const late = aTransfer(H, next, 103)
        const refused = yield* Effect.flip(jobs.recordTransfer(H, late))
        expect(refused._tag).toBe("NonceTaken")
        expect((yield* findJob(H)).nonce).toBeNull()
        expect(yield* jobs.transfersOf(H.jobId)).toEqual([])
        expect(yield* takeNext(H, BASE, COLLECTOR, 0, 104)).toBe(next + 1)

        // A dropped nonce is gone: the next one is new.
        yield* jobs.dropNonce(A, at(105))
        expect((yield* findJob(A)).nonce).toBeNull()
        expect((yield* findJob(A)).updatedAt).toEqual(at(105))
        expect(yield* takeNext(A, BASE, COLLECTOR, 0, 106)).toBe(next + 2)
        expect((yield* findJob(A)).nonce).toBe(next + 2)

        // A released and reclaimed job keeps its nonce and its transfers at it.
        yield* jobs.release(B, at(101), null, at(101), NOT_FAILING)
        const [again] = yield* jobs.claimDue(at(101), 1, LEASE)
        expect(again!.job.id).toBe(B.jobId)
        expect(again!.job.nonce).toBe(6)
        expect(again!.transfers.map((t) => t.nonce)).toEqual([6])
      })
    )

    test(
      "never hands one nonce to two jobs, also when they ask at once",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        for (let i = 0; i < 12; i++) {
          const p = yield* payment()
          yield* jobs.requeue(aJob(p.id, "collect", { runAt: at(i) }), "collect")
        }
        const claimed = [...(yield* claimAll(at(100))).values()]
        expect(claimed).toHaveLength(12)
        // Every job reads and records at once, signing again at the next after a refusal.
        const nonces = yield* Effect.all(
          claimed.map((c) =>
            Effect.gen(function* () {
              for (;;) {
                const taken = yield* Effect.either(takeNext(c.lease, BASE, COLLECTOR, 100, 200))
                if (taken._tag === "Right") return taken.right
                expect(taken.left._tag).toBe("NonceTaken")
              }
            })
          ),
          { concurrency: "unbounded" }
        )
        expect([...nonces].sort((x, y) => x - y)).toEqual(
          Array.from({ length: 12 }, (_, i) => 100 + i)
        )
        // One transfer per job, at the nonce it holds; the sequence moved by one per job.
        for (const [i, c] of claimed.entries()) {
          const recorded = yield* jobs.transfersOf(c.job.id)
          expect(recorded.map((t) => t.nonce)).toEqual([nonces[i]])
        }
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(112)
      })
    )

    test(
      "records transfers: a claim lists its current nonce's, oldest first; every one kept exactly",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const p = yield* payment()
        const job = aJob(p.id, "settle")
        yield* jobs.requeue(job, "settle")
        const [first] = yield* jobs.claimDue(at(10), 1, LEASE)
        const lease = first!.lease
        const nonce = yield* jobs.nextNonce(BASE, COLLECTOR, 7)
        // uint256 at its widest in every number; hex case kept as given.
        const call = aTransfer(lease, nonce, 20, {
          gas: MAX_UINT256,
          maxFeePerGas: MAX_UINT256 - 1n,
          maxPriorityFeePerGas: 2n ** 128n + 1n
        })
        const replacement = aTransfer(lease, nonce, 30, { maxFeePerGas: 3_000_000_000n })
        const cancel = aTransfer(lease, nonce, 25, {
          purpose: "cancel",
          to: COLLECTOR,
          data: "0x",
          gas: 21_000n
        })
        // Recorded out of time order: read back oldest first.
        yield* jobs.recordTransfer(lease, replacement)
        yield* jobs.recordTransfer(lease, call)
        yield* jobs.recordTransfer(lease, cancel)
        // The same signed transaction recorded again changes nothing.
        yield* jobs.recordTransfer(lease, call)
        expect(yield* jobs.transfersOf(job.id)).toEqual([call, cancel, replacement])

        yield* jobs.release(lease, at(40), null, at(40), NOT_FAILING)
        const [second] = yield* jobs.claimDue(at(40), 1, LEASE)
        expect(second!.transfers).toEqual([call, cancel, replacement])
        const widest = second!.transfers[0]!
        expect(widest.gas).toBe(MAX_UINT256)
        expect(widest.maxFeePerGas).toBe(MAX_UINT256 - 1n)
        expect(widest.maxPriorityFeePerGas).toBe(2n ** 128n + 1n)
        expect(widest.sender).toBe(COLLECTOR)
        expect(widest.data).toBe(call.data)

        // The nonce taken by another transaction: the job's next transfers are of a new one.
        yield* jobs.dropNonce(second!.lease, at(41))
        const renewed = yield* jobs.nextNonce(BASE, COLLECTOR, 0)
        expect(renewed).toBe(nonce + 1)
        const retry = aTransfer(second!.lease, renewed, 50)
        yield* jobs.recordTransfer(second!.lease, retry)
        yield* jobs.release(second!.lease, at(60), null, at(60), NOT_FAILING)
        const [third] = yield* jobs.claimDue(at(60), 1, LEASE)
        expect(third!.transfers).toEqual([retry])
        expect(yield* jobs.transfersOf(job.id)).toEqual([call, cancel, replacement, retry])

        // No nonce, no current transfers; other jobs see none of these.
        yield* jobs.dropNonce(third!.lease, at(61))
        yield* jobs.release(third!.lease, at(62), null, at(62), NOT_FAILING)
        const [fourth] = yield* jobs.claimDue(at(62), 1, LEASE)
        expect(fourth!.transfers).toEqual([])
        expect(yield* jobs.transfersOf("cjob_00000000000000000000" as ChainJobId)).toEqual([])
      })
    )

    test(
      "records a collect's transaction on the payment with its transfer, only while processing",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p = yield* payment("processing")
        yield* jobs.requeue(aJob(p.id, "collect"), "collect")
        const [claimed] = yield* jobs.claimDue(at(10), 1, LEASE)
        const lease = claimed!.lease
        const before = Option.getOrThrow(yield* payments.find(p.id))
        const transfer = aTransfer(lease, 3, 20)
        const transaction = { networkId: "8453", hash: transfer.hash, nonce: 3 }
        yield* jobs.recordTransfer(lease, transfer, { id: p.id, transaction, at: at(21) })
        expect(Option.getOrThrow(yield* payments.find(p.id))).toEqual({
          ...before,
          transaction,
          updatedAt: at(21)
        })
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect")).nonce).toBe(3)

        // Not while the payment is in another status; nor by a holder whose lease is gone.
        const q = yield* payment("failed")
        yield* jobs.requeue(aJob(q.id, "collect"), "collect")
        const [other] = yield* jobs.claimDue(at(30), 1, LEASE)
        const late = aTransfer(other!.lease, 4, 31)
        const failedBefore = Option.getOrThrow(yield* payments.find(q.id))
        yield* jobs.recordTransfer(other!.lease, late, {
          id: q.id,
          transaction: { networkId: "8453", hash: late.hash, nonce: 4 },
          at: at(31)
        })
        expect(Option.getOrThrow(yield* payments.find(q.id))).toEqual(failedBefore)
        yield* jobs.complete(lease, at(40))
        const gone = aTransfer(lease, 3, 41)
        yield* expectLeaseLost(
          lease,
          jobs.recordTransfer(lease, gone, {
            id: p.id,
            transaction: { networkId: "8453", hash: gone.hash, nonce: 3 },
            at: at(41)
          })
        )
        expect(Option.getOrThrow(yield* payments.find(p.id)).transaction).toEqual(transaction)
      })
    )

    test(
      "a change that ends a held job and queues the next one held, with its transfer: one write, all or nothing",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const succeedWith = (
          ends: ChainJobLease,
          settle: NewChainJob,
          nonce: number
        ): PaymentChange => {
          const lease = { jobId: settle.id, token: `held-${settle.id}` }
          return {
            status: "succeeded",
            at: at(50),
            finalAt: at(50),
            txId: `0x${"34".repeat(32)}`,
            fees,
            settlement: pending,
            completes: ends,
            enqueue: {
              ...settle,
              held: {
                lease,
                leaseUntil: at(50 + LEASE),
                destination: DESTINATION,
                transfer: aTransfer(lease, nonce, 50)
              }
            }
          }
        }
        const collectOf = (p: Payment) =>
          Effect.gen(function* () {
            yield* jobs.requeue(aJob(p.id, "collect", { runAt: at(1) }), "collect")
            const [claimed] = yield* jobs.claimDue(at(10), 1, LEASE)
            return claimed!.lease
          })

        const p = yield* payment("processing")
        const collect = yield* collectOf(p)
        const settle = aJob(p.id, "settle", { runAt: at(50), createdAt: at(50) })
        const nonce = yield* jobs.nextNonce(BASE, COLLECTOR, 9)
        const change = succeedWith(collect, settle, nonce)
        const written = yield* payments.transition(p.id, "processing", change)
        expect(Option.getOrThrow(written)).toEqual(applyChange(p, change))
        // The collect job is over; the settle job is held, its nonce taken, its transfer in.
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect")).state).toBe("done")
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))).toEqual({
          ...queued(settle),
          attempts: 1,
          nonce,
          destination: DESTINATION
        })
        expect(yield* jobs.transfersOf(settle.id)).toEqual([change.enqueue!.held!.transfer])
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(nonce + 1)
        // Held: not claimable until its lease runs out, and its lease fences writes.
        const held = change.enqueue!.held!.lease
        expect(yield* jobs.claimDue(at(50 + LEASE - 1), 5, LEASE)).toEqual([])
        yield* jobs.renew(held, at(60), LEASE)
        yield* expectLeaseLost(collect, jobs.renew(collect, at(60), LEASE))
        const [taken] = yield* jobs.claimDue(at(60 + LEASE), 5, LEASE)
        expect(taken!.job.id).toBe(settle.id)
        expect(taken!.transfers).toEqual([change.enqueue!.held!.transfer])

        // The nonce taken meanwhile: nothing written, the payment still processing, the collect
        // job still held, no settle job.
        const q = yield* payment("processing")
        const qCollect = yield* collectOf(q)
        const qSettle = aJob(q.id, "settle", { runAt: at(50), createdAt: at(50) })
        const refused = yield* Effect.flip(
          payments.transition(q.id, "processing", succeedWith(qCollect, qSettle, nonce))
        )
        expect(refused._tag).toBe("NonceTaken")
        expect(Option.getOrThrow(yield* payments.find(q.id))).toEqual(q)
        expect(Option.isNone(yield* jobs.findByPayment(q.id, "settle"))).toBe(true)
        expect(yield* jobs.transfersOf(qSettle.id)).toEqual([])
        yield* jobs.renew(qCollect, at(70), LEASE)

        // The collect job's lease lost: nothing written either.
        const forged = { jobId: qCollect.jobId, token: "not-a-token" }
        yield* expectLeaseLost(
          forged,
          payments.transition(q.id, "processing", succeedWith(forged, qSettle, nonce + 1))
        )
        expect(Option.getOrThrow(yield* payments.find(q.id))).toEqual(q)
        expect(Option.isNone(yield* jobs.findByPayment(q.id, "settle"))).toBe(true)
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(nonce + 1)

        // With its own lease and a free nonce it goes through.
        const ok = yield* payments.transition(
          q.id,
          "processing",
          succeedWith(qCollect, qSettle, nonce + 1)
        )
        expect(Option.getOrThrow(ok).status).toBe("succeeded")
        expect(Option.getOrThrow(yield* jobs.findByPayment(q.id, "settle")).nonce).toBe(nonce + 1)
      })
    )

    test(
      "completes a job, writing the payment's settlement with it",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p = yield* payment("processing")
        const settle = yield* succeededWithSettleJob(p.id)
        const before = Option.getOrThrow(yield* payments.find(p.id))
        const [claimed] = yield* jobs.claimDue(at(40), 5, LEASE)
        expect(claimed!.job.id).toBe(settle.id)
        yield* jobs.setDestination(claimed!.lease, DESTINATION, at(41))
        const settled: PaymentSettlement = {
          amount: 10_458_500n,
          status: "settled",
          destination: DESTINATION,
          txHash: `0x${"Ab".repeat(32)}`,
          settledAt: at(45)
        }
        yield* jobs.complete(claimed!.lease, at(46), { paymentId: p.id, settlement: settled })
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))).toEqual({
          ...queued(settle),
          state: "done",
          attempts: 1,
          destination: DESTINATION,
          updatedAt: at(46)
        })
        expect(Option.getOrThrow(yield* payments.find(p.id))).toEqual({
          ...before,
          settlement: settled
        })
        // Done: never claimed again, and its lease is over.
        expect(yield* jobs.claimDue(at(10 * LEASE), 5, LEASE)).toEqual([])
        yield* expectLeaseLost(claimed!.lease, jobs.renew(claimed!.lease, at(47), LEASE))
        yield* expectLeaseLost(claimed!.lease, jobs.complete(claimed!.lease, at(47)))

        // Without a settlement, the payment is left as it is.
        const q = yield* payment("processing", { fees, settlement: pending })
        yield* jobs.requeue(aJob(q.id, "collect"), "collect")
        const [collect] = yield* jobs.claimDue(at(50), 5, LEASE)
        yield* jobs.complete(collect!.lease, at(51))
        expect(Option.getOrThrow(yield* payments.find(q.id)).settlement).toEqual(pending)
        expect(Option.getOrThrow(yield* jobs.findByPayment(q.id, "collect")).state).toBe("done")
      })
    )

    test(
      "keeps a held settlement held until its settle job is queued again, then pending",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p = yield* payment("processing")
        const settle = yield* succeededWithSettleJob(p.id)
        const [claimed] = yield* jobs.claimDue(at(40), 5, LEASE)
        expect(claimed!.job.id).toBe(settle.id)
        const held: PaymentSettlement = { ...pending, status: "held" }
        yield* jobs.complete(claimed!.lease, at(41), { paymentId: p.id, settlement: held })
        expect(Option.getOrThrow(yield* payments.find(p.id)).settlement).toEqual(held)
        // Queued again (the merchant active again, or the operator): on its way.
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(true)
        expect(Option.getOrThrow(yield* payments.find(p.id)).settlement).toEqual(pending)
        // A requeue refused (the job is active) changes nothing.
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(false)
        expect(Option.getOrThrow(yield* payments.find(p.id)).settlement).toEqual(pending)

        // Inserted and transitioned held, it reads back held too.
        const q = yield* payment("succeeded", { fees, settlement: held })
        expect(Option.getOrThrow(yield* payments.find(q.id)).settlement).toEqual(held)
        const r = yield* payment("processing")
        yield* payments.transition(r.id, "processing", {
          status: "succeeded",
          at: at(30),
          finalAt: at(30),
          txId: "0x2",
          fees,
          settlement: held
        })
        expect(Option.getOrThrow(yield* payments.find(r.id)).settlement).toEqual(held)
      })
    )

    test(
      "requeues a job only when the payment has no active one of its kind",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const p = yield* payment("succeeded")
        expect(Option.isNone(yield* jobs.findByPayment(p.id, "settle"))).toBe(true)
        const first = aJob(p.id, "settle", { runAt: at(5), createdAt: at(5) })
        expect(yield* jobs.requeue(first, "settle")).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))).toEqual(queued(first))
        expect(Option.isNone(yield* jobs.findByPayment(p.id, "collect"))).toBe(true)
        // Active (waiting, then claimed): refused, the first kept as it is.
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(false)
        const [claimed] = yield* jobs.claimDue(at(10), 5, LEASE)
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(false)
        const lease = claimed!.lease
        yield* jobs.setDestination(lease, DESTINATION, at(11))
        yield* takeNext(lease, BASE, COLLECTOR, 4, 13)
        yield* jobs.release(lease, at(20), "reverted", at(14), NOT_FAILING)
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(false)
        const [again] = yield* jobs.claimDue(at(20), 5, LEASE)
        yield* jobs.complete(again!.lease, at(21))

        // Done: made active again, due at once, without its nonce; its transfers kept.
        const retry = aJob(p.id, "settle", {
          runAt: at(100),
          createdAt: at(100),
          payload: { kind: "settle", asset: USDC_BASE, amount: MAX_UINT256 }
        })
        expect(yield* jobs.requeue(retry, "settle")).toBe(true)
        const reactivated = Option.getOrThrow(yield* jobs.findByPayment(p.id, "settle"))
        expect(reactivated.id).toBe(first.id)
        expect(reactivated.state).toBe("active")
        expect(reactivated.nonce).toBeNull()
        expect(reactivated.runAt).toEqual(at(100))
        expect(reactivated.payload).toEqual(retry.payload)
        expect(reactivated.createdAt).toEqual(first.createdAt)
        expect(reactivated.attempts).toBe(2)
        expect(yield* jobs.requeue(aJob(p.id, "settle"), "settle")).toBe(false)
        expect(yield* jobs.claimDue(at(99), 5, LEASE)).toEqual([])
        const [third] = yield* jobs.claimDue(at(100), 5, LEASE)
        expect(third!.job.id).toBe(first.id)
        expect(third!.job.attempts).toBe(3)
        expect(third!.transfers).toEqual([])
        expect(yield* jobs.transfersOf(first.id)).toHaveLength(1)
        // The old holder of the done job is fenced out for good.
        yield* expectLeaseLost(again!.lease, jobs.renew(again!.lease, at(101), LEASE))

        // A kind the payment has no job of is queued beside the other.
        const collect = aJob(p.id, "collect", { runAt: at(200), createdAt: at(200) })
        expect(yield* jobs.requeue(collect, "collect")).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))).toEqual(
          queued(collect)
        )
      })
    )

    test(
      "a deploy job round-trips beside the same payment's collect job, each on its own sender's nonces",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const p = yield* payment("requires_action")
        const optionId = `opt_${uniqueBody()}`
        // Queued by the confirm, as a collect job is for an account already deployed.
        const deploy = aJob(p.id, "deploy", {
          runAt: at(10),
          createdAt: at(10),
          payload: { kind: "deploy", optionId, signature: WRAPPED }
        })
        const started = yield* payments.transition(p.id, "requires_action", {
          status: "processing",
          at: at(10),
          finalAt: null,
          tokenAmount: { asset: USDC_BASE, value: 10_500_000n },
          enqueue: deploy
        })
        expect(Option.isSome(started)).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "deploy"))).toEqual(queued(deploy))
        expect(Option.isNone(yield* jobs.findByPayment(p.id, "collect"))).toBe(true)

        // Claimed and run: its factory call taken from the deployer's sequence, not the collector's.
        const [claimed] = yield* jobs.claimDue(at(10), 1, LEASE)
        expect(claimed!.job).toMatchObject({
          id: deploy.id,
          kind: "deploy",
          payload: deploy.payload
        })
        const lease = claimed!.lease
        expect(yield* takeNext(lease, BASE, DEPLOYER, 0, 12)).toBe(0)
        expect(yield* jobs.nextNonce(BASE, DEPLOYER, 0)).toBe(1)
        // The collector's sequence is its own: the deployer's nonce 0 took nothing of it.
        expect(yield* jobs.nextNonce(BASE, COLLECTOR, 0)).toBe(0)
        const [atDeployer] = yield* jobs.transfersAtNonce(BASE, DEPLOYER, 0)
        expect(atDeployer!.job.id).toBe(deploy.id)
        expect(atDeployer!.transfer.sender).toBe(DEPLOYER)

        // The account deployed: the collect job queued beside it with the same signature.
        const collect = aJob(p.id, "collect", {
          runAt: at(20),
          createdAt: at(20),
          payload: { kind: "collect", optionId, signature: WRAPPED }
        })
        expect(yield* jobs.requeue(collect, "collect")).toBe(true)
        expect(yield* jobs.requeue(aJob(p.id, "collect"), "collect")).toBe(false)
        yield* jobs.complete(lease, at(21))
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "deploy"))).toMatchObject({
          state: "done",
          kind: "deploy",
          payload: deploy.payload
        })
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))).toEqual(
          queued(collect)
        )
        const [next] = yield* jobs.claimDue(at(30), 5, LEASE)
        expect(next!.job.id).toBe(collect.id)
        expect(next!.job.payload).toEqual(collect.payload)
        expect((yield* jobs.transfersOf(deploy.id)).map((t) => [t.sender, t.nonce])).toEqual([
          [DEPLOYER, 0]
        ])
      })
    )

    test(
      "keeps a transfer's value (the coin it sends) exactly, past 2^64, however it is recorded",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const coin = 2n ** 64n + 123n
        const p = yield* payment()
        const job = aJob(p.id, "settle", {
          payload: { kind: "settle", asset: ETH_BASE, amount: coin }
        })
        yield* jobs.requeue(job, "settle")
        const [first] = yield* jobs.claimDue(at(10), 1, LEASE)
        const lease = first!.lease
        const nonce = yield* jobs.nextNonce(BASE, COLLECTOR, 3)
        // A native settlement sends coin to a plain address: no data.
        const send = aTransfer(lease, nonce, 20, {
          to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0dEaD",
          data: "0x",
          gas: 21_000n,
          value: coin
        })
        const widest = aTransfer(lease, nonce, 25, { value: MAX_UINT256 })
        yield* jobs.recordTransfer(lease, send)
        yield* jobs.recordTransfer(lease, widest)
        expect(yield* jobs.transfersOf(job.id)).toEqual([send, widest])
        yield* jobs.release(lease, at(30), null, at(30), NOT_FAILING)
        const [second] = yield* jobs.claimDue(at(30), 1, LEASE)
        expect(second!.transfers.map((t) => t.value)).toEqual([coin, MAX_UINT256])
        const [atNonce] = yield* jobs.transfersAtNonce(BASE, COLLECTOR, nonce)
        expect(atNonce!.transfer).toEqual(send)

        // A replacement recorded for the job once it is over.
        yield* jobs.complete(second!.lease, at(40))
        const replacement = aTransfer(lease, nonce, 45, { value: coin + 1n })
        expect(yield* jobs.recordReplacement(replacement)).toBe(true)
        expect((yield* jobs.transfersOf(job.id)).map((t) => t.value)).toEqual([
          coin,
          MAX_UINT256,
          coin + 1n
        ])

        // A held job's first transfer, queued with the payment change.
        const q = yield* payment("processing")
        const settle = aJob(q.id, "settle", { runAt: at(50), createdAt: at(50) })
        const heldLease = { jobId: settle.id, token: `held-${settle.id}` }
        const heldTransfer = aTransfer(heldLease, nonce + 1, 50, { value: coin + 2n })
        yield* payments.transition(q.id, "processing", {
          status: "succeeded",
          at: at(50),
          finalAt: at(50),
          txId: "0x3",
          fees,
          settlement: pending,
          enqueue: {
            ...settle,
            held: { lease: heldLease, leaseUntil: at(50 + LEASE), transfer: heldTransfer }
          }
        })
        expect(yield* jobs.transfersOf(settle.id)).toEqual([heldTransfer])
        expect((yield* jobs.transfersOf(settle.id))[0]!.value).toBe(coin + 2n)
      })
    )

    test(
      "a buyer's transfer is claimed by one payment: another's collect job naming it on the same chain is refused, nothing written",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const payments = yield* PaymentStore
        const jobs = yield* ChainJobStore
        const mark = (seq++).toString(16).padStart(8, "0")
        const paid: BuyerTransfer = {
          hash: `0x${"c1".repeat(28)}${mark}` as Hex,
          from: BUYER,
          nonce: 7
        }
        const nativeJob = (paymentId: PaymentId, chainId: Caip2, runAt: number): NewChainJob =>
          aJob(paymentId, "collect", {
            chainId,
            runAt: at(runAt),
            createdAt: at(runAt),
            payload: { kind: "collect", optionId: `opt_${uniqueBody()}`, signature: "0x", paid }
          })
        const confirm = (p: Payment, job: NewChainJob) =>
          payments.transition(p.id, "requires_action", {
            status: "processing",
            at: job.createdAt,
            finalAt: null,
            tokenAmount: { asset: ETH_BASE, value: 10n ** 18n },
            enqueue: job
          })

        const p = yield* payment("requires_action")
        const first = nativeJob(p.id, BASE, 10)
        expect(Option.isSome(yield* confirm(p, first))).toBe(true)
        expect(Option.getOrThrow(yield* jobs.findByPayment(p.id, "collect"))).toEqual(queued(first))

        // Another payment naming the same transfer on the same chain: refused, nothing written.
        const q = yield* payment("requires_action")
        const refused = yield* Effect.flip(confirm(q, nativeJob(q.id, BASE, 20)))
        expect(refused._tag).toBe("TransactionClaimed")
        expect(refused).toMatchObject({ chainId: BASE, hash: paid.hash })
        const unchanged = Option.getOrThrow(yield* payments.find(q.id))
        expect(unchanged).toEqual(q)
        expect(unchanged.status).toBe("requires_action")
        expect(Option.isNone(yield* jobs.findByPayment(q.id, "collect"))).toBe(true)

        // The same hash on another chain is another transaction.
        const elsewhere = nativeJob(q.id, ETH, 30)
        const moved = yield* payments.transition(q.id, "requires_action", {
          status: "processing",
          at: at(30),
          finalAt: null,
          tokenAmount: { asset: ETH_MAINNET, value: 10n ** 18n },
          enqueue: elsewhere
        })
        expect(Option.getOrThrow(moved).status).toBe("processing")
        expect(Option.getOrThrow(yield* jobs.findByPayment(q.id, "collect"))).toEqual(
          queued(elsewhere)
        )

        // The payment's own job again: kept as it is, no refusal.
        expect(yield* jobs.requeue(nativeJob(p.id, BASE, 40), "collect")).toBe(false)
        // Its job over, the transfer stays claimed.
        const claimed = yield* claimAll(at(50))
        yield* jobs.complete(claimed.get(first.id)!.lease, at(51))
        const r = yield* payment("requires_action")
        const again = yield* Effect.flip(confirm(r, nativeJob(r.id, BASE, 60)))
        expect(again._tag).toBe("TransactionClaimed")
        expect(Option.getOrThrow(yield* payments.find(r.id))).toEqual(r)
        expect(Option.isNone(yield* jobs.findByPayment(r.id, "collect"))).toBe(true)
        // Collect jobs naming no buyer's transfer are never refused for it.
        const s = yield* payment("requires_action")
        expect(Option.isSome(yield* confirm(s, aJob(s.id, "collect")))).toBe(true)
      })
    )

    test(
      "records returnable funds once per transaction and lists them newest first",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const p = yield* payment("failed")
        const funds = (txByte: string, recordedAt: number, fields: Partial<ReturnableFunds> = {}) =>
          ({
            chainId: BASE,
            txHash: `0x${txByte.repeat(32)}`,
            paymentId: p.id,
            asset: ETH_BASE,
            from: BUYER,
            value: 2n ** 70n + 1n,
            reason: "transaction_mismatch",
            recordedAt: at(recordedAt),
            ...fields
          }) as ReturnableFunds
        expect(yield* jobs.returnable(10)).toEqual([])
        const older = funds("a1", 10)
        const newer = funds("a2", 20, { value: MAX_UINT256 })
        const sameTime = funds("a3", 20, { chainId: ETH, asset: ETH_MAINNET, value: 1n })
        yield* jobs.recordReturnable(older)
        yield* jobs.recordReturnable(newer)
        yield* jobs.recordReturnable(sameTime)
        // The same transaction again changes nothing, whatever it says.
        yield* jobs.recordReturnable({ ...older, value: 5n, recordedAt: at(30) })
        yield* jobs.recordReturnable(older)
        // Newest first; at the same moment, by chain then transaction, descending.
        expect(yield* jobs.returnable(10)).toEqual([newer, sameTime, older])
        expect(yield* jobs.returnable(1)).toEqual([newer])
        expect(yield* jobs.returnable(0)).toEqual([])
        // The same hash on another chain is another transaction.
        const otherChain = funds("a1", 5, { chainId: ETH })
        yield* jobs.recordReturnable(otherChain)
        expect(yield* jobs.returnable(10)).toEqual([newer, sameTime, older, otherChain])
      })
    )

    test(
      "owes, in an asset, the succeeded payments' unsettled settlements and its returnable funds, exactly",
      Effect.gen(function* () {
        const { payment } = yield* setup
        const jobs = yield* ChainJobStore
        const big = 2n ** 64n + 1n
        expect(yield* jobs.owedIn(ETH_BASE)).toBe(0n)
        const inEth = { asset: ETH_BASE, value: 3n * big }
        const settlement = (status: PaymentSettlement["status"], amount: bigint) => ({
          ...pending,
          status,
          amount,
          ...(status === "settled"
            ? { destination: DESTINATION, txHash: `0x${"5e".repeat(32)}`, settledAt: at(9) }
            : {})
        })
        // Owed: pending, held and with no destination.
        yield* payment("succeeded", {
          tokenAmount: inEth,
          fees,
          settlement: settlement("pending", big)
        })
        yield* payment("succeeded", {
          tokenAmount: inEth,
          fees,
          settlement: settlement("held", big + 2n)
        })
        const undelivered = yield* payment("succeeded", {
          tokenAmount: inEth,
          fees,
          settlement: settlement("no_destination", 3n)
        })
        // Not owed: settled, another asset, not succeeded.
        yield* payment("succeeded", {
          tokenAmount: inEth,
          fees,
          settlement: settlement("settled", 2n ** 100n)
        })
        yield* payment("succeeded", {
          tokenAmount: { asset: ETH_MAINNET, value: big },
          fees,
          settlement: settlement("pending", 2n ** 90n)
        })
        yield* payment("succeeded", { fees, settlement: settlement("pending", 2n ** 80n) })
        yield* payment("processing", { tokenAmount: inEth })
        yield* payment("failed", { tokenAmount: inEth })
        const owedPayments = big + (big + 2n) + 3n
        expect(yield* jobs.owedIn(ETH_BASE)).toBe(owedPayments)

        // Returnable funds of the asset are owed too (to their senders), once each.
        const returned: ReturnableFunds = {
          chainId: BASE,
          txHash: `0x${"f1".repeat(32)}`,
          paymentId: undelivered.id,
          asset: ETH_BASE,
          from: BUYER,
          value: 2n ** 70n + 7n,
          reason: "transaction_mismatch",
          recordedAt: at(20)
        }
        yield* jobs.recordReturnable(returned)
        yield* jobs.recordReturnable(returned)
        yield* jobs.recordReturnable({
          ...returned,
          chainId: ETH,
          asset: ETH_MAINNET,
          value: 2n ** 75n
        })
        expect(yield* jobs.owedIn(ETH_BASE)).toBe(owedPayments + 2n ** 70n + 7n)
        expect(yield* jobs.owedIn(ETH_MAINNET)).toBe(2n ** 90n + 2n ** 75n)
        expect(yield* jobs.owedIn(USDC_BASE)).toBe(2n ** 80n)

        // A payment that succeeds is owed until its settlement lands.
        const p = yield* payment("processing", { tokenAmount: inEth })
        yield* succeededWithSettleJob(p.id)
        expect(yield* jobs.owedIn(ETH_BASE)).toBe(owedPayments + 2n ** 70n + 7n + pending.amount)
        const [claimed] = yield* jobs.claimDue(at(40), 5, LEASE)
        yield* jobs.complete(claimed!.lease, at(46), {
          paymentId: p.id,
          settlement: settlement("settled", pending.amount)
        })
        expect(yield* jobs.owedIn(ETH_BASE)).toBe(owedPayments + 2n ** 70n + 7n)
      })
    )
  })
