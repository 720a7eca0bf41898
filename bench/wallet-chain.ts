/**
 * The chain's share of a wallet flow: the engine's chain calls for one payment (EvmChain.ts:
 * confirm's balance check; the submission's simulation, nonce, fee and gas look-ups and the
 * signed transaction; the receipt its watcher reads), made with viem as the engine makes
 * them, but from this process through the sandbox's /sandbox/rpc, the collector's dev key
 * signing. Every JSON-RPC request is timed, and `eth_chainId` (no EVM work) gives the
 * route's own round trip, so what is left is the in-process EVM's time.
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  parseSignature,
  toHex
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { signTypedDataJson } from "../examples/wallet/payWithWallet.js"
import { typedDataJson } from "../packages/core/src/chain/Eip3009.js"
import { eip3009TokenAbi } from "../packages/core/src/chain/evm/Eip3009Abi.js"
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
  /** The same for the calls the engine makes in confirm, in its submission, in its watcher. */
  readonly evmMsP50ByStage: Readonly<Record<Stage, number>>
  /** The server's CPU time per round: the EVM, and the route's HTTP and JSON work. */
  readonly serverCpuMsPerRound: number
}

export type Stage = "confirm" | "submit" | "watch"
const STAGES: ReadonlyArray<Stage> = ["confirm", "submit", "watch"]

const FLOOR_SAMPLES = 100

export const measureChain = async (options: {
  readonly server: ServerProcess
  readonly http: Http
  /** Funded buyers, one a round: `warmup` first, not counted. */
  readonly buyers: ReadonlyArray<Buyer>
  readonly warmup: number
}): Promise<ChainResult> => {
  const { server, http } = options
  const sandbox = await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
  const token = sandbox.tokens?.[0]?.asset?.split(":").at(-1) as Address | undefined
  if (token === undefined) {
    throw new Error(`GET /sandbox lists no token: ${JSON.stringify(sandbox)}`)
  }
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
  const transport = custom(
    {
      request: async ({ method, params }: { method: string; params?: unknown }) => {
        const start = performance.now()
        const answer = await rpc(method, params ?? [])
        timed.push({ label, method, ms: performance.now() - start })
        if (answer.error !== undefined) {
          // With its code, as the engine's in-process transport rejects: viem then knows an
          // unsupported method (eth_fillTransaction) and stops asking, as in the engine.
          throw Object.assign(new Error(`/sandbox/rpc ${method}: ${answer.error.message}`), {
            code: answer.error.code,
            data: answer.error.data
          })
        }
        return answer.result
      }
    },
    { retryCount: 0 }
  )
  const chain = defineChain({
    id: 31337,
    name: "Pay sandbox",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [] } }
  })
  // As EvmChain.ts makes its clients.
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 25 })
  const walletClient = createWalletClient({ chain, account: collector, transport })
  const token712 = { address: token, abi: eip3009TokenAbi } as const
  const [, name, version, chainId, verifyingContract] = await publicClient.readContract({
    ...token712,
    functionName: "eip712Domain"
  })
  const domain = { name, version, chainId, verifyingContract }

  const round = async (buyer: Buyer) => {
    // The buyer's signature, as a wallet makes it: not timed.
    const auth = {
      from: buyer.address,
      to: collector.address,
      value: 10_500_000n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
    }
    const signature = await signTypedDataJson(buyer.key, typedDataJson(domain, auth))
    const { v, r, s, yParity } = parseSignature(signature)
    const args = [
      auth.from,
      auth.to,
      auth.value,
      auth.validAfter,
      auth.validBefore,
      auth.nonce,
      Number(v ?? BigInt(yParity + 27)),
      r,
      s
    ] as const
    label = "balanceOf (confirm)"
    const balance = await publicClient.readContract({
      ...token712,
      functionName: "balanceOf",
      args: [buyer.address]
    })
    if (balance < auth.value) throw new Error(`chain round: ${buyer.address} holds ${balance}`)
    label = "simulate receiveWithAuthorization (submit)"
    await publicClient.simulateContract({
      ...token712,
      account: collector.address,
      functionName: "receiveWithAuthorization",
      args
    })
    label = "nonce (submit)"
    const nonce = await publicClient.getTransactionCount({
      address: collector.address,
      blockTag: "pending"
    })
    label = "send receiveWithAuthorization (submit)"
    const hash = await walletClient.writeContract({
      ...token712,
      functionName: "receiveWithAuthorization",
      args,
      nonce
    })
    label = "receipt (watch)"
    const receipt = await publicClient.waitForTransactionReceipt({ hash, confirmations: 1 })
    if (receipt.status !== "success") throw new Error(`chain round: ${hash} reverted`)
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
