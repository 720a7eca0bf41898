/**
 * What the contract suite cannot see from one process: several instances,
 * each with its own pool, on one database.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import {
  findCurrency,
  IdempotencyStore,
  Merchant,
  type MerchantId,
  MerchantStore,
  Partner,
  type PartnerId,
  PartnerStore,
  type Payment,
  type PaymentId,
  PaymentStore
} from "@pay/core"
import { partnerKey } from "@pay/core/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { freshSchema } from "../test/TestDatabase.js"
import { layer, migratedClientLayer } from "./layer.js"

const T0 = Date.UTC(2026, 3, 1)
const body = (n: number) => String(n).padStart(20, "0")

/** `count` instances on one fresh schema, each with its own pool. */
const instances = (count: number) =>
  Effect.gen(function* () {
    const url = yield* freshSchema()
    return yield* Effect.forEach(
      Array.from({ length: count }),
      () => Layer.build(layer({ url, maxConnections: 4 })),
      { concurrency: "unbounded" }
    )
  })

describe("PostgreSQL storage, several instances", () => {
  it.scoped("migrates once when instances start together, and again changes nothing", () =>
    Effect.gen(function* () {
      const url = yield* freshSchema()
      yield* Effect.forEach(
        Array.from({ length: 4 }),
        () => Layer.build(migratedClientLayer({ url, maxConnections: 2 })),
        { concurrency: "unbounded" }
      )
      const again = yield* Layer.build(migratedClientLayer({ url, maxConnections: 1 }))
      const sql = Context.get(again, SqlClient.SqlClient)
      const applied = yield* sql<{ readonly name: string }>`SELECT name FROM pay_migrations
        ORDER BY migration_id`
      expect(applied.map((row) => row.name)).toEqual([
        "initial",
        "payments",
        "idempotency_lease",
        "payment_aggregates",
        "wallet_apps",
        "gateway",
        "option_client_id",
        "chain_work",
        "logos",
        "merchant_logo",
        "engine_secret",
        "events",
        "webhook_endpoints",
        "webhook_deliveries",
        "webhook_delivery_work",
        "payment_filters",
        "api_keys",
        "payment_livemode",
        "audit_log",
        "option_purge",
        "rate_limits",
        "settlement_held",
        "chain_job_failing",
        "reference_statistics",
        "deploy_jobs",
        "option_method",
        "native_coin",
        "key_scopes",
        "app_status",
        "retention"
      ])
    })
  )

  it.scoped("grants one idempotency claim among instances", () =>
    Effect.gen(function* () {
      const all = yield* instances(3)
      const scope = { partnerId: "ptnr_x", route: "POST /v1/payments", key: "k" }
      const outcomes = yield* Effect.forEach(
        all.flatMap((context) => [context, context, context]),
        (context, i) =>
          Context.get(context, IdempotencyStore).claim(
            scope,
            "fp",
            `t${i}`,
            new Date(T0),
            new Date(0)
          ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((o) => o._tag === "Claimed")).toHaveLength(1)
    })
  )

  it.scoped("expires each due payment once when instances sweep together", () =>
    Effect.gen(function* () {
      const all = yield* instances(3)
      const first = all[0]!
      const partner = new Partner({
        id: `ptnr_${body(1)}` as PartnerId,
        name: "P",
        apiVersion: "2026-02-18",
        createdAt: new Date(T0)
      })
      yield* Context.get(first, PartnerStore).insert(partner, partnerKey(partner))
      const merchant = new Merchant({
        id: `mrch_${body(1)}` as MerchantId,
        partnerId: partner.id,
        name: "M",
        email: null,
        iconUrl: null,
        status: "active",
        createdAt: new Date(T0),
        updatedAt: new Date(T0),
        deletedAt: null
      })
      yield* Context.get(first, MerchantStore).insert(merchant)
      const due = Array.from(
        { length: 60 },
        (_, i): Payment => ({
          id: `pay_${body(i)}` as PaymentId,
          partnerId: partner.id,
          merchantId: merchant.id,
          referenceId: `R${i}`,
          amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100n },
          status: "requires_action",
          failureCode: null,
          cancelledReason: null,
          expiresAt: new Date(T0 + i),
          createdAt: new Date(T0),
          updatedAt: new Date(T0),
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
      )
      yield* Effect.forEach(due, (p) => Context.get(first, PaymentStore).insert(p), {
        concurrency: 4
      })
      const now = new Date(T0 + 1000)
      // What the engine's sweep does: find the due ones, expire each by a transition from
      // requires_action; of sweepers racing for a payment, the one whose write applies wins.
      const sweep = (store: PaymentStore["Type"]) =>
        Effect.gen(function* () {
          const won: Array<string> = []
          for (;;) {
            const batch = yield* store.dueForExpiry(now, 7)
            if (batch.length === 0) return won
            for (const id of batch) {
              const expired = yield* store.transition(id, "requires_action", {
                status: "expired",
                at: now,
                finalAt: now
              })
              if (Option.isSome(expired)) won.push(id)
            }
          }
        })
      const sweeps = yield* Effect.forEach(
        all.flatMap((context) => [context, context]),
        (context) => sweep(Context.get(context, PaymentStore)),
        { concurrency: "unbounded" }
      )
      expect(sweeps.flat().sort()).toEqual(due.map((p) => p.id).sort())
    })
  )
})
