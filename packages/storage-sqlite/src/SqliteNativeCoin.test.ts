/**
 * Migration 0026 on SQLite: a database made before it upgrades in place.
 * `payment_options` is rebuilt to take `native` (SQLite cannot alter a CHECK):
 * its rows, indexes and foreign key are kept whole; the transfers recorded
 * before read back with a value of 0; fees written before have no network
 * part. The rows are the stores' own, written at the current schema and copied
 * into a file migrated up to 0025 (the columns both have).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
import { Effect, Option } from "effect"
import { afterAll } from "vitest"
import { applyMigrations, migrations } from "./Migrations.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"

const { layer, migrateFile, openConnection } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-native-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const BASE = "eip155:8453" as Caip2
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const ETH_BASE = "eip155:8453/slip44:60" as Caip19
const COLLECTOR = "0x00000000000000000000000000000000000000c0" as const
const at = (ms: number) => new Date(Date.UTC(2026, 10, 1) + ms)

const engineOn = (filename: string) =>
  payEngineLayer({
    storage: layer({ filename }),
    config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
  })

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

/** The tables the rows live in, parents first (their foreign keys). */
const COPIED = [
  "partners",
  "merchants",
  "payments",
  "payment_options",
  "chain_jobs",
  "chain_transfers"
]

describe(`SQLite native coin, migration 0026 (${runtimeDriverName})`, () => {
  it.effect(
    "upgrades a database: options kept whole with their indexes, native taken, old transfers worth 0",
    () =>
      Effect.gen(function* () {
        const current = join(dir, "current.sqlite")
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
        }).pipe(Effect.provide(engineOn(current)))

        // The same rows in a file as 0025 left it.
        const old = join(dir, "old.sqlite")
        const db = openConnection(old)
        applyMigrations(db, migrations.slice(0, 25))
        db.exec(`ATTACH DATABASE '${current}' AS cur`)
        const columnsOf = (schema: string, table: string) =>
          (
            db.prepare(`PRAGMA ${schema}.table_info(${table})`).all() as Array<{ name: string }>
          ).map((c) => c.name)
        for (const table of COPIED) {
          const theirs = new Set(columnsOf("cur", table))
          const columns = columnsOf("main", table)
            .filter((c) => theirs.has(c))
            .join(", ")
          db.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM cur.${table}`)
        }
        db.exec("DETACH DATABASE cur")
        const indexesOf = () =>
          db
            .prepare(
              `SELECT type, name, sql FROM sqlite_schema
                WHERE tbl_name = 'payment_options' AND type IN ('index', 'trigger')
                ORDER BY name`
            )
            .all()
        const optionRows = () => db.prepare("SELECT * FROM payment_options ORDER BY id").all()
        const indexes = indexesOf()
        const rows = optionRows()
        expect(rows).toHaveLength(2)
        expect(indexes.map((i) => (i as { name: string }).name)).toEqual(
          expect.arrayContaining(["payment_options_by_expiry", "payment_options_by_payment_expiry"])
        )
        expect(() =>
          db.exec(
            `UPDATE payment_options SET method = 'native' WHERE id = '${written.options[0]!.id}'`
          )
        ).toThrow(/CHECK constraint failed/)
        db.close()

        // 0026 first, then whatever came after it.
        expect(yield* migrateFile(old)).toEqual(migrations.slice(25).map((m) => [m.id, m.name]))

        const after = openConnection(old)
        expect(
          after
            .prepare(
              `SELECT type, name, sql FROM sqlite_schema
              WHERE tbl_name = 'payment_options' AND type IN ('index', 'trigger') ORDER BY name`
            )
            .all()
        ).toEqual(indexes)
        expect(after.prepare("SELECT * FROM payment_options ORDER BY id").all()).toEqual(rows)
        expect(after.prepare("PRAGMA foreign_key_check").all()).toEqual([])
        const references = after
          .prepare("PRAGMA foreign_key_list(payment_options)")
          .all() as Array<{
          table: string
        }>
        expect(references.map((r) => r.table)).toEqual(["payments"])
        expect(
          after.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '%_new'").all()
        ).toEqual([])
        // Any other method is refused as before; an option's payment must exist.
        expect(() => after.exec("UPDATE payment_options SET method = 'other'")).toThrow(
          /CHECK constraint failed/
        )
        expect(() => after.exec("UPDATE payment_options SET payment_id = 'pay_missing'")).toThrow(
          /FOREIGN KEY constraint failed/
        )
        after.close()

        // Read back by the stores: every option as written, the transfer worth 0, and a native
        // option stored beside them.
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
        }).pipe(Effect.provide(engineOn(old)))
      })
  )
})
