import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeEvmChain } from "@pay/chain-evm"
import { livemodeOf } from "@pay/core"
import { Effect, Either } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { readPayConfig } from "./payConfig.js"

const dir = mkdtempSync(join(tmpdir(), "pay-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const network = (chainId: string, extra: Record<string, unknown> = {}) => ({
  chainId,
  name: chainId,
  rpcUrl: "https://rpc.example",
  collectorKey: `0x${"5a".repeat(32)}`,
  tokens: [
    {
      asset: `${chainId}/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      priceCurrency: "USD"
    }
  ],
  ...extra
})

let n = 0
const read = (networks: ReadonlyArray<unknown>) => {
  const path = join(dir, `pay-config-${n++}.json`)
  writeFileSync(path, JSON.stringify({ networks }))
  return { path, result: readPayConfig(path, {}) }
}

/** The engine's mode with the file's networks. */
const modeOf = (networks: ReadonlyArray<unknown>) => {
  const { result } = read(networks)
  const setup = Either.getOrThrow(result)
  return livemodeOf(Effect.runSync(makeEvmChain(setup.networks)).networks)
}

describe("PAY_CONFIG networks' testnet", () => {
  it("is false when absent, and as given when a boolean", () => {
    const { result } = read([
      network("eip155:8453"),
      network("eip155:84532", { testnet: true }),
      network("eip155:1", { testnet: false })
    ])
    expect(Either.getOrThrow(result).networks.map((n) => n.testnet)).toEqual([false, true, false])
  })

  it("makes the engine live unless every network is a testnet", () => {
    expect(modeOf([network("eip155:8453")])).toBe(true)
    expect(modeOf([network("eip155:84532", { testnet: true })])).toBe(false)
    expect(
      modeOf([
        network("eip155:84532", { testnet: true }),
        network("eip155:11155111", { testnet: true })
      ])
    ).toBe(false)
    expect(
      modeOf([
        network("eip155:84532", { testnet: true }),
        network("eip155:8453", { testnet: false })
      ])
    ).toBe(true)
    expect(modeOf([network("eip155:84532", { testnet: true }), network("eip155:8453")])).toBe(true)
  })

  it("refuses anything but true or false, naming the network, in one line", () => {
    for (const wrong of ["true", "yes", 1, 0, null, {}, []]) {
      const { path, result } = read([
        network("eip155:8453"),
        network("eip155:84532", { testnet: wrong })
      ])
      expect(result, JSON.stringify(wrong)).toEqual(
        Either.left(
          `PAY_CONFIG ${path}: networks[1].testnet must be true or false (a JSON boolean, not a string or a number)`
        )
      )
    }
  })
})

describe("PAY_CONFIG jobs", () => {
  const readJobs = (jobs: unknown) => {
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(path, JSON.stringify({ networks: [network("eip155:8453")], jobs }))
    return { path, result: readPayConfig(path, {}) }
  }

  it("gives the chain work its back-off cap and stuck bounds, in the engine's units", () => {
    const { result } = readJobs({
      pollMs: 200,
      leaseSeconds: 20,
      concurrency: 8,
      backoffCapSeconds: 90,
      stuckAfterSeconds: 1_200,
      stuckAfterFailures: 12
    })
    expect(Either.getOrThrow(result).chainWork).toEqual({
      pollMs: 200,
      leaseMs: 20_000,
      concurrency: 8,
      backoffCapMs: 90_000,
      stuckAfterMs: 1_200_000,
      stuckAfterFailures: 12
    })
    // Left out, the engine's defaults apply (chainwork/ChainWorkConfig.ts).
    expect(Either.getOrThrow(readJobs({ pollMs: 200 }).result).chainWork).toEqual({ pollMs: 200 })
  })

  it("refuses bounds out of range, naming them", () => {
    for (const [field, value] of [
      ["backoffCapSeconds", 0],
      ["backoffCapSeconds", 3_601],
      ["stuckAfterSeconds", 0],
      ["stuckAfterFailures", 0],
      ["stuckAfterFailures", 1.5]
    ] as const) {
      const { result } = readJobs({ [field]: value })
      expect(Either.isLeft(result), `${field}: ${value}`).toBe(true)
      expect(Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)).toMatch(
        new RegExp(`jobs\\.${field}`)
      )
    }
  })

  it("says a refused field in the file's unit with the engine's range, and a second of a field in seconds is whole", () => {
    const cases = [
      [{ leaseSeconds: 0 }, "jobs.leaseSeconds must be a whole number of seconds from 1 to 600"],
      [{ leaseSeconds: 1.5 }, "jobs.leaseSeconds must be a whole number of seconds from 1 to 600"],
      [{ pollMs: 5 }, "jobs.pollMs must be a whole number of milliseconds from 10 to 60000"],
      [
        { stuckAfterSeconds: 604_801 },
        "jobs.stuckAfterSeconds must be a whole number of seconds from 1 to 604800"
      ]
    ] as const
    for (const [jobs, says] of cases) {
      const { path, result } = readJobs(jobs)
      expect(Either.getLeft(result).pipe((m) => m._tag === "Some" && m.value)).toBe(
        `PAY_CONFIG ${path}: ${says}`
      )
    }
  })
})

describe("PAY_CONFIG quoteLockSeconds", () => {
  it("is left to the engine's default when the file has none, and given in milliseconds when it has", () => {
    const { result } = read([network("eip155:8453")])
    expect(Either.getOrThrow(result).gateway).toEqual({})
    const path = join(dir, `pay-config-${n++}.json`)
    writeFileSync(
      path,
      JSON.stringify({ networks: [network("eip155:8453")], quoteLockSeconds: 45 })
    )
    expect(Either.getOrThrow(readPayConfig(path, {})).gateway).toEqual({ quoteLockMs: 45_000 })
  })
})
