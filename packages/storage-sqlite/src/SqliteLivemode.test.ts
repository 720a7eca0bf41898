/**
 * The payments' mode on SQLite (migration 0018): payments written before the
 * migration read back with no mode (their views show the engine's), payments
 * written after it keep the one they were created with, and the column takes
 * nothing but 0, 1 or NULL.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { type Payment, type PaymentId, PaymentStore } from "@pay/core"
import { statisticsFixture } from "@pay/core/contracts"
import { Effect, Option } from "effect"
import { afterAll } from "vitest"
import paymentLivemode from "./migrations/0018_payment_livemode.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { SqliteDatabase } from "./SqliteDatabase.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-livemode-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const freshFile = () => join(dir, `livemode-${n++}.sqlite`)

describe(`SQLite payment mode (${runtimeDriverName})`, () => {
  it.effect(
    "reads payments written before migration 0018 with no mode, later ones with theirs",
    () =>
      Effect.gen(function* () {
        const fixture = yield* statisticsFixture
        const store = yield* PaymentStore
        const db = yield* SqliteDatabase
        // As if the payments had been written before 0018 existed.
        db.exec("ALTER TABLE payments DROP COLUMN livemode")
        // The migration itself: the migrator would not run it again below a later one.
        db.transaction(() => paymentLivemode(db))
        for (const p of fixture.data) {
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBeNull()
        }
        const first = fixture.data[0]!
        const later = (livemode: boolean, suffix: string): Payment => ({
          ...first,
          id: `${first.id.slice(0, -4)}${suffix}` as PaymentId,
          livemode
        })
        for (const p of [later(false, "zzz0"), later(true, "zzz1")]) {
          yield* store.insert(p)
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBe(p.livemode)
        }
        expect(() => db.exec(`UPDATE payments SET livemode = 2 WHERE id = '${first.id}'`)).toThrow(
          /CHECK constraint failed/
        )
      }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )
})
