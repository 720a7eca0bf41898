import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, TestClock } from "effect"
import { ID_BODY_LENGTH, makeIdBody, newId, randomBase62 } from "./Ids.js"

const millis = FastCheck.integer({ min: 0, max: 2 ** 47 })

describe("Ids", () => {
  it("sorts by creation time as plain strings", () => {
    const times = [0, 1, 61, 62, 1_700_000_000_000, 1_700_000_000_001, 4_102_444_800_000]
    const ids = times.map(makeIdBody)
    expect([...ids].sort()).toEqual(ids)
    for (const id of ids) expect(id).toHaveLength(ID_BODY_LENGTH)
  })

  it.prop("orders any two distinct millisecond stamps", [millis, millis], ([a, b]) => {
    const [x, y] = [makeIdBody(a).slice(0, 8), makeIdBody(b).slice(0, 8)]
    expect(x < y ? -1 : x > y ? 1 : 0).toBe(Math.sign(a - b))
  })

  it("draws random characters from the whole alphabet", () => {
    expect(new Set(randomBase62(5000)).size).toBe(62)
  })

  it.effect("stamps ids with the Effect clock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_700_000_000_000)
      const a = yield* newId<string>("mrch")
      const b = yield* newId<string>("mrch")
      expect(a).toMatch(/^mrch_[0-9A-Za-z]{20}$/)
      expect(a.slice(0, 13)).toBe(b.slice(0, 13))
      expect(a).not.toBe(b)
    })
  )
})
