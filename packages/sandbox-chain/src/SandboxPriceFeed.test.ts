/**
 * The sandbox's price feeds answer as Chainlink's AggregatorV3Interface does:
 * their start values, a new round for each `setPrice`, a round with the times
 * given (stale) reported as given, and an unknown round refused.
 */
import { Effect, Exit, Scope } from "effect"
import type { BaseError } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PRICE_FEED_ADDRESSES } from "./Keys.js"
import { make, type SandboxChainService } from "./SandboxChain.js"
import { SandboxPriceFeed } from "./SandboxPriceFeed.artifact.js"

let chain: SandboxChainService
let scope: Scope.CloseableScope

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  chain = await Effect.runPromise(Scope.extend(make(), scope))
}, 60_000)

afterAll(() => (scope === undefined ? undefined : Effect.runPromise(Scope.close(scope, Exit.void))))

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const feed = (pair: keyof typeof PRICE_FEED_ADDRESSES) =>
  ({ address: PRICE_FEED_ADDRESSES[pair], abi: SandboxPriceFeed.abi }) as const

const latestRound = (pair: keyof typeof PRICE_FEED_ADDRESSES) =>
  chain.publicClient.readContract({ ...feed(pair), functionName: "latestRoundData" })

const latest = () => chain.publicClient.getBlock().then((b) => b.timestamp)

describe("the sandbox's price feeds", () => {
  it("start at ETH 3,000.00 and EUR 1.08 USD, 8 decimals, round 1", async () => {
    expect(chain.priceFeeds).toEqual(PRICE_FEED_ADDRESSES)
    for (const [pair, description, answer] of [
      ["ETH/USD", "ETH / USD", 300_000_000_000n],
      ["EUR/USD", "EUR / USD", 108_000_000n]
    ] as const) {
      const [decimals, text, version, round] = await Promise.all([
        chain.publicClient.readContract({ ...feed(pair), functionName: "decimals" }),
        chain.publicClient.readContract({ ...feed(pair), functionName: "description" }),
        chain.publicClient.readContract({ ...feed(pair), functionName: "version" }),
        latestRound(pair)
      ])
      expect([decimals, text, version]).toEqual([8, description, 1n])
      const [roundId, latestAnswer, startedAt, updatedAt, answeredInRound] = round
      expect([roundId, latestAnswer, answeredInRound]).toEqual([1n, answer, 1n])
      expect(updatedAt).toBe(startedAt)
      expect(updatedAt).toBeGreaterThan(0n)
    }
  })

  it("setPrice starts a new round now; the earlier round stays readable", async () => {
    const [before] = await latestRound("ETH/USD")
    const { roundId } = await run(chain.setPrice("ETH/USD", 312_345_000_000n))
    expect(roundId).toBe(before + 1n)
    const now = await latest()
    const [latestId, answer, startedAt, updatedAt, answeredInRound] = await latestRound("ETH/USD")
    expect([latestId, answer, startedAt, updatedAt, answeredInRound]).toEqual([
      roundId,
      312_345_000_000n,
      now,
      now,
      roundId
    ])
    const [, previous] = await chain.publicClient.readContract({
      ...feed("ETH/USD"),
      functionName: "getRoundData",
      args: [before]
    })
    expect(previous).not.toBe(312_345_000_000n)
  })

  it("setPrice with times reports a stale round as given", async () => {
    const now = await latest()
    const round = { startedAt: now - 7_200n, updatedAt: now - 3_600n }
    const { roundId } = await run(chain.setPrice("EUR/USD", 109_500_000n, round))
    expect(await latestRound("EUR/USD")).toEqual([
      roundId,
      109_500_000n,
      round.startedAt,
      round.updatedAt,
      roundId
    ])
    expect(
      await chain.publicClient.readContract({
        ...feed("EUR/USD"),
        functionName: "getRoundData",
        args: [roundId]
      })
    ).toEqual([roundId, 109_500_000n, round.startedAt, round.updatedAt, roundId])
  })

  it("serves as a sequencer-uptime feed: 1 down since startedAt, then 0 up", async () => {
    const now = await latest()
    await run(chain.setPrice("EUR/USD", 1n, { startedAt: now - 60n, updatedAt: now - 60n }))
    const [, down, since] = await latestRound("EUR/USD")
    expect([down, since]).toEqual([1n, now - 60n])
    await run(chain.setPrice("EUR/USD", 0n))
    const [, up] = await latestRound("EUR/USD")
    expect(up).toBe(0n)
  })

  it("refuses an unknown round, a stranger's update and an unknown pair", async () => {
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => "ok",
        (e: BaseError) => e.shortMessage
      )
    expect(
      await refusal(
        chain.publicClient.readContract({
          ...feed("ETH/USD"),
          functionName: "getRoundData",
          args: [1_000n]
        })
      )
    ).toMatch(/No data present/)
    expect(
      await refusal(
        chain.publicClient.simulateContract({
          ...feed("ETH/USD"),
          account: chain.collector.address,
          functionName: "setAnswer",
          args: [1n]
        })
      )
    ).toMatch(/only the owner/)
    const unknown = await run(Effect.flip(chain.setPrice("BTC/USD" as "ETH/USD", 1n)))
    expect(unknown.message).toMatch(/No price feed for "BTC\/USD"/)
  })
})
