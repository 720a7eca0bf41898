import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import { DAY_MS, planStats, utcDay } from "./PaymentStatsPlan.js"
import type { PaymentFilter } from "./PaymentStore.js"

const base: PaymentFilter = { partnerId: "ptnr_0" as PartnerId, now: new Date(0) }
const D = Date.UTC(2026, 2, 10)
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19

/** Whether the plan reads a payment created at `t`: from a whole day or from an edge. */
const reads = (filter: PaymentFilter, t: number): "day" | "edge" | "no" | "twice" => {
  const plan = planStats(filter)
  if (plan._tag !== "Aggregates") throw new Error(`no aggregates plan: ${plan._tag}`)
  const day = utcDay(new Date(t))
  const inDays =
    plan.days !== undefined &&
    (plan.days.from === undefined || day >= plan.days.from) &&
    (plan.days.before === undefined || day < plan.days.before)
  const edges = plan.edges.filter((e) => t >= e.from.getTime() && t < e.before.getTime()).length
  if (inDays && edges > 0) return "twice"
  if (edges > 1) return "twice"
  return inDays ? "day" : edges === 1 ? "edge" : "no"
}

describe("planStats", () => {
  it("reads every payment in [from, before) once, from whole days or edges, and no other", () => {
    const time = FastCheck.integer({ min: D - 3 * DAY_MS, max: D + 3 * DAY_MS })
    FastCheck.assert(
      FastCheck.property(
        FastCheck.option(time, { nil: undefined }),
        FastCheck.option(time, { nil: undefined }),
        FastCheck.array(time, { maxLength: 20 }),
        (from, before, times) => {
          if (from !== undefined && before !== undefined && from >= before) return
          const filter: PaymentFilter = {
            ...base,
            ...(from === undefined ? {} : { from: new Date(from) }),
            ...(before === undefined ? {} : { before: new Date(before) })
          }
          // The boundaries themselves and their neighbours, beside random times.
          const probes = [
            ...times,
            ...[from, before].flatMap((b) => (b === undefined ? [] : [b - 1, b, b + 1]))
          ]
          for (const t of probes) {
            const inside = (from === undefined || t >= from) && (before === undefined || t < before)
            const read = reads(filter, t)
            expect(read === "day" || read === "edge").toBe(inside)
          }
        }
      )
    )
  })

  it("reads whole days from the aggregates and only the partial days from payments", () => {
    const plan = planStats({ ...base, from: new Date(D + 1), before: new Date(D + 3 * DAY_MS - 1) })
    expect(plan).toEqual({
      _tag: "Aggregates",
      merchantIds: undefined,
      days: { from: utcDay(new Date(D)) + 1, before: utcDay(new Date(D)) + 2 },
      edges: [
        { from: new Date(D + 1), before: new Date(D + DAY_MS) },
        { from: new Date(D + 2 * DAY_MS), before: new Date(D + 3 * DAY_MS - 1) }
      ],
      customers: { _tag: "Range", from: new Date(D + 1), before: new Date(D + 3 * DAY_MS - 1) }
    })
    expect(planStats({ ...base, from: new Date(D), before: new Date(D + DAY_MS) })).toMatchObject({
      days: { from: utcDay(new Date(D)), before: utcDay(new Date(D)) + 1 },
      edges: []
    })
    expect(planStats({ ...base, merchantIds: ["m"] })).toMatchObject({
      merchantIds: ["m"],
      days: { from: undefined, before: undefined },
      edges: [],
      customers: { _tag: "All" }
    })
  })

  it("answers nothing without a succeeded status, and reads the matches for token, network and reference", () => {
    expect(planStats({ ...base, statuses: ["failed", "processing"] })._tag).toBe("Empty")
    expect(planStats({ ...base, statuses: [] })._tag).toBe("Empty")
    expect(planStats({ ...base, merchantIds: [] })._tag).toBe("Empty")
    expect(planStats({ ...base, from: new Date(D), before: new Date(D) })._tag).toBe("Empty")
    expect(planStats({ ...base, statuses: ["processing", "succeeded"] })._tag).toBe("Aggregates")
    expect(planStats({ ...base, assets: [] })._tag).toBe("Empty")
    expect(planStats({ ...base, networks: [] })._tag).toBe("Empty")
    expect(planStats({ ...base, referenceId: "abc", statuses: ["failed"] })._tag).toBe("Empty")
    expect(planStats({ ...base, referenceId: "abc" })).toEqual({ _tag: "Matches", by: "reference" })
    expect(planStats({ ...base, referenceId: "abc", networks: ["eip155:1" as Caip2] })).toEqual({
      _tag: "Matches",
      by: "reference"
    })
    expect(planStats({ ...base, assets: [USDC_BASE] })).toEqual({ _tag: "Matches", by: "token" })
    expect(planStats({ ...base, networks: ["eip155:1" as Caip2] })).toEqual({
      _tag: "Matches",
      by: "token"
    })
  })
})
