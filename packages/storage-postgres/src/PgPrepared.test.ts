/**
 * The hot statements as named prepared statements (PgPrepared.ts): that the
 * server holds them under their names after use, that one run inside a
 * transaction runs on the transaction's connection (it sees the transaction's
 * own writes, and a pool of one connection does not wait for a second), and
 * that the stores answer alike on a PgClient provided without the pool.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import {
  findCurrency,
  Merchant,
  type MerchantId,
  MerchantStore,
  Partner,
  type PartnerId,
  type PaymentId,
  PaymentStore
} from "@pay/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { freshSchema, freshStorage } from "../test/TestDatabase.js"
import { migrate } from "./Migrations.js"
import { makePreparedStatements, PgPool } from "./PgPrepared.js"
import { PgStores } from "./PgStores.js"

const AT = new Date(Date.UTC(2026, 2, 1))
const partner = new Partner({
  id: "ptnr_00000000000000000001" as PartnerId,
  name: "P",
  apiVersion: "2026-02-18",
  createdAt: AT
})
const merchant = new Merchant({
  id: "mrch_00000000000000000001" as MerchantId,
  partnerId: partner.id,
  name: "M",
  email: null,
  iconUrl: null,
  logoName: null,
  status: "active",
  createdAt: AT,
  updatedAt: AT,
  deletedAt: null
})
const paymentId = "pay_00000000000000000001" as PaymentId

/** A partner, its merchant, and a payment just created. */
const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO partners (id, name, api_version, created_at)
    VALUES (${partner.id}, ${partner.name}, ${partner.apiVersion}, ${AT})`
  yield* (yield* MerchantStore).insert(merchant)
  yield* (yield* PaymentStore).insert({
    id: paymentId,
    partnerId: partner.id,
    merchantId: merchant.id,
    referenceId: "ORDER-1",
    amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 1050n },
    status: "requires_action",
    failureCode: null,
    cancelledReason: null,
    expiresAt: new Date(AT.getTime() + 300_000),
    createdAt: AT,
    updatedAt: AT,
    finalAt: null,
    checkout: null,
    tokenAmount: null,
    buyer: null,
    transaction: null,
    txId: null,
    refund: null,
    fees: null,
    settlement: null,
    livemode: true
  })
})

const reads = Effect.gen(function* () {
  const found = yield* (yield* MerchantStore).find(merchant.id)
  const status = yield* (yield* PaymentStore).findStatus(paymentId)
  return { merchant: Option.getOrThrow(found), status: Option.getOrThrow(status).status }
})

describe("PostgreSQL prepared statements", () => {
  it.effect("are held by the server under their names once a connection has run them", () =>
    Effect.gen(function* () {
      yield* seed
      expect(yield* reads).toEqual({ merchant, status: "requires_action" })
      // The status route's read without a fiber: a promise on the pool, the same statement.
      const findStatusNow = (yield* PaymentStore).findStatusNow
      expect(findStatusNow).toBeDefined()
      const promised = findStatusNow?.(paymentId)
      expect(promised).toBeInstanceOf(Promise)
      expect(Option.getOrThrow(yield* Effect.promise(async () => promised!)).status).toBe(
        "requires_action"
      )
      // One connection: the statements above ran on the one this query reads from.
      const pool = yield* PgPool
      const { rows } = yield* Effect.promise(() =>
        pool.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name")
      )
      expect(rows.map((r) => r.name)).toEqual([
        "pay_merchant_find",
        "pay_payment_created",
        "pay_payment_status"
      ])
    }).pipe(Effect.provide(freshStorage({ maxConnections: 1 })))
  )

  it.effect("stay at most the bound per connection, the least recently used deallocated", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const pool = yield* PgPool
      const prepared = makePreparedStatements(sql, pool, 2)
      // Five statements, each adding its own number, and their names on the server.
      const statements = [1, 2, 3, 4, 5].map((k) => ({
        name: `pay_test_${k}`,
        run: prepared.prepare<{ n: number }>(`pay_test_${k}`, `SELECT $1::int + ${k} AS n`),
        promised: prepared.promised<{ n: number }>(`pay_test_${k}`, `SELECT $1::int + ${k} AS n`)!
      }))
      const onServer = Effect.promise(() =>
        pool.query<{ name: string }>(
          "SELECT name FROM pg_prepared_statements WHERE name LIKE 'pay_test_%' ORDER BY name"
        )
      ).pipe(Effect.map(({ rows }) => rows.map((r) => r.name)))
      // Many rounds in varying orders: each answer right, evicted ones prepared again.
      const order = [0, 1, 0, 2, 3, 1, 4, 0, 4, 3, 2, 2, 1, 0, 4]
      for (const [i, k] of order.entries()) {
        const statement = statements[k]!
        const rows =
          i % 2 === 0
            ? yield* statement.run([10 * i])
            : yield* Effect.promise(() => statement.promised([10 * i]))
        expect(rows).toEqual([{ n: 10 * i + k + 1 }])
        const names = yield* onServer
        expect(names.length).toBeLessThanOrEqual(2)
        expect(names).toContain(statement.name)
      }
      // The two used last are the two kept.
      expect(yield* onServer).toEqual(["pay_test_1", "pay_test_5"])
    }).pipe(Effect.provide(freshStorage({ maxConnections: 1 })))
  )

  it.effect("run on a transaction's own connection inside it", () =>
    Effect.gen(function* () {
      yield* seed
      const sql = yield* SqlClient.SqlClient
      const store = yield* MerchantStore
      const inside = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`UPDATE merchants SET status = 'suspended' WHERE id = ${merchant.id}`
            // On the pool, this would wait for the only connection, which the transaction holds.
            return Option.getOrThrow(yield* store.find(merchant.id)).status
          })
        )
        .pipe(Effect.timeout("5 seconds"))
      expect(inside).toBe("suspended")
    }).pipe(Effect.provide(freshStorage({ maxConnections: 1 })))
  )

  it.scoped("leave the stores answering alike on a PgClient provided without the pool", () =>
    Effect.gen(function* () {
      const url = yield* freshSchema()
      const client = PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })
      const stores = PgStores.pipe(
        Layer.provideMerge(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(client)))
      )
      const answered = yield* Effect.gen(function* () {
        expect(Option.isNone(yield* Effect.serviceOption(PgPool))).toBe(true)
        // Nothing to answer a status with outside an effect: the route runs its effect.
        expect((yield* PaymentStore).findStatusNow).toBeUndefined()
        yield* seed
        return yield* reads
      }).pipe(Effect.provide(stores))
      expect(answered).toEqual({ merchant, status: "requires_action" })
    })
  )
})
