/**
 * The chain's share of a wallet flow: the engine's chain calls for one payment, made by
 * the engine's own EVM adapter (EvmChain.ts, as ChainWork.ts calls it) in this process,
 * through the sandbox's /sandbox/rpc, the collector's dev key signing. Confirm reads the
 * buyer's balance (the token's domain is cached); the collect job estimates the
 * authorization's call against the pending block, takes a nonce (the collector's counts,
 * latest and pending), quotes the fees (the latest block, the suggested tip), signs the
 * EIP-1559 transaction here and sends it raw; its watch reads the head and the receipt;
 * the settle job does the same for the ERC-20 transfer to the merchant. Every JSON-RPC
 * request is timed, and `eth_chainId` (no EVM work) gives the route's own round trip, so
 * what is left is the in-process EVM's time.
 */

import { signTypedDataJson } from "@pay/sandbox"
import { Effect } from "effect"
import { type Address, custom, type Hex, toHex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { makeEvmChain } from "../packages/chain-evm/src/EvmChain.js"
import { signingRequest, typedDataJson } from "../packages/core/src/chain/Permission.js"
import type { Caip2, Caip19 } from "../packages/core/src/shared/Caip.js"
import { COLLECTOR_PRIVATE_KEY } from "../packages/sandbox-chain/src/Keys.js"
import type { ServerProcess } from "./server-process.js"
import {
  type Buyer,
  expectStatus,
  type Http,
  MS_PER_TICK,
  type Percentiles,
  percentiles
} from "./wallet-support.js"

export interface ChainCall {
  /** What the engine makes the call for, and where. */
  readonly label: string
  readonly method: string
  readonly ms: Percentiles
}

export interface ChainResult {
  readonly rounds: number
  /** `eth_chainId` through /sandbox/rpc: the route's round trip with no EVM work. */
  readonly floorMs: Percentiles
  /** In the order the engine makes them for one payment. */
  readonly calls: ReadonlyArray<ChainCall>
  /** Every call of one round, summed, per round. */
  readonly roundMs: Percentiles
  /** The calls' p50s less one `eth_chainId` p50 each: the EVM's share of a round, roughly. */
  readonly evmMsPerRoundP50: number
  /** The same for the calls the engine makes in confirm, in the collect job's submission,
   * in its watch, and in the settle job (its submission and its watch). */
  readonly evmMsP50ByStage: Readonly<Record<Stage, number>>
  /** The server's CPU time per round: the EVM, and the route's HTTP and JSON work. */
  readonly serverCpuMsPerRound: number
}

export type Stage = "confirm" | "submit" | "watch" | "settle"
const STAGES: ReadonlyArray<Stage> = ["confirm", "submit", "watch", "settle"]

const FLOOR_SAMPLES = 100
/** What a bench payment moves: 10.50 USDC, settled whole (the sandbox takes no fees). */
const PAYMENT_VALUE = 10_500_000n
/** The bench merchant's settlement destination (wallet.ts). */
const DESTINATION: Address = "0x000000000000000000000000000000000000dEaD"
/** The sandbox network's watch interval (packages/sandbox/src/SandboxEngine.ts). */
const POLL_INTERVAL_MS = 25

export const measureChain = async (options: {
  readonly server: ServerProcess
  readonly http: Http
  /** Funded buyers, one a round: `warmup` first, not counted. */
  readonly buyers: ReadonlyArray<Buyer>
  readonly warmup: number
}): Promise<ChainResult> => {
  const { server, http } = options
  const sandbox = await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
  const token = sandbox.tokens?.[0] as
    | { asset: Caip19; symbol: string; name: string; decimals: number }
    | undefined
  if (token === undefined) {
    throw new Error(`GET /sandbox lists no token: ${JSON.stringify(sandbox)}`)
  }
  const asset = token.asset
  const chainId = asset.slice(0, asset.indexOf("/")) as Caip2
  const collector = privateKeyToAccount(COLLECTOR_PRIVATE_KEY)
  if (collector.address !== sandbox.collector) {
    throw new Error(`the sandbox's collector is ${sandbox.collector}, not the documented dev key`)
  }

  let label = ""
  let timed: Array<{ label: string; method: string; ms: number }> = []
  let id = 0
  const rpc = (method: string, params: unknown) =>
    expectStatus(
      http.call("POST", "/sandbox/rpc", { body: { jsonrpc: "2.0", id: ++id, method, params } }),
      `/sandbox/rpc ${method}`
    )
  const request = async ({ method, params }: { method: string; params?: unknown }) => {
    const start = performance.now()
    const answer = await rpc(method, params ?? [])
    timed.push({ label, method, ms: performance.now() - start })
    if (answer.error !== undefined) {
      // With its code, as the engine's in-process transport rejects: viem then reads the
      // node's refusal as the engine's adapter does.
      throw Object.assign(new Error(`/sandbox/rpc ${method}: ${answer.error.message}`), {
        code: answer.error.code,
        data: answer.error.data
      })
    }
    return answer.result
  }
  // The engine's adapter, configured as the sandbox configures it (sandbox.ts).
  const chain = await Effect.runPromise(
    makeEvmChain([
      {
        chainId,
        name: "Pay sandbox",
        collectorKey: COLLECTOR_PRIVATE_KEY,
        confirmations: 1,
        etaSeconds: 1,
        transport: custom({ request }, { retryCount: 0 }),
        pollingIntervalMs: POLL_INTERVAL_MS,
        tokens: [
          {
            asset,
            symbol: token.symbol,
            name: token.name,
            decimals: token.decimals,
            iconUrl: null,
            priceCurrency: "USD"
          }
        ]
      }
    ])
  )
  const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)
  // Read once and cached, as the engine caches it (its first options or fetch reads it).
  label = "token domain (options, once)"
  const domain = await run(chain.tokenDomain(asset))

  /** The collector's transaction, as ChainWork's sendTransfer makes it, then one watch look. */
  const sendAndWatch = async (call: { to: Address; data: Hex; gas: bigint }, stage: string) => {
    label = `nonce, latest + pending (${stage})`
    const nonce = (await run(chain.collectorNonce(chainId))).pending
    label = `fees: block + tip (${stage})`
    const fees = await run(chain.fees(chainId))
    const signed = await run(chain.sign(chainId, { ...call, ...fees, nonce }))
    label = `send raw (${stage})`
    await run(chain.broadcast(chainId, signed.raw))
    // One look, as the engine's after its poll interval: automine has the receipt by then.
    const watchStage = stage === "submit" ? "watch" : stage
    label = `head (${watchStage})`
    const head = await run(chain.head(chainId))
    label = `receipt (${watchStage})`
    const state = await run(chain.transactionState(chainId, signed.hash))
    if (state._tag !== "Mined" || !state.success || head.number < state.blockNumber) {
      const mined = state._tag === "Mined" ? ` in block ${state.blockNumber}` : ""
      throw new Error(
        `chain round: ${signed.hash} is ${state._tag}${mined} (success: ${state._tag === "Mined" && state.success}) at head ${head.number}`
      )
    }
  }

  const round = async (buyer: Buyer) => {
    // The buyer's signature, as a wallet makes it: not timed.
    const auth = {
      from: buyer.address,
      to: collector.address,
      value: PAYMENT_VALUE,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
    }
    const permission = { kind: "eip3009", authorization: auth } as const
    const signature = await signTypedDataJson(
      buyer.key,
      typedDataJson(signingRequest(permission, domain.chainId, domain))
    )
    label = "token domain (confirm, cached)"
    await run(chain.tokenDomain(asset))
    label = "balanceOf (confirm)"
    const balance = await run(chain.balanceOf(asset, buyer.address))
    // Read beside the balance at confirm: a key pair's address with code is tried on the token.
    label = "code at the buyer (confirm)"
    await run(chain.codeAt(chainId, buyer.address))
    if (balance < auth.value) throw new Error(`chain round: ${buyer.address} holds ${balance}`)
    label = "estimate receiveWithAuthorization (submit)"
    await sendAndWatch(await run(chain.receiveCall(asset, permission, signature)), "submit")
    label = "estimate transfer (settle)"
    await sendAndWatch(await run(chain.transferCall(asset, DESTINATION, auth.value)), "settle")
  }

  for (const buyer of options.buyers.slice(0, options.warmup)) await round(buyer)
  const floor: Array<number> = []
  for (let i = 0; i < FLOOR_SAMPLES; i++) {
    const start = performance.now()
    await rpc("eth_chainId", [])
    floor.push(performance.now() - start)
  }
  const measured = options.buyers.slice(options.warmup)
  timed = []
  const rounds: Array<number> = []
  const cpuBefore = server.cpuTicks()
  for (const buyer of measured) {
    const before = timed.length
    await round(buyer)
    rounds.push(timed.slice(before).reduce((sum, t) => sum + t.ms, 0))
  }
  const serverCpuMsPerRound = ((server.cpuTicks() - cpuBefore) * MS_PER_TICK) / measured.length

  const floorMs = percentiles(floor)
  const groups = new Map<string, { label: string; method: string; ms: Array<number> }>()
  for (const t of timed) {
    const key = `${t.label} ${t.method}`
    const group = groups.get(key) ?? { label: t.label, method: t.method, ms: [] }
    group.ms.push(t.ms)
    groups.set(key, group)
  }
  const calls = [...groups.values()].map((g) => ({
    label: g.label,
    method: g.method,
    ms: percentiles(g.ms),
    perRound: g.ms.length / measured.length
  }))
  const evm = (of: ReadonlyArray<(typeof calls)[number]>) =>
    of.reduce((sum, c) => sum + (c.ms.p50 - floorMs.p50) * c.perRound, 0)
  return {
    rounds: measured.length,
    floorMs,
    calls: calls.map(({ perRound: _, ...call }) => call),
    roundMs: percentiles(rounds),
    evmMsPerRoundP50: evm(calls),
    evmMsP50ByStage: Object.fromEntries(
      STAGES.map((stage) => [stage, evm(calls.filter((c) => c.label.endsWith(`(${stage})`)))])
    ) as Record<Stage, number>,
    serverCpuMsPerRound
  }
}
