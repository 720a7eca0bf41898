import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  authenticateWallet,
  IdempotencyStore,
  Merchants,
  Partners,
  payEngineLayer,
  WalletApps
} from "@pay/core"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { layer, migrateFile, openConnection } from "./node.js"
import { makeSqliteStores } from "./SqliteStores.js"

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const engineOn = (filename: string) =>
  payEngineLayer({
    storage: layer({ filename }),
    config: { publicUrl: "http://x", maxBodyBytes: 1024 }
  })

describe("SQLite storage", () => {
  it.effect("keeps everything across a restart", () =>
    Effect.gen(function* () {
      const filename = join(dir, "restart.sqlite")
      const { partner, merchantId } = yield* Effect.gen(function* () {
        const { partner } = yield* (yield* Partners).create({ name: "Restart Co" })
        const merchant = yield* (yield* Merchants).create(partner, {
          name: "Shop",
          email: "a@b.co",
          iconUrl: null
        })
        return { partner, merchantId: merchant.id }
      }).pipe(Effect.provide(engineOn(filename)))

      const again = yield* Effect.gen(function* () {
        return yield* (yield* Merchants).get(partner, merchantId)
      }).pipe(Effect.provide(engineOn(filename)))
      expect(again.name).toBe("Shop")
    })
  )

  it.effect("keeps wallet apps and their keys across a restart", () =>
    Effect.gen(function* () {
      const filename = join(dir, "apps.sqlite")
      const created = yield* Effect.flatMap(WalletApps, (apps) =>
        apps.create({ name: "Wallet", iconUrl: "https://wallet.example/i.png" })
      ).pipe(Effect.provide(engineOn(filename)))
      const again = yield* Effect.all([
        authenticateWallet({ apiKey: created.apiKey }),
        authenticateWallet({ appId: created.app.id }),
        Effect.flatMap(WalletApps, (apps) => apps.list)
      ]).pipe(Effect.provide(engineOn(filename)))
      expect(again).toEqual([created.app, created.app, [created.app]])
    })
  )

  it.effect("migrates idempotently, from several processes' worth of calls", () =>
    Effect.gen(function* () {
      const filename = join(dir, "migrate.sqlite")
      yield* migrateFile(filename)
      const applied = yield* migrateFile(filename)
      expect(applied).toEqual([])
    })
  )

  it.effect("grants one idempotency claim across two connections to one file", () =>
    Effect.gen(function* () {
      const filename = join(dir, "two-connections.sqlite")
      yield* migrateFile(filename)
      const [a, b] = [openConnection(filename), openConnection(filename)]
      const claim = (connection: ReturnType<typeof openConnection>, token: string) =>
        Effect.gen(function* () {
          const store = yield* IdempotencyStore
          return yield* store.claim(
            { partnerId: "ptnr_x", route: "POST /v1/merchants", key: "k" },
            "fp",
            token,
            new Date(),
            new Date(0)
          )
        }).pipe(Effect.provide(makeSqliteStores(connection)))
      const outcomes = [yield* claim(a, "a"), yield* claim(b, "b")]
      expect(outcomes.map((o) => o._tag).sort()).toEqual(["Claimed", "InProgress"])
      a.close()
      b.close()
    })
  )
})
