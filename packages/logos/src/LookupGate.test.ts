/**
 * The DNS lookup gate, with injected resolvers only (no name is ever resolved
 * for real): a lookup that never answers is refused at the time limit, no
 * more than the gate's number run at once, and the three callers (the logo
 * fetcher, the webhook URL guard, the webhook sender) all go through it.
 */
import { describe, expect, it } from "@effect/vitest"
import { WebhookUrlRefused } from "@pay/core"
import { Effect, Exit } from "effect"
import {
  DNS_LOOKUP_TIMEOUT_MS,
  DNS_MAX_CONCURRENT_LOOKUPS,
  LookupTimedOut,
  makeLookupGate,
  type Resolve
} from "./LookupGate.js"
import { makeSafeFetch, type ResolvedAddress, resolveTarget } from "./SafeFetch.js"
import { makeWebhookSender } from "./WebhookSender.js"
import { makeWebhookUrlGuard } from "./WebhookUrlGuardLayer.js"

const never: Resolve = () => new Promise(() => {})

/** A resolver whose lookups answer only when the test says, counting those running at once. */
const heldResolver = () => {
  let running = 0
  let most = 0
  const pending: Array<(answers: ReadonlyArray<ResolvedAddress>) => void> = []
  const started: Array<() => void> = []
  const resolve: Resolve = () =>
    new Promise((answer) => {
      running++
      most = Math.max(most, running)
      pending.push((answers) => {
        running--
        answer(answers)
      })
      for (const wake of started.splice(0)) wake()
    })
  /** Resolves once `n` lookups have been started in all. */
  const startedAtLeast = (n: number): Promise<void> =>
    pending.length + answered >= n
      ? Promise.resolve()
      : new Promise<void>((wake) => started.push(wake)).then(() => startedAtLeast(n))
  let answered = 0
  const answerOne = () => {
    const next = pending.shift()
    if (next === undefined) throw new Error("no lookup is waiting for an answer")
    answered++
    // A private address: without allowPrivate it is refused, so nothing ever connects.
    next([{ address: "10.20.30.40", family: 4 }])
  }
  return {
    resolve,
    answerOne,
    startedAtLeast,
    running: () => running,
    most: () => most
  }
}

describe("the DNS lookup gate", () => {
  it("the process's defaults: 5 s, and 2 at once (below libuv's pool of 4)", () => {
    expect(DNS_LOOKUP_TIMEOUT_MS).toBe(5_000)
    expect(DNS_MAX_CONCURRENT_LOOKUPS).toBeLessThan(4)
  })

  it("refuses a lookup that never answers at the time limit, with a clear message", async () => {
    const gate = makeLookupGate({ timeoutMs: 50 })
    const failure = await gate.lookup(never, "silent.test").then(
      () => undefined,
      (error: unknown) => error
    )
    expect(failure).toBeInstanceOf(LookupTimedOut)
    expect(String((failure as Error).message)).toBe(
      "no DNS answer within 50 ms, the lookup time limit"
    )
  })

  it("runs no more than its number at once; the others wait their turn, in order", async () => {
    const gate = makeLookupGate({ maxConcurrent: 2, timeoutMs: 60_000 })
    const dns = heldResolver()
    const hosts = ["a.test", "b.test", "c.test", "d.test", "e.test"]
    const answers = hosts.map((host) => gate.lookup(dns.resolve, host))
    await dns.startedAtLeast(2)
    expect([dns.running(), gate.running(), gate.waiting()]).toEqual([2, 2, 3])
    // Each answer lets exactly one more start.
    for (let n = 3; n <= 5; n++) {
      dns.answerOne()
      await dns.startedAtLeast(n)
      expect(dns.running()).toBe(2)
    }
    dns.answerOne()
    dns.answerOne()
    const all = await Promise.all(answers)
    expect(all).toHaveLength(5)
    expect(dns.most()).toBe(2)
    expect([gate.running(), gate.waiting()]).toEqual([0, 0])
  })

  it("keeps a timed-out lookup's place until it ends: hung DNS never runs a third at once", async () => {
    const gate = makeLookupGate({ maxConcurrent: 2, timeoutMs: 100 })
    const dns = heldResolver()
    const first = [gate.lookup(dns.resolve, "a.test"), gate.lookup(dns.resolve, "b.test")]
    // Both callers are answered at the limit, but both lookups still run.
    for (const outcome of first) await expect(outcome).rejects.toBeInstanceOf(LookupTimedOut)
    expect(gate.running()).toBe(2)
    // A third caller waits its turn, and is refused at its own limit, never started.
    await expect(gate.lookup(dns.resolve, "c.test")).rejects.toBeInstanceOf(LookupTimedOut)
    expect([dns.running(), dns.most(), gate.waiting()]).toEqual([2, 2, 0])
    // One hung lookup ends: its place is free again.
    dns.answerOne()
    const fourth = gate.lookup(dns.resolve, "d.test")
    await dns.startedAtLeast(3)
    // The other hung one ends, then the fourth's (answers come in order of starting).
    dns.answerOne()
    dns.answerOne()
    await expect(fourth).resolves.toHaveLength(1)
    expect(dns.most()).toBe(2)
  })

  it("frees a place held by a lookup that never settles after the hold limit", async () => {
    const gate = makeLookupGate({ maxConcurrent: 1, timeoutMs: 60_000, holdMs: 20 })
    // The caller stops waiting at once; the lookup (never settling) keeps the one place.
    const controller = new AbortController()
    const hung = gate.lookup(never, "silent.test", controller.signal)
    controller.abort(new Error("gone"))
    await expect(hung).rejects.toThrow("gone")
    expect(gate.running()).toBe(1)
    // The next lookup waits for the hold to end, then runs and is answered.
    const dns = heldResolver()
    const waiting = gate.lookup(dns.resolve, "a.test")
    expect(gate.waiting()).toBe(1)
    await dns.startedAtLeast(1)
    dns.answerOne()
    await expect(waiting).resolves.toHaveLength(1)
    expect(gate.running()).toBe(0)
  })

  it("stops waiting when the caller's signal aborts, and leaves the queue", async () => {
    const gate = makeLookupGate({ maxConcurrent: 1, timeoutMs: 60_000 })
    const dns = heldResolver()
    const running = gate.lookup(dns.resolve, "a.test")
    const controller = new AbortController()
    const queued = gate.lookup(dns.resolve, "b.test", controller.signal)
    expect(gate.waiting()).toBe(1)
    controller.abort(new Error("gone"))
    await expect(queued).rejects.toThrow("gone")
    expect(gate.waiting()).toBe(0)
    dns.answerOne()
    await running
  })
})

describe("every lookup of the package goes through the gate", () => {
  const url = new URL("https://silent.test/logo.png")

  it("resolveTarget: a host that never answers is unreachable, saying so", async () => {
    const target = await resolveTarget(url, {
      allowPrivate: false,
      resolve: never,
      lookups: makeLookupGate({ timeoutMs: 50 })
    })
    expect(target).toEqual({
      ok: false,
      kind: "unreachable",
      message: "could not resolve silent.test: no DNS answer within 50 ms, the lookup time limit"
    })
  })

  it("the logo fetcher refuses within the lookup's limit, under its own longer one", async () => {
    const fetch = makeSafeFetch({
      resolve: never,
      timeoutMs: 60_000,
      lookups: makeLookupGate({ timeoutMs: 50 })
    })
    const result = await fetch(url.href)
    expect(result).toMatchObject({
      ok: false,
      kind: "unreachable",
      message: "could not resolve silent.test: no DNS answer within 50 ms, the lookup time limit"
    })
  })

  it.effect("a webhook URL whose host never answers is refused at registration", () =>
    Effect.gen(function* () {
      const guard = makeWebhookUrlGuard({
        resolve: never,
        lookups: makeLookupGate({ timeoutMs: 50 })
      })
      const exit = yield* Effect.exit(guard.check("https://silent.test/hook"))
      expect(exit).toEqual(
        Exit.fail(
          new WebhookUrlRefused({
            reason:
              "could not resolve silent.test: no DNS answer within 50 ms, the lookup time limit"
          })
        )
      )
    })
  )

  it.effect("a webhook send to a host that never answers fails with the lookup's reason", () =>
    Effect.gen(function* () {
      const sender = makeWebhookSender({
        resolve: never,
        lookups: makeLookupGate({ timeoutMs: 50 })
      })
      const result = yield* sender.send({
        url: "https://silent.test/hook",
        headers: {},
        body: "{}",
        timeoutMs: 60_000,
        maxResponseBytes: 1024
      })
      expect(result).toMatchObject({
        status: null,
        error: "could not resolve silent.test: no DNS answer within 50 ms, the lookup time limit"
      })
    })
  )

  it("many logo fetches at once run no more than the gate's lookups at once", async () => {
    const dns = heldResolver()
    const fetch = makeSafeFetch({
      resolve: dns.resolve,
      maxConcurrent: 8,
      lookups: makeLookupGate({ maxConcurrent: 2, timeoutMs: 60_000 })
    })
    // Each answer is a private address, refused: no fetch ever connects.
    const results = Array.from({ length: 6 }, (_, i) => fetch(`https://h${i}.test/logo.png`))
    await dns.startedAtLeast(2)
    expect(dns.running()).toBe(2)
    for (let n = 3; n <= 6; n++) {
      dns.answerOne()
      await dns.startedAtLeast(n)
      expect(dns.running()).toBeLessThanOrEqual(2)
    }
    dns.answerOne()
    dns.answerOne()
    for (const result of await Promise.all(results)) {
      expect(result).toMatchObject({ ok: false, kind: "address_not_allowed" })
    }
    expect(dns.most()).toBe(2)
  })
})
