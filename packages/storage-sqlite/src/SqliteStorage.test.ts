import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  ApiKey,
  authenticateWallet,
  engineConfig,
  IdempotencyStore,
  Merchants,
  Partners,
  payEngineLayer,
  WalletApp,
  WalletApps
} from "@pay/core"
import { Effect } from "effect"
import { afterAll, it as vitestIt } from "vitest"
import { bundledForTests } from "../test/TestBundle.js"
import { applyMigrations, migrations, type SqliteMigration } from "./Migrations.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { makeSqliteStores } from "./SqliteStores.js"

const { layer, migrateFile, openConnection } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-"))
// Node runs the migrating processes' program bundled; Bun runs its TypeScript as it is.
const migrateFileBundle = "Bun" in globalThis ? "" : bundledForTests("migrate-file.testing.ts")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const engineOn = (filename: string) =>
  payEngineLayer({
    storage: layer({ filename }),
    config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
  })

describe(`SQLite storage (${runtimeDriverName})`, () => {
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
      // As created but for its last use, which the first request recorded.
      const [byKey, byId, listed] = again
      const asCreated = (app: WalletApp) => new WalletApp({ ...app, lastUsedAt: null })
      expect([byKey, byId, ...listed].map(asCreated)).toEqual([
        created.app,
        created.app,
        created.app
      ])
      expect(listed[0]?.lastUsedAt).toBeInstanceOf(Date)
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

  it.effect("upgrades a database the @effect/sql Migrator of earlier versions made", () =>
    Effect.gen(function* () {
      const filename = join(dir, "upgrade.sqlite")
      const db = openConnection(filename)
      // The table and rows as that Migrator wrote them, five migrations in.
      db.exec(`CREATE TABLE pay_migrations (
        migration_id integer PRIMARY KEY NOT NULL,
        created_at datetime NOT NULL DEFAULT current_timestamp,
        name VARCHAR(255) NOT NULL
      )`)
      for (const migration of migrations.slice(0, 5)) {
        migration.apply(db)
        db.prepare("INSERT INTO pay_migrations (migration_id, name) VALUES (?, ?)").run(
          migration.id,
          migration.name
        )
      }
      db.close()
      expect(yield* migrateFile(filename)).toEqual([
        [6, "gateway"],
        [7, "option_client_id"],
        [8, "chain_work"],
        [9, "logos"],
        [10, "merchant_logo"],
        [11, "engine_secret"],
        [12, "events"],
        [13, "webhook_endpoints"],
        [14, "webhook_deliveries"],
        [15, "webhook_delivery_work"],
        [16, "payment_filters"],
        [17, "api_keys"],
        [18, "payment_livemode"],
        [19, "audit_log"],
        [20, "option_purge"],
        [21, "rate_limits"],
        [22, "settlement_held"],
        [23, "chain_job_failing"],
        [24, "deploy_jobs"],
        [25, "option_method"],
        [26, "native_coin"],
        [27, "key_scopes"],
        [28, "app_status"],
        [29, "retention"]
      ])
      expect(yield* migrateFile(filename)).toEqual([])
    })
  )

  it.effect(
    "moves keys of the old tables to migration 0017's: each still opens, no part of a chosen key kept",
    () =>
      Effect.gen(function* () {
        const filename = join(dir, "keys-0017.sqlite")
        const db = openConnection(filename)
        applyMigrations(db, migrations.slice(0, 16))
        // Keys as versions before 0017 stored them: the first 16 characters and the hash.
        const generated = "pk_AbCdEfGhIjKl_0123456789abcdefghijABCDEFGHIJ0123456789"
        const chosen = "my-own-bootstrap-key-of-32-chars"
        const appKey = "pk_ZyXwVuTsRqPo_9876543210zyxwvutsrqZYXWVUTSRQ9876543210"
        db.exec(`INSERT INTO partners VALUES ('ptnr_0000000100000000000A', 'Gen', '2026-02-18', 1),
          ('ptnr_0000000100000000000B', 'Chosen', '2026-02-18', 2)`)
        const oldKey = db.prepare("INSERT INTO api_keys VALUES (?, ?, ?, ?)")
        oldKey.run(
          generated.slice(0, 16),
          ApiKey.hashApiKey(generated),
          "ptnr_0000000100000000000A",
          1
        )
        oldKey.run(chosen.slice(0, 16), ApiKey.hashApiKey(chosen), "ptnr_0000000100000000000B", 2)
        db.exec(`INSERT INTO wallet_apps VALUES ('app_0000000100000000000C', 'W', NULL, 3)`)
        db.prepare("INSERT INTO wallet_app_keys VALUES (?, ?, ?, ?)").run(
          appKey.slice(0, 16),
          ApiKey.hashApiKey(appKey),
          "app_0000000100000000000C",
          3
        )
        db.close()
        expect(yield* migrateFile(filename)).toContainEqual([17, "api_keys"])

        const owners = yield* Effect.gen(function* () {
          const partners = yield* Partners
          return [
            (yield* partners.authenticate(generated)).name,
            (yield* partners.authenticate(chosen)).name,
            (yield* authenticateWallet({ apiKey: appKey })).name,
            (yield* Effect.flip(partners.authenticate(appKey)))._tag
          ]
        }).pipe(Effect.provide(engineOn(filename)))
        expect(owners).toEqual(["Gen", "Chosen", "W", "Unauthenticated"])

        const after = openConnection(filename)
        const rows = after
          .prepare("SELECT owner_kind, lookup_id FROM keys ORDER BY created_at")
          .all()
        expect(rows).toEqual([
          { owner_kind: "partner", lookup_id: "AbCdEfGhIjKl" },
          { owner_kind: "partner", lookup_id: null },
          { owner_kind: "wallet_app", lookup_id: "ZyXwVuTsRqPo" }
        ])
        after.close()
        // Not in any table, nor left behind in the file's free pages.
        expect(readFileSync(filename).includes(chosen.slice(0, 16))).toBe(false)
      })
  )

  it.effect("rolls back every migration of a call when one fails", () =>
    Effect.gen(function* () {
      const db = openConnection(join(dir, "failing.sqlite"))
      const failing: SqliteMigration = {
        id: 99,
        name: "failing",
        apply: (connection) => connection.exec("CREATE TABLE nowhere (x) STRICT")
      }
      expect(() => applyMigrations(db, [...migrations, failing])).toThrow(/missing datatype/)
      const tables = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .all()
      expect(tables).toEqual([{ name: "pay_migrations" }])
      expect(applyMigrations(db).length).toBe(migrations.length)
      db.close()
    })
  )

  vitestIt(
    "migrates each migration once when several processes start on a new file together",
    async () => {
      const filename = join(dir, "race.sqlite")
      // Each process runs under this runtime: Bun the TypeScript itself, Node its bundle.
      const args =
        "Bun" in globalThis
          ? ["--conditions=@pay/source", join(import.meta.dirname, "migrate-file.testing.ts")]
          : [migrateFileBundle]
      args.push(filename)
      const outputs = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<string>((resolve, reject) =>
              execFile(process.execPath, args, (error, stdout, stderr) =>
                error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)
              )
            )
        )
      )
      const applied = outputs.flatMap((out) => JSON.parse(out) as Array<[number, string]>)
      expect(applied.map(([id]) => id).sort((a, b) => a - b)).toEqual(migrations.map((m) => m.id))
      const db = openConnection(filename)
      expect(db.prepare("SELECT count(*) AS n FROM pay_migrations").get()).toEqual({
        n: migrations.length
      })
      db.close()
    },
    60_000
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
