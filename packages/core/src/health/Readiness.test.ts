import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Chain, type ChainNetwork, ChainUnavailable } from "../chain/Chain.js"
import type { Reply } from "../http/Exchange.js"
import type { Exchange } from "../http/Route.js"
import type { Caip2 } from "../shared/Caip.js"
import { checkReadiness, makeReadinessRoute, withoutSecrets } from "./Readiness.js"
import { type MigrationState, StorageProbe, StorageUnavailable } from "./StorageProbe.js"

const network = (chainId: string) => ({ chainId: chainId as Caip2 }) as ChainNetwork

/** A chain whose heads answer as `heads` says: a block number, a failure, or never. */
const chainLayer = (heads: Record<string, number | string | "hang">) =>
  Layer.succeed(Chain, {
    networks: Object.keys(heads).map(network),
    head: (chainId: Caip2) => {
      const head = heads[chainId]
      return head === "hang"
        ? Effect.never
        : typeof head === "number"
          ? Effect.succeed({ number: BigInt(head), timestamp: 0n })
          : Effect.fail(new ChainUnavailable({ chainId, message: String(head) }))
    }
  } as unknown as Chain["Type"])

const probeLayer = (migrations: MigrationState | string) =>
  Layer.succeed(
    StorageProbe,
    StorageProbe.of({
      migrations:
        typeof migrations === "string"
          ? Effect.fail(new StorageUnavailable({ message: migrations }))
          : Effect.succeed(migrations),
      chainJobQueue: () => Effect.succeed({ active: 0, due: 0, oldestDueAt: null, stuck: 0 }),
      stuckJobs: () => Effect.succeed([])
    })
  )

const current = { applied: 22, latestApplied: 22, latestKnown: 22, known: 22 }

const readiness = (
  migrations: MigrationState | string,
  heads: Record<string, number | string | "hang">,
  timeout = 50
) =>
  checkReadiness(timeout).pipe(
    Effect.provide(Layer.merge(probeLayer(migrations), chainLayer(heads)))
  )

describe("checkReadiness", () => {
  it.effect("is ready when the database answers, is current, and every network answers", () =>
    Effect.gen(function* () {
      const ready = yield* readiness(current, { "eip155:1": 7, "eip155:8453": 9 })
      expect(ready.status).toBe("ready")
      expect(ready.checks.map((c) => [c.name, c.status, c.detail])).toEqual([
        ["database", "ok", undefined],
        ["migrations", "ok", "22 of 22 applied"],
        ["network eip155:1", "ok", "block 7"],
        ["network eip155:8453", "ok", "block 9"]
      ])
    })
  )

  it.effect("is not ready when the latest migration the code knows is not applied", () =>
    Effect.gen(function* () {
      const behind = yield* readiness({ ...current, applied: 21, latestApplied: 21 }, {})
      expect(behind.status).toBe("not_ready")
      expect(behind.checks[1]).toMatchObject({
        name: "migrations",
        status: "failing",
        detail: "21 of 22 applied, the latest (22) is not: restart the server to apply them"
      })
      const ahead = yield* readiness({ ...current, applied: 23, latestApplied: 23 }, {})
      expect(ahead.checks[1]!.detail).toBe(
        "the database is at migration 23, newer than this code's 22: run the newer version"
      )
    })
  )

  it.effect(
    "names the database failing, without its URL's secrets, and the migrations unknown",
    () =>
      Effect.gen(function* () {
        const down = yield* readiness(
          "connect ECONNREFUSED for postgres://pay:hunter2@db.internal:5432/pay\nat stack",
          { "eip155:1": 1 }
        )
        expect(down.status).toBe("not_ready")
        expect(down.checks.slice(0, 2)).toMatchObject([
          {
            name: "database",
            status: "failing",
            detail: "connect ECONNREFUSED for postgres://db.internal:5432/…"
          },
          {
            name: "migrations",
            status: "failing",
            detail: "not known: the database did not answer"
          }
        ])
        expect(JSON.stringify(down)).not.toContain("hunter2")
      })
  )

  it.live("names a failing and a hung network, within the time limit, the others ok", () =>
    Effect.gen(function* () {
      const started = Date.now()
      const result = yield* readiness(
        current,
        {
          "eip155:1": "HTTP request failed. URL: https://rpc.example/v2/KEY123",
          "eip155:10": "hang",
          "eip155:8453": 5
        },
        100
      )
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(result.status).toBe("not_ready")
      expect(result.checks.slice(2).map((c) => [c.name, c.status, c.detail])).toEqual([
        ["network eip155:1", "failing", "HTTP request failed. URL: https://rpc.example/…"],
        ["network eip155:10", "failing", "did not answer within 100ms"],
        ["network eip155:8453", "ok", "block 5"]
      ])
    })
  )
})

describe("the /ready route", () => {
  it.live(
    "shares a running check between the probes that arrive meanwhile, and keeps no answer",
    () =>
      Effect.gen(function* () {
        let calls = 0
        const slowChain = Layer.succeed(Chain, {
          networks: [network("eip155:1")],
          head: () =>
            Effect.sync(() => calls++).pipe(
              Effect.zipRight(Effect.sleep(100)),
              Effect.as({ number: 3n, timestamp: 0n })
            )
        } as unknown as Chain["Type"])
        const route = yield* makeReadinessRoute.pipe(
          Effect.provide(Layer.merge(probeLayer(current), slowChain))
        )
        const probe = route.handle({} as Exchange) as Effect.Effect<Reply>
        const replies = yield* Effect.all([probe, probe, probe, probe, probe], {
          concurrency: "unbounded"
        })
        expect(calls).toBe(1)
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
        expect(JSON.parse(replies[0]!.body).checks[2].detail).toBe("block 3")
        yield* probe
        expect(calls).toBe(2)
      })
  )
})

describe("withoutSecrets", () => {
  it("keeps a URL's origin only: no user, password, path or query", () => {
    expect(withoutSecrets("at https://u:p@rpc.example:8545/v2/abc?key=1 now")).toBe(
      "at https://rpc.example:8545/… now"
    )
    expect(withoutSecrets("no url here")).toBe("no url here")
  })
})
