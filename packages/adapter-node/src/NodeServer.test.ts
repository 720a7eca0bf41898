/**
 * The node:http server's limits: the settings `serve` and `applyServerLimits`
 * give node, and the connection cap over real sockets on 127.0.0.1.
 */
import { createServer, get } from "node:http"
import { connect, type Socket } from "node:net"
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { applyServerLimits, serve, serverLimits } from "./NodeServer.js"

const engine = {
  handle: async () => ({ status: 200, headers: { "content-type": "text/plain" }, body: "ok" })
}

/** A connection that sent one keep-alive request: resolves with what came back before it closed or 10 s. */
const exchange = (port: number) =>
  new Promise<{ readonly socket: Socket; readonly answer: string; readonly closed: boolean }>(
    (resolve) => {
      const socket = connect({ host: "127.0.0.1", port })
      let answer = ""
      const done = (closed: boolean) => {
        clearTimeout(timer)
        resolve({ socket, answer, closed })
      }
      const timer = setTimeout(() => done(false), 10_000)
      socket.on("error", () => {})
      socket.on("data", (data: Buffer) => {
        answer += data.toString("latin1")
        if (answer.includes("\r\n\r\nok")) done(false)
      })
      socket.on("close", () => done(true))
      socket.write("GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    }
  )

describe("the node server's limits", () => {
  it("default to 20 s for the headers, 120 s for the request, 25,000 connections", () => {
    expect(serverLimits()).toEqual({
      headersTimeout: 20_000,
      requestTimeout: 120_000,
      maxConnections: 25_000
    })
  })

  it("keep the request timeout above the long-poll cap", () => {
    expect(serverLimits({ maxLongPollMs: 120_000 }).requestTimeout).toBe(130_000)
    expect(serverLimits({ requestTimeoutMs: 5_000, maxLongPollMs: 30_000 }).requestTimeout).toBe(
      40_000
    )
    expect(
      serverLimits({ headersTimeoutMs: 60_000, requestTimeoutMs: 1_000, maxLongPollMs: 0 })
    ).toMatchObject({ headersTimeout: 60_000, requestTimeout: 60_000 })
  })

  it("are set on a server of one's own by applyServerLimits", () => {
    const server = createServer()
    applyServerLimits(server, { maxConnections: 7, headersTimeoutMs: 15_000 })
    expect(server.headersTimeout).toBe(15_000)
    expect(server.requestTimeout).toBe(120_000)
    expect(server.maxConnections).toBe(7)
  })

  it("serve sets them, and a connection past maxConnections is closed unanswered", async () => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const running = yield* serve(engine, {
            host: "127.0.0.1",
            port: 0,
            maxConnections: 2,
            maxLongPollMs: 30_000
          })
          expect(running.server.headersTimeout).toBe(20_000)
          expect(running.server.requestTimeout).toBe(120_000)
          expect(running.server.maxConnections).toBe(2)
          const open = yield* Effect.promise(() =>
            Promise.all([exchange(running.port), exchange(running.port)])
          )
          for (const { answer, closed } of open) {
            expect(closed).toBe(false)
            expect(answer).toMatch(/^HTTP\/1\.1 200/)
          }
          const third = yield* Effect.promise(() => exchange(running.port))
          expect(third.closed).toBe(true)
          expect(third.answer).toBe("")
          // One of the two goes: a new one gets in.
          open[0]!.socket.destroy()
          let again = third
          for (let i = 0; i < 50 && again.answer === ""; i++) {
            yield* Effect.sleep("100 millis")
            again = yield* Effect.promise(() => exchange(running.port))
          }
          expect(again.answer).toMatch(/^HTTP\/1\.1 200/)
          for (const { socket } of [open[1]!, again]) socket.destroy()
        })
      )
    )
  }, 60_000)
})

/** GETs `url` on a connection of its own: its body, or `failed: <reason>` when it fails. */
const heldRequest = (url: string) =>
  new Promise<string>((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.on("end", () => resolve(body))
      response.on("error", (error) => resolve(`failed: ${error.message}`))
    })
    request.on("error", (error) => resolve(`failed: ${error.message}`))
  })

describe("the node server's stop", () => {
  /** An engine whose every request is held until it is drained (or never, without `drain`). */
  const holding = (withDrain: boolean) => {
    const waiting: Array<() => void> = []
    const handle = () =>
      new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve) => {
        waiting.push(() => resolve({ status: 200, headers: {}, body: "drained" }))
      })
    return {
      handle,
      ...(withDrain
        ? {
            drain: () => {
              for (const answer of waiting.splice(0)) answer()
            }
          }
        : {}),
      waiting: () => waiting.length
    }
  }

  /**
   * Serves `engine`, holds one request, stops: what the client got, and when the stop ended.
   * `by: "interrupt"` stops as the standalone server does on a signal: the fiber holding the
   * server's scope is interrupted, and its release runs with that interruption pending.
   */
  const stopWhileHeld = (
    engine: ReturnType<typeof holding>,
    shutdownGrace: number,
    by: "close" | "interrupt" = "close"
  ) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const url = yield* Deferred.make<string>()
        const serving = yield* Effect.fork(
          Effect.scoped(
            Effect.gen(function* () {
              const running = yield* serve(engine, { host: "127.0.0.1", port: 0, shutdownGrace })
              yield* Deferred.succeed(url, running.url)
              if (by === "interrupt") return yield* Effect.never
              yield* Effect.sleep("50 millis")
              while (engine.waiting() === 0) yield* Effect.sleep("10 millis")
            })
          )
        )
        // A connection of its own (no pool): a socket kept alive from an earlier server on a
        // reused port would fail the request before it reaches the engine.
        let settled: string | undefined
        const answer = heldRequest(`${yield* Deferred.await(url)}/held`).then((text) => {
          settled = text
          return text
        })
        // Until the engine holds the request; a request that fails before it does fails the
        // test with its reason rather than leaving it waiting for the test's timeout.
        while (engine.waiting() === 0) {
          if (settled !== undefined)
            return yield* Effect.die(new Error(`the request never reached the engine: ${settled}`))
          yield* Effect.sleep("10 millis")
        }
        const started = Date.now()
        if (by === "interrupt") yield* Fiber.interrupt(serving)
        else yield* Fiber.join(serving)
        return { closedAfter: Date.now() - started, answer: yield* Effect.promise(() => answer) }
      })
    )

  it("drains the engine: a held request is answered at once, the stop does not wait for it", async () => {
    const stopped = await stopWhileHeld(holding(true), 20_000)
    expect(stopped.answer).toBe("drained")
    expect(stopped.closedAfter).toBeLessThan(2_000)
  }, 30_000)

  it("closes a request still held after the grace, rather than waiting for it", async () => {
    const stopped = await stopWhileHeld(holding(false), 300)
    expect(stopped.answer).toMatch(/^failed: /)
    expect(stopped.closedAfter).toBeGreaterThanOrEqual(250)
    expect(stopped.closedAfter).toBeLessThan(5_000)
  }, 30_000)

  it("gives a request in flight its grace when the stop is an interruption (a signal), then closes it", async () => {
    const stopped = await stopWhileHeld(holding(false), 1_000, "interrupt")
    expect(stopped.answer).toMatch(/^failed: /)
    // Not cut at once by the interruption: the whole grace, then closed.
    expect(stopped.closedAfter).toBeGreaterThanOrEqual(900)
    expect(stopped.closedAfter).toBeLessThan(10_000)
  }, 30_000)

  it("answers a drained request when the stop is an interruption", async () => {
    const stopped = await stopWhileHeld(holding(true), 20_000, "interrupt")
    expect(stopped.answer).toBe("drained")
    expect(stopped.closedAfter).toBeLessThan(2_000)
  }, 30_000)
})
