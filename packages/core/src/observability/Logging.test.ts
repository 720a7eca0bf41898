import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Logger } from "effect"
import { capturingConsole } from "../../test/CapturingConsole.js"
import type { RequestOutcome } from "../http/RequestOutcome.js"
import { type LoggingSettings, requestLogObserver, withEngineLogging } from "./Logging.js"

/** Runs `effect` under the engine's logging and returns the lines written. */
const linesOf = <A, E>(settings: LoggingSettings | false, effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const { lines, console } = capturingConsole()
    yield* effect.pipe(withEngineLogging(settings), Effect.withConsole(console), Effect.ignore)
    return lines
  })

describe("the engine's log lines", () => {
  it.effect("json: one object per line, time, level and message first, then the fields", () =>
    Effect.gen(function* () {
      const lines = yield* linesOf(
        { level: "info", format: "json" },
        Effect.logWarning("retry", { attempt: 2, reason: "rpc down" }).pipe(
          Effect.annotateLogs({ paymentId: "pay_1", requestId: "req-1" }),
          Effect.withLogSpan("confirm")
        )
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).not.toContain("\n")
      const line = JSON.parse(lines[0]!)
      expect(Object.keys(line)).toEqual([
        "time",
        "level",
        "message",
        "attempt",
        "reason",
        "requestId",
        "paymentId",
        "spans"
      ])
      expect(line).toMatchObject({
        level: "warning",
        message: "retry",
        attempt: 2,
        reason: "rpc down",
        requestId: "req-1",
        paymentId: "pay_1",
        spans: { confirm: expect.any(Number) }
      })
      expect(new Date(line.time).toISOString()).toBe(line.time)
    })
  )

  it.effect("json: a cause as text; fields never replace time, level or message", () =>
    Effect.gen(function* () {
      const lines = yield* linesOf(
        {},
        Effect.logError("step failed", Cause.die(new Error("boom"))).pipe(
          Effect.annotateLogs({ level: "fake", jobId: "job_1" })
        )
      )
      const line = JSON.parse(lines[0]!)
      expect(line.level).toBe("error")
      expect(line["field.level"]).toBe("fake")
      expect(line.jobId).toBe("job_1")
      expect(line.message).toBe("step failed")
      expect(line.cause).toContain("boom")
    })
  )

  it.effect("levels: lines below the level are dropped; none drops all", () =>
    Effect.gen(function* () {
      const everyLevel = Effect.all([
        Effect.logTrace("t"),
        Effect.logDebug("d"),
        Effect.logInfo("i"),
        Effect.logWarning("w"),
        Effect.logError("e")
      ])
      const messages = (lines: ReadonlyArray<string>) => lines.map((l) => JSON.parse(l).message)
      expect(messages(yield* linesOf({}, everyLevel))).toEqual(["i", "w", "e"])
      expect(messages(yield* linesOf({ level: "trace" }, everyLevel))).toEqual([
        "t",
        "d",
        "i",
        "w",
        "e"
      ])
      expect(messages(yield* linesOf({ level: "warning" }, everyLevel))).toEqual(["w", "e"])
      expect(messages(yield* linesOf({ level: "error" }, everyLevel))).toEqual(["e"])
      expect(yield* linesOf({ level: "none" }, everyLevel)).toEqual([])
    })
  )

  it.effect("pretty: one readable line, values with spaces quoted", () =>
    Effect.gen(function* () {
      const lines = yield* linesOf(
        { format: "pretty" },
        Effect.logInfo("payment", { from: "pending", to: "succeeded" }).pipe(
          Effect.annotateLogs({ paymentId: "pay_1", reason: "two words" })
        )
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {4}payment from=pending to=succeeded paymentId=pay_1 reason="two words"$/
      )
    })
  )

  it.effect("false: the current logger stays (an embedder's own)", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const { lines, console } = capturingConsole()
      yield* Effect.logInfo("mine").pipe(
        withEngineLogging(false),
        Effect.withConsole(console),
        Effect.provide(
          Logger.replace(
            Logger.defaultLogger,
            Logger.make((o) => seen.push(o.message))
          )
        )
      )
      expect(seen).toEqual([["mine"]])
      expect(lines).toEqual([])
    })
  )
})

describe("the request line", () => {
  const outcome: RequestOutcome = {
    requestId: "req-9",
    method: "GET",
    route: "/v1/payments/:paymentId",
    status: 200,
    durationMs: 1.23456,
    caller: { partnerId: "ptnr_1" }
  }
  /** The observer made under the engine's logging, as the handler makes it. */
  const observe = (settings: LoggingSettings, outcomes: ReadonlyArray<RequestOutcome>) =>
    Effect.gen(function* () {
      const { lines, console } = capturingConsole()
      const observer = yield* Effect.map(Effect.runtime<never>(), (r) =>
        requestLogObserver(r.fiberRefs)
      ).pipe(withEngineLogging(settings), Effect.withConsole(console))
      for (const o of outcomes) observer(o)
      return lines.map((l) => JSON.parse(l))
    })

  it.effect("at info: method, route template, status, duration, request and caller ids", () =>
    Effect.gen(function* () {
      const [line] = yield* observe({}, [outcome])
      expect(line).toEqual({
        time: expect.any(String),
        level: "info",
        message: "request",
        method: "GET",
        route: "/v1/payments/:paymentId",
        status: 200,
        durationMs: 1.23,
        requestId: "req-9",
        partnerId: "ptnr_1"
      })
    })
  )

  it.effect("a 500 at error with its cause; a 4xx at info; none at warning but the 500", () =>
    Effect.gen(function* () {
      const failed = { ...outcome, status: 500, cause: Cause.die(new Error("a bug")) }
      const refused = { ...outcome, status: 404, route: undefined, caller: undefined }
      const lines = yield* observe({}, [failed, refused])
      expect(lines[0]).toMatchObject({ level: "error", status: 500, cause: expect.any(String) })
      expect(lines[0].cause).toContain("a bug")
      expect(lines[1]).toMatchObject({ level: "info", status: 404, route: null })
      expect(lines[1]).not.toHaveProperty("partnerId")
      const quiet = yield* observe({ level: "warning" }, [outcome, refused, failed])
      expect(quiet.map((l) => l.status)).toEqual([500])
    })
  )
})
