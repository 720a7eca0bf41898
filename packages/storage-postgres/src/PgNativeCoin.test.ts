/**
 * Migration 0027 on PostgreSQL, over rows written before it: the options'
 * method CHECK replaced by one that takes `native` (and nothing else new), the
 * transfers recorded before worth 0, no network fee on the fees written
 * before, and the new table and indexes in place. The schema is migrated
 * whole, its rows written by the stores, then 0027 undone and run again.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import {
  type Caip2,
  type Caip10,
  type Caip19,
  ChainJobStore,
  type ChainTransfer,
  engineConfig,
  findCurrency,
  GatewayStore,
  Merchants,
  type NewChainJob,
  type OptionId,
  Partners,
  type Payment,
  type PaymentOption,
  PaymentStore,
  Payments,
  payEngineLayer
} from "@pay/core"
import { Context, Effect, Layer, Option } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import nativeCoin from "./migrations/0027_native_coin.js"

const BASE = "eip155:8453" as Caip2
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const ETH_BASE = "eip155:8453/slip44:60" as Caip19
const COLLECTOR = "0x00000000000000000000000000000000000000c0" as const
const at = (ms: number) => new Date(Date.UTC(2026, 10, 1) + ms)

const anOption = (payment: Payment, n: number, fields: Partial<PaymentOption> = {}) =>
  ({
    id: `opt_${String(n).padStart(20, "0")}` as OptionId,
    paymentId: payment.id,
    account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
    asset: USDC_BASE,
    method: "eip3009",
    approvals: [],
    rate: null,
    authorization: {
      from: "0x00000000000000000000000000000000000000b0",
      to: COLLECTOR,
      value: 10_500_000n + BigInt(n),
      validAfter: 0n,
      validBefore: 2n ** 64n,
      nonce: `0x${"0f".repeat(32)}`
    },
    expiresAt: at(300_000 + n),
    quoted: true,
    collectData: false,
    clientId: null,
    createdAt: at(n),
    ...fields
  }) as PaymentOption

/** What 0027 added, taken away again: the schema as 0026 left it. */
const UNDO = [
  "DROP INDEX payments_owed",
  "DROP TABLE returnable_funds",
  "DROP INDEX chain_jobs_claimed_transfer",
  "ALTER TABLE payments DROP COLUMN fee_network",
  "ALTER TABLE chain_transfers DROP COLUMN value",
  `ALTER TABLE payment_options DROP CONSTRAINT payment_options_method_check,
    ADD CONSTRAINT payment_options_method_check CHECK (method IN ('eip3009', 'permit2'))`
]

describe("PostgreSQL native coin, migration 0027", () => {
  it.effect(
    "upgrades rows written before it: options kept, native taken, old transfers worth 0",
    () =>
      Effect.gen(function* () {
        const storage = yield* Layer.build(freshStorage())
        const sql = Context.get(storage, SqlClient.SqlClient)
        const engine = payEngineLayer({
          storage: Layer.succeedContext(storage),
          config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
        })
        const written = yield* Effect.gen(function* () {
          const { partner } = yield* (yield* Partners).create({ name: "Native Co" })
          const merchant = yield* (yield* Merchants).create(partner, {
            name: "Shop",
            email: "a@b.co",
            iconUrl: null
          })
          const payment = yield* (yield* Payments).create(partner, merchant.id, {
            referenceId: "r1",
            amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100n }
          })
          const options = [
            anOption(payment, 1),
            anOption(payment, 2, {
              method: "permit2",
              approvals: [0n, 2n ** 256n - 1n],
              rate: { numerator: 10n ** 40n + 7n, denominator: 3n, readings: [] }
            })
          ]
          yield* (yield* GatewayStore).insertOptions(options)
          const job: NewChainJob = {
            id: `cjob_${"0".repeat(19)}1` as NewChainJob["id"],
            paymentId: payment.id,
            chainId: BASE,
            payload: { kind: "collect", optionId: options[0]!.id, signature: "0x01" },
            runAt: at(10),
            createdAt: at(10)
          }
          yield* (yield* PaymentStore).transition(payment.id, "requires_action", {
            status: "processing",
            at: at(10),
            finalAt: null,
            tokenAmount: { asset: USDC_BASE, value: 10_500_001n },
            enqueue: job
          })
          const jobs = yield* ChainJobStore
          const [claimed] = yield* jobs.claimDue(at(11), 1, 60_000)
          const transfer: ChainTransfer = {
            hash: `0x${"ab".repeat(32)}`,
            jobId: claimed!.job.id,
            chainId: BASE,
            sender: COLLECTOR,
            nonce: 0,
            purpose: "call",
            to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            data: "0xe3ee160e",
            gas: 95_000n,
            value: 0n,
            maxFeePerGas: 2n ** 70n,
            maxPriorityFeePerGas: 1n,
            raw: "0x02",
            createdAt: at(12)
          }
          yield* jobs.recordTransfer(claimed!.lease, transfer)
          return { payment, options, jobId: claimed!.job.id, transfer }
        }).pipe(Effect.provide(engine))

        for (const statement of UNDO) yield* sql.unsafe(statement)
        const refused = yield* Effect.exit(
          sql`UPDATE payment_options SET method = 'native' WHERE id = ${written.options[0]!.id}`
        )
        expect(refused._tag).toBe("Failure")
        // The migration itself: the Migrator would not run it again below later ones.
        yield* sql.withTransaction(nativeCoin).pipe(Effect.provideService(SqlClient.SqlClient, sql))

        const checks = yield* sql<{ readonly name: string; readonly definition: string }>`
        SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'payment_options'::regclass AND contype = 'c'`
        expect(checks.map((c) => c.name)).toEqual(["payment_options_method_check"])
        expect(checks[0]!.definition).toContain("native")
        const other = yield* Effect.exit(sql`UPDATE payment_options SET method = 'other'`)
        expect(other._tag).toBe("Failure")

        yield* Effect.gen(function* () {
          const gateway = yield* GatewayStore
          for (const option of written.options) {
            expect(Option.getOrThrow(yield* gateway.findOption(option.id))).toEqual(option)
          }
          const native = anOption(written.payment, 3, {
            asset: ETH_BASE,
            method: "native",
            authorization: { ...written.options[0]!.authorization, value: 10n ** 18n }
          })
          yield* gateway.insertOptions([native])
          expect(Option.getOrThrow(yield* gateway.findOption(native.id))).toEqual(native)
          const jobs = yield* ChainJobStore
          expect(yield* jobs.transfersOf(written.jobId)).toEqual([written.transfer])
          expect(yield* jobs.owedIn(USDC_BASE)).toBe(0n)
          expect(yield* jobs.returnable(10)).toEqual([])
          const payment = Option.getOrThrow(yield* (yield* PaymentStore).find(written.payment.id))
          expect(payment.status).toBe("processing")
          expect(payment.fees).toBeNull()
        }).pipe(Effect.provide(engine))
      }).pipe(Effect.scoped)
  )
})
