/**
 * The wallet flow on the sandbox chain (issue 5): the engine's own time for what a wallet
 * does to pay (options, fetch, confirm), then how long the payment takes to have its
 * transaction submitted, to succeed, and to be settled (the amount less fees sent on to
 * the merchant by the engine's settle job); one wallet at a time (the engine's latency)
 * and several at once (its throughput, to `succeeded` and to `settled`), with the server's
 * CPU time per flow and its memory. Then the chain's share (wallet-chain.ts): the engine's
 * chain calls for one payment, sent bare to /sandbox/rpc, so the report can tell the
 * engine from the in-process EVM.
 *
 * The engine runs as `npm start` runs it (its bundle on plain node), in sandbox mode (no
 * PAY_CONFIG), on a SQLite file in a temporary directory. The buyers' keys are made and
 * funded by the faucet beforehand; each signature is made by this process between fetch
 * and confirm, outside the timed calls: signing is the wallet's work. The transaction's
 * hash and the settlement are seen in the server's database (a read-only connection of
 * this process, polled); after each phase the partner's view of every payment
 * (GET /v1/payments/{id}) is checked to show it settled.
 *
 * Then the Permit2 rows (wallet-permit2.ts): USDT paid through Permit2 with as many wallets
 * at once, by buyers holding an allowance already and by buyers approving in the flow, and
 * the USDC phase again after them; then the native row (wallet-native.ts): the sandbox's ETH
 * with as many wallets at once, each buyer sending its own transfer (signed, not timed, then
 * sent raw through /sandbox/rpc within the timed flow) and confirming with its hash; then the
 * smart-account rows (wallet-smart.ts).
 *
 * Part of `npm run bench`; `npm run bench:wallet` runs it alone and writes
 * bench/results/wallet.json. BENCH_WALLET_PAYMENTS (per phase), BENCH_WALLET_CONCURRENCY,
 * BENCH_WALLET_PERMIT2_PAYMENTS (per Permit2 row; default BENCH_WALLET_PAYMENTS, 0 for none),
 * BENCH_WALLET_NATIVE_PAYMENTS (the native row; default BENCH_WALLET_PAYMENTS, 0 for none),
 * BENCH_WALLET_SMART_PAYMENTS and BENCH_WALLET_CHAIN_ROUNDS size it; BENCH_WALLET_CPU_PROF=<dir> has the server write a
 * V8 CPU profile there when it stops (each phase's `monotonicUs` locates it in the
 * profile). Bounded in time; it stops its server and removes its files whatever happens.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { signTypedDataJson } from "@pay/sandbox"
import Database from "better-sqlite3"
import {
  BENCH_API_KEY,
  createMerchant,
  createPayment,
  inParallel,
  paymentHeaders,
  type Target
} from "./client.js"
import { killAllNow, ROOT, type ServerProcess, startServer } from "./server-process.js"
import { type ChainResult, measureChain } from "./wallet-chain.js"
import {
  formatNative,
  NATIVE_FUNDS,
  type NativeResult,
  nativeBuyers,
  nativeFees,
  nativeMerchant,
  sandboxNative
} from "./wallet-native.js"
import {
  formatPermit2,
  type Permit2Result,
  permit2Buyers,
  sandboxUsdt,
  usdtMerchant
} from "./wallet-permit2.js"
import { SMART_KINDS, type SmartRow, smartBuyers, smartPayments, smartRow } from "./wallet-smart.js"
import {
  type Buyer,
  envInteger,
  expectStatus,
  type Http,
  httpClient,
  type Json,
  MS_PER_TICK,
  monotonicUs,
  newBuyer,
  type Percentiles,
  percentiles,
  REQUEST_TIMEOUT_MS,
  withinDeadline
} from "./wallet-support.js"

export interface WalletSettings {
  /** Payments paid in each phase (one wallet at a time, then `concurrency` at once). */
  readonly payments: number
  readonly concurrency: number
  /** Flows paid first, one at a time, and not counted (JIT, caches, SQLite pages). */
  readonly warmup: number
  /** Rounds of the engine's chain calls for one payment, sent bare to /sandbox/rpc. */
  readonly chainRounds: number
  /** Payments of each kind of account in the smart-account row (wallet-smart.ts). */
  readonly smartPayments: number
  /** Payments in each Permit2 row, with `concurrency` wallets (wallet-permit2.ts); 0: none. */
  readonly permit2Payments: number
  /** Payments in the native (ETH) row, with `concurrency` wallets (wallet-native.ts); 0: none. */
  readonly nativePayments: number
  readonly deadlineMs: number
  /** Where the server writes a V8 CPU profile when it stops (--cpu-prof), if anywhere. */
  readonly cpuProfileDir?: string | undefined
}

/** One wallet flow's times, in milliseconds. */
interface FlowTimes {
  readonly options: number
  readonly fetch: number
  readonly confirm: number
  /** options + fetch + confirm: the engine's time as the wallet waits on it. */
  readonly engine: number
  /** From confirm's answer to the transaction's hash being in the database. */
  readonly submitted: number
  /** From confirm's answer to the long-poll answering "succeeded". */
  readonly succeeded: number
  /** From confirm's answer to the settlement to the merchant recorded (`settled`). */
  readonly settled: number
  /** From sending options to "succeeded", less the signing in between. */
  readonly total: number
  /** The wallet's signature between fetch and confirm (this process; in no time above). */
  readonly sign: number
}

export type Step = keyof FlowTimes
const STEPS: ReadonlyArray<Step> = [
  "options",
  "fetch",
  "confirm",
  "engine",
  "submitted",
  "succeeded",
  "settled",
  "total",
  "sign"
]

export interface WalletPhase {
  readonly wallets: number
  readonly flows: number
  /** The phase's wall time: until its last flow saw its payment settled. */
  readonly seconds: number
  /** Flows taken to "succeeded" per second: flows over the time to the last "succeeded". */
  readonly flowsPerSecond: number
  /** Payments settled per second (the confirm throughput): flows over the time to the last
   * settlement seen. */
  readonly settledPerSecond: number
  readonly ms: Readonly<Record<Step, Percentiles>>
  /** User + system CPU time of the server process (every thread: the EVM too) per flow. */
  readonly serverCpuMsPerFlow: number
  /** This process's CPU time per flow (HTTP client, signing, the database poll). */
  readonly clientCpuMsPerFlow: number
  readonly rssAfterBytes: number
  /** When it ran, in CLOCK_MONOTONIC microseconds: the clock of a V8 CPU profile's samples. */
  readonly monotonicUs: readonly [number, number]
  /** The calls the sandbox chain answered during the phase, per flow (GET /sandbox `rpcCalls`;
   * the engine's, and the wallets' own sends when they send transactions). */
  readonly chainCallsPerFlow: number
  /** The same, by JSON-RPC method. */
  readonly chainCallsPerFlowByMethod: Readonly<Record<string, number>>
  /** The gas of the collection (the engine's transaction taking the buyer's tokens), per flow. */
  readonly collectGas: number
  /** The wallets' own transactions (Permit2 approvals, a native transfer), when they sent any. */
  readonly approval?: {
    /** Sending them (eth_sendRawTransaction through /sandbox/rpc), per flow. */
    readonly sendMs: Percentiles
    /** From the wallet sending its approval to the settlement seen. */
    readonly toSettledMs: Percentiles
    /** Their gas (paid by the buyer), per flow. */
    readonly gas: number
  }
}

/** Issue 18's target: payments taken from confirm to settled, a second, with 10 wallets. */
export const WALLET_THROUGHPUT_TARGET = 100

export const walletThroughputMet = (r: WalletResult): boolean =>
  r.concurrent.settledPerSecond >= WALLET_THROUGHPUT_TARGET

export interface WalletResult {
  readonly settings: Omit<WalletSettings, "cpuProfileDir">
  readonly machine: { readonly cores: number; readonly loadAverageAtStart: number }
  /** `GET /sandbox`, a route with no database or chain work: the HTTP round trip. */
  readonly httpFloorMs: Percentiles
  readonly sequential: WalletPhase
  readonly concurrent: WalletPhase
  /** Key pairs, then Safes and thirdweb accounts deployed and not, one at a time (wallet-smart.ts). */
  readonly smartAccounts: ReadonlyArray<SmartRow>
  /** USDT through Permit2 with `concurrency` wallets, beside `concurrent` (wallet-permit2.ts). */
  readonly permit2?: Permit2Result
  /** ETH, the buyer's own transfer, with `concurrency` wallets, beside `concurrent` (wallet-native.ts). */
  readonly native?: NativeResult
  readonly chain: ChainResult
  readonly memory: {
    readonly rssIdleBytes: number
    readonly rssAfterBytes: number
    readonly rssPeakBytes: number
  }
  readonly cpuProfileDir?: string
}

const WALLET_HEADERS = {
  "api-version": "2026-02-19.preview",
  "sdk-name": "pay-bench-wallet",
  "sdk-version": "0.1.0",
  "sdk-platform": "node",
  accept: "application/json"
}
const SANDBOX_USDC = "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116"
/** The bench's payments are 10.50 USD: 10.5 USDC; each buyer gets 20. */
const BUYER_FUNDS = 20_000_000n
/** How long the wallet's long-poll on status is held. */
const LONG_POLL_MS = 10_000
/** How often the database is read for a recorded transaction and a settlement. */
const DB_POLL_MS = 1
const HTTP_FLOOR_SAMPLES = 200
const CHAIN_WARMUP = 5
/** Permit2 flows of each kind paid one at a time before its rows, not counted. */
const PERMIT2_WARMUP = 10
/** Native (ETH) flows paid one at a time before its row, not counted. */
const NATIVE_WARMUP = 10
const RESULTS = fileURLToPath(new URL("./results/", import.meta.url))

/** A payment's settlement as the database showed it: when it was seen settled, its status. */
interface Seen {
  /** performance.now() when first seen; NaN if never. */
  readonly at: number
  /** `settlement_status` when seen (or last read, when never settled). */
  readonly status: string | null
}

/**
 * Reads the engine's database (its own read-only connection) for each watched payment's
 * transaction hash (`tx_hash`, recorded before the collector sends it) and its settlement
 * (`settlement_status = 'settled'`, written with the settle job's completion).
 */
const transactionWatcher = (file: string) => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  const read = db.prepare<[string], { tx_hash: string | null; settlement_status: string | null }>(
    "SELECT tx_hash, settlement_status FROM payments WHERE id = ?"
  )
  interface Waiting {
    recorded: ((at: number) => void) | undefined
    readonly settled: (seen: Seen) => void
    readonly until: number
  }
  const waiting = new Map<string, Waiting>()
  const timer = setInterval(() => {
    const now = performance.now()
    for (const [id, w] of waiting) {
      const row = read.get(id)
      if (w.recorded !== undefined && row?.tx_hash != null) {
        w.recorded(now)
        w.recorded = undefined
      }
      const status = row?.settlement_status ?? null
      // "no_destination" is final too: the merchant's money stays with the collector.
      if (status === "settled" || status === "no_destination" || now > w.until) {
        waiting.delete(id)
        w.recorded?.(Number.NaN)
        w.settled({ at: status === "settled" ? now : Number.NaN, status })
      }
    }
  }, DB_POLL_MS)
  return {
    /** When the payment's transaction hash, then its settlement, were first seen. */
    watch: (
      id: string
    ): { readonly recorded: Promise<number>; readonly settled: Promise<Seen> } => {
      let recorded: (at: number) => void = () => {}
      let settled: (seen: Seen) => void = () => {}
      const seen = {
        recorded: new Promise<number>((done) => {
          recorded = done
        }),
        settled: new Promise<Seen>((done) => {
          settled = done
        })
      }
      // Settlement comes after success, which may take the long-poll's whole hold.
      waiting.set(id, { recorded, settled, until: performance.now() + 2 * REQUEST_TIMEOUT_MS })
      return seen
    },
    close: () => {
      clearInterval(timer)
      db.close()
    }
  }
}

interface Context {
  readonly server: ServerProcess
  readonly http: Http
  readonly walletHeaders: Record<string, string>
  /** The partner's, for GET /v1/payments/{id}. */
  readonly partnerHeaders: Record<string, string>
  readonly watcher: ReturnType<typeof transactionWatcher>
}

/** A flow's times, and when (performance.now()) it saw its payment succeeded and settled. */
interface FlowResult {
  readonly times: FlowTimes
  readonly succeededAt: number
  readonly settledAt: number
  /** The wallet's own transactions (a Permit2 approval, a native transfer), when it sent any. */
  readonly approval:
    | {
        /** Sending them (eth_sendRawTransaction), summed. */
        readonly sendMs: number
        /** From sending the first to the settlement seen: the flow's time, approval included. */
        readonly toSettledMs: number
        readonly hashes: ReadonlyArray<string>
      }
    | undefined
}

/** When (performance.now()) each of a wallet's steps ended, and the payment's final status. */
export interface WalletPaid {
  readonly started: number
  readonly optionsDone: number
  readonly fetchDone: number
  /** After the signing, as confirm is sent. */
  readonly confirmStart: number
  readonly confirmDone: number
  /** When the status long-poll answered "succeeded". */
  readonly succeededAt: number
  /** When the wallet sent its first transaction (a Permit2 approval, a native transfer); NaN
   * when it sent none. */
  readonly approveStart: number
  /** The time spent sending the wallet's transactions (eth_sendRawTransaction), summed. */
  readonly approveMs: number
  /** The hashes of the transactions the wallet sent (its approvals, its transfer), in order. */
  readonly approvals: ReadonlyArray<string>
}

/**
 * One wallet paying one payment, as payWithWallet does: options, fetch, its signature
 * (signTypedDataJson, in this process), confirm, then the status long-poll until final;
 * throws unless the payment reached `succeeded`. `beforeConfirm` runs between the signing
 * and the confirm (outside the timed calls). An option whose actions ask for transactions
 * first (a Permit2 approval) has each signed by the buyer (`signTransactionJson`, not
 * timed) and sent raw through /sandbox/rpc (on the flow's clock: the wallet waits on it),
 * and the confirm carries their hashes before the signature. A native option's one action
 * is a transaction (the transfer of the coin): signed and sent the same way, and the confirm
 * carries its hash alone.
 */
export const walletPays = async (
  http: Http,
  headers: Record<string, string>,
  paymentId: string,
  buyer: Buyer,
  beforeConfirm: () => void = () => {}
): Promise<WalletPaid> => {
  const base = `/v1/gateway/payment/${paymentId}`
  const started = performance.now()
  const offered = await expectStatus(
    http.call("POST", `${base}/options?includePaymentInfo=true`, {
      headers,
      body: { accounts: [buyer.account], refresh: null }
    }),
    "options"
  )
  const optionsDone = performance.now()
  const option = offered.options?.[0]
  if (option?.account !== buyer.account) {
    throw new Error(`options: no option for ${buyer.account}: ${JSON.stringify(offered)}`)
  }
  const fetched = await expectStatus(
    http.call("POST", `${base}/fetch`, { headers, body: { optionId: option.id, data: "" } }),
    "fetch"
  )
  const fetchDone = performance.now()
  const actions: ReadonlyArray<Json> = fetched.actions ?? []
  const action = actions.at(-1)
  // A native option's actions are its transfer alone: nothing to sign but the transaction.
  const signs = action?.data?.method === "eth_signTypedData_v4"
  if (!signs && action?.data?.method !== "eth_sendTransaction") {
    throw new Error(`fetch: no typed data to sign: ${JSON.stringify(fetched)}`)
  }
  const approvals: Array<string> = []
  let approveStart = Number.NaN
  let approveMs = 0
  for (const tx of signs ? actions.slice(0, -1) : actions) {
    if (tx?.data?.method !== "eth_sendTransaction" || buyer.signTransactionJson === undefined) {
      throw new Error(`fetch: ${buyer.account} cannot answer the action ${JSON.stringify(tx)}`)
    }
    const raw = await buyer.signTransactionJson(tx.data.params[0])
    const sent = performance.now()
    if (Number.isNaN(approveStart)) approveStart = sent
    const answer = await expectStatus(
      http.call("POST", "/sandbox/rpc", {
        body: { jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [raw] }
      }),
      "eth_sendRawTransaction"
    )
    approveMs += performance.now() - sent
    if (typeof answer?.result !== "string") {
      throw new Error(`the approval was not sent: ${JSON.stringify(answer)}`)
    }
    approvals.push(answer.result)
  }
  const typed = signs ? action.data.params[1] : undefined
  const signature =
    typed === undefined
      ? undefined
      : await (buyer.signJson?.(typed) ?? signTypedDataJson(buyer.key, typed))
  beforeConfirm()
  const confirmStart = performance.now()
  let status = await expectStatus(
    http.call("POST", `${base}/confirm?maxPollMs=0`, {
      headers,
      body: {
        optionId: option.id,
        results: [...approvals, ...(signature === undefined ? [] : [signature])].map((answer) => ({
          type: "walletRpc",
          data: [answer]
        }))
      }
    }),
    "confirm"
  )
  const confirmDone = performance.now()
  if (status.status !== "processing" && status.status !== "succeeded") {
    throw new Error(`confirm: the payment is ${status.status}: ${JSON.stringify(status)}`)
  }
  while (status.isFinal !== true) {
    status = await expectStatus(
      http.call("GET", `${base}/status?maxPollMs=${LONG_POLL_MS}`, { headers }),
      "status"
    )
  }
  const succeededAt = performance.now()
  if (status.status !== "succeeded") {
    throw new Error(`payment ${paymentId} ended ${status.status}: ${JSON.stringify(status)}`)
  }
  return {
    started,
    optionsDone,
    fetchDone,
    confirmStart,
    confirmDone,
    succeededAt,
    approveStart,
    approveMs,
    approvals
  }
}

/**
 * One wallet paying one payment (walletPays), each engine call timed; then the wait for
 * the engine to settle it (the wallet would have left: this is the engine's work).
 */
const flow = async (ctx: Context, paymentId: string, buyer: Buyer): Promise<FlowResult> => {
  let seen = undefined as ReturnType<Context["watcher"]["watch"]> | undefined
  const paid = await walletPays(ctx.http, ctx.walletHeaders, paymentId, buyer, () => {
    seen = ctx.watcher.watch(paymentId)
  })
  const { started, optionsDone, fetchDone, confirmStart, confirmDone, succeededAt } = paid
  // The signing, the wallet's work, is what lies between fetch and confirm but the sends.
  const sign = confirmStart - fetchDone - paid.approveMs
  if (seen === undefined) throw new Error(`payment ${paymentId}: not watched`)
  const recordedAt = await seen.recorded
  if (Number.isNaN(recordedAt)) throw new Error(`payment ${paymentId}: no transaction recorded`)
  const settled = await seen.settled
  if (Number.isNaN(settled.at)) {
    throw new Error(
      `payment ${paymentId}: not settled (settlement_status ${settled.status ?? "null"})`
    )
  }
  return {
    times: {
      options: optionsDone - started,
      fetch: fetchDone - optionsDone,
      confirm: confirmDone - confirmStart,
      engine: fetchDone - started + (confirmDone - confirmStart),
      submitted: recordedAt - confirmDone,
      succeeded: succeededAt - confirmDone,
      settled: settled.at - confirmDone,
      total: succeededAt - started - sign,
      sign
    },
    succeededAt,
    settledAt: settled.at,
    approval:
      paid.approvals.length === 0
        ? undefined
        : {
            sendMs: paid.approveMs,
            toSettledMs: settled.at - paid.approveStart,
            hashes: paid.approvals
          }
  }
}

/**
 * The partner's view of each payment (GET /v1/payments/{id}) shows it settled, with its hash;
 * the hash of each payment's collection.
 */
const checkSettled = (ctx: Context, paymentIds: ReadonlyArray<string>): Promise<Array<string>> =>
  inParallel(paymentIds.length, 10, async (i) => {
    const id = paymentIds[i]!
    const view = await expectStatus(
      ctx.http.call("GET", `/v1/payments/${id}`, { headers: ctx.partnerHeaders }),
      "GET /v1/payments/{id}"
    )
    const s = view.settlement
    if (
      view.status !== "succeeded" ||
      s?.settled !== true ||
      s.status !== "settled" ||
      typeof s.txHash !== "string" ||
      typeof view.settledAt !== "string"
    ) {
      throw new Error(`payment ${id} is not shown settled: ${JSON.stringify(view)}`)
    }
    const hash = view.transaction?.hash
    if (typeof hash !== "string") throw new Error(`payment ${id} shows no transaction`)
    return hash
  })

/** The calls the sandbox chain has answered since it started, by method (GET /sandbox `rpcCalls`). */
const chainCallsServed = async (http: Http): Promise<Record<string, number>> => {
  const described = await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
  return (described.rpcCalls ?? {}) as Record<string, number>
}

/** The calls answered between two readings, by method, per flow. */
const callsPerFlow = (
  before: Record<string, number>,
  after: Record<string, number>,
  flows: number
): Record<string, number> =>
  Object.fromEntries(
    Object.entries(after)
      .map(([method, count]) => [method, (count - (before[method] ?? 0)) / flows] as const)
      .filter(([, perFlow]) => perFlow > 0)
  )

/** The gas the transactions used, summed, from their receipts (through /sandbox/rpc). */
const gasUsed = async (http: Http, hashes: ReadonlyArray<string>): Promise<number> => {
  const used = await inParallel(hashes.length, 10, async (i) => {
    const answer: Json = await expectStatus(
      http.call("POST", "/sandbox/rpc", {
        body: { jsonrpc: "2.0", id: i, method: "eth_getTransactionReceipt", params: [hashes[i]] }
      }),
      "eth_getTransactionReceipt"
    )
    if (answer?.result?.status !== "0x1") {
      throw new Error(`${hashes[i]}: no successful receipt: ${JSON.stringify(answer)}`)
    }
    return Number(BigInt(answer.result.gasUsed))
  })
  return used.reduce((a, b) => a + b, 0)
}

const rssPeakBytes = (pid: number): number => {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) * 1024
}

const phase = async (
  ctx: Context,
  jobs: ReadonlyArray<{ readonly paymentId: string; readonly buyer: Buyer }>,
  wallets: number
): Promise<WalletPhase> => {
  const callsBefore = await chainCallsServed(ctx.http)
  const cpuBefore = ctx.server.cpuTicks()
  const clientBefore = process.cpuUsage()
  const startUs = monotonicUs()
  const start = performance.now()
  const results = await inParallel(jobs.length, wallets, (i) =>
    flow(ctx, jobs[i]!.paymentId, jobs[i]!.buyer)
  )
  const end = performance.now()
  // Read at once: every flow has settled, so its work on the server is done.
  const cpuMs = (ctx.server.cpuTicks() - cpuBefore) * MS_PER_TICK
  const client = process.cpuUsage(clientBefore)
  const monotonicEnd = monotonicUs()
  const chainCalls = callsPerFlow(callsBefore, await chainCallsServed(ctx.http), jobs.length)
  // Afterwards, outside the times and the counts: the views, and the receipts for the gas.
  const collections = await checkSettled(
    ctx,
    jobs.map((job) => job.paymentId)
  )
  const approvals = results.flatMap((r) => (r.approval === undefined ? [] : [r.approval]))
  if (approvals.length !== 0 && approvals.length !== results.length) {
    throw new Error(`${approvals.length} of the phase's ${results.length} flows sent an approval`)
  }
  const lastSucceeded = Math.max(...results.map((r) => r.succeededAt))
  const lastSettled = Math.max(...results.map((r) => r.settledAt))
  return {
    wallets,
    flows: jobs.length,
    seconds: (end - start) / 1000,
    flowsPerSecond: jobs.length / ((lastSucceeded - start) / 1000),
    settledPerSecond: jobs.length / ((lastSettled - start) / 1000),
    ms: Object.fromEntries(
      STEPS.map((step) => [step, percentiles(results.map((r) => r.times[step]))])
    ) as Record<Step, Percentiles>,
    serverCpuMsPerFlow: cpuMs / jobs.length,
    clientCpuMsPerFlow: (client.user + client.system) / 1000 / jobs.length,
    rssAfterBytes: ctx.server.rssBytes(),
    monotonicUs: [startUs, monotonicEnd],
    chainCallsPerFlow: Object.values(chainCalls).reduce((a, b) => a + b, 0),
    chainCallsPerFlowByMethod: chainCalls,
    collectGas: (await gasUsed(ctx.http, collections)) / jobs.length,
    ...(approvals.length === 0
      ? {}
      : {
          approval: {
            sendMs: percentiles(approvals.map((a) => a.sendMs)),
            toSettledMs: percentiles(approvals.map((a) => a.toSettledMs)),
            gas:
              (await gasUsed(
                ctx.http,
                approvals.flatMap((a) => a.hashes)
              )) / approvals.length
          }
        })
  }
}

const log = (line: string) => console.log(`  ${line}`)

/**
 * On a sandbox server: a merchant settled in the sandbox USDC (its partner the bootstrap
 * one), and a wallet app made by the operator's CLI; the wallet's and the partner's headers.
 */
export const walletShop = async (server: ServerProcess, http: Http, database: string) => {
  const sandbox = await http.call("GET", "/sandbox")
  if (sandbox.status !== 200) {
    throw new Error(`the engine serves no sandbox (GET /sandbox answered ${sandbox.status})`)
  }
  const merchantId = await createMerchant(server.name, server.url)
  await expectStatus(
    http.call("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      headers: { "Api-Key": BENCH_API_KEY, "Idempotency-Key": `bench-settlement-${Date.now()}` },
      body: {
        settlements: [
          {
            asset: SANDBOX_USDC,
            destination: "eip155:31337:0x000000000000000000000000000000000000dEaD"
          }
        ]
      }
    }),
    "POST /v1/merchants/{id}/settlements/crypto",
    201
  )
  // The operator's CLI, on the server's database while it runs.
  const app = JSON.parse(
    execFileSync(
      process.execPath,
      ["examples/standalone/dist/cli.mjs", "apps", "create", "--name", "Bench Wallet", "--json"],
      { cwd: ROOT, env: { ...process.env, PAY_DATABASE: database }, encoding: "utf8" }
    )
  ) as { apiKey?: unknown }
  if (typeof app.apiKey !== "string") throw new Error("apps create printed no apiKey")
  const target: Target = { name: server.name, url: server.url, merchantId }
  return {
    target,
    walletHeaders: { ...WALLET_HEADERS, "api-key": app.apiKey },
    partnerHeaders: paymentHeaders(target)
  }
}

/** `count` new buyers, each given BUYER_FUNDS by the sandbox faucet (a transaction each). */
export const fundedBuyers = async (http: Http, count: number): Promise<Array<Buyer>> => {
  const buyers = Array.from({ length: count }, newBuyer)
  await inParallel(buyers.length, 10, (i) =>
    expectStatus(
      http.call("POST", "/sandbox/faucet", {
        body: { account: buyers[i]!.account, amount: BUYER_FUNDS.toString() }
      }),
      "POST /sandbox/faucet"
    )
  )
  return buyers
}

/** A merchant settled in the sandbox USDC, a wallet app's headers, the payments, funded buyers. */
const setUp = async (
  server: ServerProcess,
  http: Http,
  database: string,
  settings: WalletSettings
) => {
  const { target, walletHeaders, partnerHeaders } = await walletShop(server, http, database)
  // The USDC phases, then (with Permit2 rows) the 10-wallet phase again after them.
  const flows = settings.warmup + 2 * settings.payments + settings.permit2Payments
  const paymentIds = await inParallel(flows, 10, (i) => createPayment(target, 2_000_000 + i))
  const buyers = await fundedBuyers(http, flows + CHAIN_WARMUP + settings.chainRounds)
  const jobs = paymentIds.map((paymentId, i) => ({ paymentId, buyer: buyers[i]! }))
  return {
    target,
    walletHeaders,
    partnerHeaders,
    jobs: jobs.slice(0, settings.warmup + 2 * settings.payments),
    eip3009After: jobs.slice(settings.warmup + 2 * settings.payments),
    chainBuyers: buyers.slice(flows),
    permit2:
      settings.permit2Payments === 0 ? undefined : await setUpPermit2(server, http, settings),
    native: settings.nativePayments === 0 ? undefined : await setUpNative(server, http, settings)
  }
}

/**
 * A merchant settled in the sandbox's ETH alone, its payments, and its buyers (given test
 * ether, each signing its own transfer): the warm-up's first, then the row's.
 */
const setUpNative = async (server: ServerProcess, http: Http, settings: WalletSettings) => {
  const coin = await sandboxNative(http)
  const target = await nativeMerchant(server, http, coin.asset)
  const count = NATIVE_WARMUP + settings.nativePayments
  const paymentIds = await inParallel(count, 10, (i) => createPayment(target, 5_000_000 + i))
  const buyers = await nativeBuyers(http, count, NATIVE_FUNDS)
  const jobs = paymentIds.map((paymentId, i) => ({ paymentId, buyer: buyers[i]! }))
  return { warmup: jobs.slice(0, NATIVE_WARMUP), row: jobs.slice(NATIVE_WARMUP) }
}

/**
 * A merchant settled in the sandbox USDT, its payments, and its buyers (funded, approved
 * or not): the warm-up's of each kind first, then each row's.
 */
const setUpPermit2 = async (server: ServerProcess, http: Http, settings: WalletSettings) => {
  const usdt = await sandboxUsdt(http)
  const target = await usdtMerchant(server, http, usdt.asset)
  const each = PERMIT2_WARMUP + settings.permit2Payments
  const paymentIds = await inParallel(2 * each, 10, (i) => createPayment(target, 4_000_000 + i))
  const held = await permit2Buyers(http, usdt, each, BUYER_FUNDS, true)
  const fresh = await permit2Buyers(http, usdt, each, BUYER_FUNDS, false)
  const jobsOf = (ids: ReadonlyArray<string>, buyers: ReadonlyArray<Buyer>) =>
    ids.map((paymentId, i) => ({ paymentId, buyer: buyers[i]! }))
  const heldJobs = jobsOf(paymentIds.slice(0, each), held)
  const freshJobs = jobsOf(paymentIds.slice(each), fresh)
  return {
    warmup: [...heldJobs.slice(0, PERMIT2_WARMUP), ...freshJobs.slice(0, PERMIT2_WARMUP)],
    allowanceHeld: heldJobs.slice(PERMIT2_WARMUP),
    approveInFlow: freshJobs.slice(PERMIT2_WARMUP)
  }
}

/** The bundles the wallet flows run: the server (`npm start`'s) and the operator's CLI. */
export const buildWalletServer = (): void => {
  execFileSync(process.execPath, ["examples/build.mjs", "main", "cli"], {
    cwd: ROOT,
    stdio: "inherit"
  })
}

/**
 * The engine as `npm start` runs it (its bundle on plain node) in sandbox mode (no
 * PAY_CONFIG: the sandbox chain in its process), on the SQLite file `database`; added to
 * `started` so that the caller stops it whatever happens.
 */
export const startWalletServer = async (
  name: string,
  database: string,
  started: Array<ServerProcess>,
  cpuProfileDir?: string
): Promise<ServerProcess> => {
  const server = await startServer({
    name,
    command: process.execPath,
    args: [
      ...(cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`]),
      "--enable-source-maps",
      "examples/standalone/dist/main.mjs"
    ],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: database,
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY
    },
    // No PAY_CONFIG: the sandbox chain, in the server's process.
    unsetEnv: ["PAY_CONFIG"]
  })
  started.push(server)
  return server
}

const measure = async (
  dir: string,
  settings: WalletSettings,
  started: Array<ServerProcess>
): Promise<WalletResult> => {
  const machine = { cores: cpus().length, loadAverageAtStart: loadavg()[0] ?? 0 }
  buildWalletServer()
  const database = join(dir, "wallet.sqlite")
  const cpuProfileDir =
    settings.cpuProfileDir === undefined ? undefined : resolve(settings.cpuProfileDir)
  const server = await startWalletServer("engine-wallet", database, started, cpuProfileDir)
  const http = httpClient(server.url)
  let watcher: ReturnType<typeof transactionWatcher> | undefined
  try {
    log("setting up: a merchant settled in the sandbox USDC, a wallet app, funded buyers…")
    const {
      target,
      walletHeaders,
      partnerHeaders,
      jobs,
      eip3009After,
      chainBuyers,
      permit2,
      native
    } = await setUp(server, http, database, settings)
    watcher = transactionWatcher(database)
    const ctx: Context = { server, http, walletHeaders, partnerHeaders, watcher }

    const floor: Array<number> = []
    for (let i = 0; i < HTTP_FLOOR_SAMPLES; i++) {
      const start = performance.now()
      await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
      floor.push(performance.now() - start)
    }
    log(`${settings.warmup} flows to warm up…`)
    for (const job of jobs.slice(0, settings.warmup)) await flow(ctx, job.paymentId, job.buyer)
    await sleep(500)
    const rssIdleBytes = server.rssBytes()
    const first = settings.warmup
    log(`${settings.payments} flows, one wallet at a time…`)
    const sequential = await phase(ctx, jobs.slice(first, first + settings.payments), 1)
    log(`${settings.payments} flows, ${settings.concurrency} wallets at once…`)
    const concurrent = await phase(ctx, jobs.slice(first + settings.payments), settings.concurrency)
    let permit2Result: Permit2Result | undefined
    if (permit2 !== undefined) {
      log(
        `Permit2 (USDT): ${PERMIT2_WARMUP} flows of each kind to warm up, then ${settings.permit2Payments} ` +
          `with ${settings.concurrency} wallets at once, the allowance held, then ` +
          `${settings.permit2Payments} approving in the flow; then ${settings.permit2Payments} ` +
          "USDC (EIP-3009) flows again…"
      )
      for (const job of permit2.warmup) await flow(ctx, job.paymentId, job.buyer)
      await sleep(500)
      const allowanceHeld = await phase(ctx, permit2.allowanceHeld, settings.concurrency)
      const approveInFlow = await phase(ctx, permit2.approveInFlow, settings.concurrency)
      const again = await phase(ctx, eip3009After, settings.concurrency)
      permit2Result = {
        payments: settings.permit2Payments,
        warmup: PERMIT2_WARMUP,
        allowanceHeld,
        approveInFlow,
        eip3009After: again
      }
    }
    let nativeResult: NativeResult | undefined
    if (native !== undefined) {
      log(
        `ETH (native transfer): ${NATIVE_WARMUP} flows to warm up, then ${settings.nativePayments} ` +
          `with ${settings.concurrency} wallets at once, each sending its transfer in the flow…`
      )
      for (const job of native.warmup) await flow(ctx, job.paymentId, job.buyer)
      await sleep(500)
      const transfer = await phase(ctx, native.row, settings.concurrency)
      nativeResult = {
        payments: settings.nativePayments,
        warmup: NATIVE_WARMUP,
        transfer,
        fees: await nativeFees(
          http,
          partnerHeaders,
          native.row.map((job) => job.paymentId)
        )
      }
    }
    log(
      `${settings.smartPayments} flows each, one at a time: key pairs, Safes and thirdweb ERC-4337 accounts, deployed and not…`
    )
    const smartAccounts: Array<SmartRow> = []
    for (const [k, kind] of SMART_KINDS.entries()) {
      const buyers = await smartBuyers(http, server.url, kind, settings.smartPayments, BUYER_FUNDS)
      const ids = await smartPayments(target, settings.smartPayments, 3_000_000 + k * 10_000)
      smartAccounts.push(
        await smartRow(
          http,
          server.url,
          kind,
          ids.map((paymentId, i) => ({ paymentId, buyer: buyers[i]! })),
          async (paymentId, buyer) => {
            const { times } = await flow(ctx, paymentId, buyer)
            return { confirm: times.confirm, succeeded: times.succeeded, settled: times.settled }
          },
          percentiles,
          partnerHeaders
        )
      )
    }
    log(`${settings.chainRounds} rounds of the engine's chain calls, bare, on /sandbox/rpc…`)
    const chain = await measureChain({ server, http, buyers: chainBuyers, warmup: CHAIN_WARMUP })
    return {
      settings: {
        payments: settings.payments,
        concurrency: settings.concurrency,
        warmup: settings.warmup,
        chainRounds: settings.chainRounds,
        smartPayments: settings.smartPayments,
        permit2Payments: settings.permit2Payments,
        nativePayments: settings.nativePayments,
        deadlineMs: settings.deadlineMs
      },
      machine,
      httpFloorMs: percentiles(floor),
      sequential,
      concurrent,
      smartAccounts,
      ...(permit2Result === undefined ? {} : { permit2: permit2Result }),
      ...(nativeResult === undefined ? {} : { native: nativeResult }),
      chain,
      memory: {
        rssIdleBytes,
        rssAfterBytes: server.rssBytes(),
        rssPeakBytes: rssPeakBytes(server.pid)
      },
      ...(cpuProfileDir === undefined ? {} : { cpuProfileDir })
    }
  } finally {
    watcher?.close()
    http.close()
    await server.stop()
  }
}

/** The wallet flows, within `settings.deadlineMs`; the server stops either way. */
export const measureWallet = (
  dir: string,
  settings: WalletSettings,
  started: Array<ServerProcess>
): Promise<WalletResult> =>
  withinDeadline(measure(dir, settings, started), settings.deadlineMs, "wallet flows")

/** The settings from the environment (BENCH_WALLET_*), the deadline grown to fit them. */
export const walletSettings = (): WalletSettings => {
  const payments = envInteger("BENCH_WALLET_PAYMENTS", 200, 1)
  const chainRounds = envInteger("BENCH_WALLET_CHAIN_ROUNDS", 100, 1)
  const warmup = Math.min(20, payments)
  const smartPayments = envInteger("BENCH_WALLET_SMART_PAYMENTS", 20, 1)
  // As many as the USDC phase with 10 wallets they are read against, by default.
  const permit2Payments = envInteger("BENCH_WALLET_PERMIT2_PAYMENTS", payments, 0)
  const permit2Flows = permit2Payments === 0 ? 0 : 2 * PERMIT2_WARMUP + 3 * permit2Payments
  // As many as the USDC phase with 10 wallets it is read against, by default.
  const nativePayments = envInteger("BENCH_WALLET_NATIVE_PAYMENTS", payments, 0)
  const nativeFlows = nativePayments === 0 ? 0 : NATIVE_WARMUP + nativePayments
  return {
    smartPayments,
    permit2Payments,
    nativePayments,
    payments,
    concurrency: envInteger("BENCH_WALLET_CONCURRENCY", 10, 1),
    warmup,
    chainRounds,
    // Build, start and setup, then a quarter of a second a flow (its settlement included) and
    // a round at most.
    deadlineMs:
      90_000 +
      (warmup +
        2 * payments +
        chainRounds +
        SMART_KINDS.length * smartPayments +
        permit2Flows +
        nativeFlows) *
        250,
    cpuProfileDir: process.env.BENCH_WALLET_CPU_PROF
  }
}

/** The report's section. */
export const formatWallet = (r: WalletResult): Array<string> => {
  const n = (x: number, digits = 1) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const MB = 1_000_000
  const s = r.settings
  const seq = r.sequential
  const con = r.concurrent
  const chain = r.chain
  const cells = (p: Percentiles) =>
    [p.p50, p.p95, p.p99].map((x) => n(x).padStart(7)).join("") + n(p.max).padStart(8)
  const head = ["p50", "p95", "p99"].map((x) => x.padStart(7)).join("") + "max".padStart(8)
  const names: Record<Step, string> = {
    options: "options",
    fetch: "fetch",
    confirm: "confirm",
    engine: "engine: the three",
    submitted: "confirm → tx recorded",
    succeeded: "confirm → succeeded",
    settled: "confirm → settled",
    total: "options → succeeded",
    sign: "(wallet's signing)"
  }
  const lines = [
    "",
    `Wallet flow on the sandbox chain: ${n(s.payments, 0)} payments one wallet at a time, ` +
      `then ${n(s.payments, 0)} with ${s.concurrency} wallets at once, after ${s.warmup} ` +
      "to warm up; the engine's bundle on SQLite, the EVM in its process",
    "  A wallet: POST …/options?includePaymentInfo=true, POST …/fetch, signs (not timed), " +
      "POST …/confirm?maxPollMs=0 (answers processing), then GET …/status?maxPollMs=10000 " +
      "until succeeded;",
    "  then it waits for the engine to settle the payment (the settle job's transfer to the " +
      "merchant) before its next one.",
    `  Read in the database every ${DB_POLL_MS} ms: "tx recorded", the payment's hash; ` +
      `"settled", settlement_status = 'settled'`,
    "",
    `  ${"ms".padEnd(22)}${"one wallet at a time".padStart(29)}  ` +
      `${`${s.concurrency} wallets at once`.padStart(29)}`,
    `  ${"".padEnd(22)}${head}  ${head}`
  ]
  for (const step of STEPS) {
    lines.push(`  ${names[step].padEnd(22)}${cells(seq.ms[step])}  ${cells(con.ms[step])}`)
  }
  lines.push(
    "",
    `  confirm throughput to settled with ${s.concurrency} wallets: ${n(con.settledPerSecond)}/s ` +
      `(target ≥ ${WALLET_THROUGHPUT_TARGET}/s with 10 wallets: ` +
      `${walletThroughputMet(r) ? "met" : "MISSED"}); from confirm to settled a payment ` +
      "commits 4 times (counted by examples/standalone/test/wallet-commits.e2e.test.ts)",
    `  flows to succeeded: ${n(seq.flowsPerSecond)}/s one at a time, ${n(con.flowsPerSecond)}/s ` +
      `with ${s.concurrency} wallets; to settled (the confirm throughput): ` +
      `${n(seq.settledPerSecond)}/s one at a time, ${n(con.settledPerSecond)}/s with ` +
      `${s.concurrency} wallets (${r.machine.cores} cores, load average ` +
      `${n(r.machine.loadAverageAtStart, 2)} at start)`,
    "  (each the phase's payments over the time from its start to its last succeeded, or " +
      "settled; every payment's partner view then read settled)",
    `  server CPU per flow, its settlement included (all its threads, the EVM's too): ` +
      `${n(seq.serverCpuMsPerFlow)} ms ` +
      `one at a time, ${n(con.serverCpuMsPerFlow)} ms with ${s.concurrency}; ` +
      `the bench client's: ${n(seq.clientCpuMsPerFlow)} ms, ${n(con.clientCpuMsPerFlow)} ms`,
    `  server memory (VmRSS): ${n(r.memory.rssIdleBytes / MB, 0)} MB after the warm-up, ` +
      `${n(r.memory.rssAfterBytes / MB, 0)} MB at the end, peak (VmHWM) ` +
      `${n(r.memory.rssPeakBytes / MB, 0)} MB`,
    `  HTTP round trip of a route doing nothing (GET /sandbox): p50 ${n(r.httpFloorMs.p50, 2)} ms, ` +
      `p99 ${n(r.httpFloorMs.p99, 2)} ms`
  )
  if (r.permit2 !== undefined) lines.push(...formatPermit2(con, r.permit2, n))
  if (r.native !== undefined) lines.push(...formatNative(con, r.native, r.permit2?.eip3009After, n))
  lines.push(
    "",
    `  The chain alone: the engine's chain calls for one payment, made by its EVM adapter as ` +
      `it makes them (confirm, collect, settle), but bare through /sandbox/rpc, ${chain.rounds} ` +
      "rounds one at a time",
    `  ${"call (where the engine makes it)".padEnd(44)}${"method".padEnd(26)}${head}`,
    `  ${"the route's round trip, no EVM work".padEnd(44)}${"eth_chainId".padEnd(26)}` +
      cells(chain.floorMs)
  )
  for (const c of chain.calls) {
    lines.push(`  ${c.label.padEnd(44)}${c.method.padEnd(26)}${cells(c.ms)}`)
  }
  const evm = chain.evmMsP50ByStage
  lines.push(
    `  ${"the calls of one payment, summed".padEnd(70)}${cells(chain.roundMs)}`,
    `  the EVM's time (p50s less the round trip each): ${n(chain.evmMsPerRoundP50)} ms a payment, ` +
      `of which ${n(evm.confirm)} ms in confirm, ${n(evm.submit)} ms in the submission, ` +
      `${n(evm.watch)} ms in the watch, ${n(evm.settle)} ms in the settlement; ` +
      `server CPU per round ${n(chain.serverCpuMsPerRound)} ms`
  )
  const base = r.smartAccounts[0]
  lines.push(
    "",
    `  Smart accounts: ${s.smartPayments} payments of each kind, one wallet at a time, after the ` +
      "phases above; chain calls counted by the sandbox chain (GET /sandbox rpcCalls) over the phase",
    `  ${"account".padEnd(22)}${"confirm p50".padStart(13)}${"→ succeeded".padStart(13)}` +
      `${"→ settled".padStart(11)}${"chain calls".padStart(14)}${"collect gas".padStart(20)}` +
      `${"deploy gas".padStart(12)}`
  )
  for (const row of r.smartAccounts) {
    const extra = (x: number, b: number | undefined) =>
      b === undefined || row === base ? "" : ` (${x >= b ? "+" : ""}${n(x - b, 0)})`
    lines.push(
      `  ${row.kind.padEnd(22)}${n(row.confirmMs.p50).padStart(13)}${n(row.succeededMs.p50).padStart(13)}` +
        `${n(row.settledMs.p50).padStart(11)}` +
        `${`${n(row.rpcCallsPerPayment)}${extra(row.rpcCallsPerPayment, base?.rpcCallsPerPayment)}`.padStart(14)}` +
        `${`${n(row.collectGas, 0)}${extra(row.collectGas, base?.collectGas)}`.padStart(20)}` +
        `${n(row.deployGas, 0).padStart(12)}`
    )
  }
  if (r.cpuProfileDir !== undefined) {
    lines.push(`  the server's CPU profile is in ${r.cpuProfileDir}`)
  }
  return lines
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-bench-wallet-"))
  const started: Array<ServerProcess> = []
  const settings = walletSettings()
  const stopAll = () => Promise.all(started.map((server) => server.stop()))
  const abandon = async (why: string, code: number) => {
    console.error(why)
    await Promise.race([stopAll(), sleep(5_000)])
    killAllNow()
    rmSync(dir, { recursive: true, force: true })
    process.exit(code)
  }
  process.on("exit", killAllNow)
  process.on("SIGINT", () => void abandon("bench:wallet: interrupted", 130))
  process.on("SIGTERM", () => void abandon("bench:wallet: terminated", 143))
  const hardDeadlineMs = settings.deadlineMs + 30_000
  setTimeout(
    () => void abandon(`bench:wallet: still running after ${hardDeadlineMs / 1000} s, stopped`, 1),
    hardDeadlineMs
  ).unref()
  try {
    console.log("Wallet flows:")
    const wallet = await measureWallet(dir, settings, started)
    const report = { date: new Date().toISOString(), node: process.version, wallet }
    mkdirSync(RESULTS, { recursive: true })
    writeFileSync(join(RESULTS, "wallet.json"), `${JSON.stringify(report, null, 2)}\n`)
    console.log([...formatWallet(wallet), ""].join("\n"))
    console.log("Written to bench/results/wallet.json")
  } catch (error) {
    for (const server of started) {
      console.error(`${server.name}'s last output:\n${server.recentOutput()}`)
    }
    throw error
  } finally {
    await stopAll()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Run alone (`npm run bench:wallet`), not when bench/run.ts imports it.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Exit explicitly: a failed run may leave sockets open that would keep the process alive.
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(
        `bench:wallet failed: ${error instanceof Error ? error.message : String(error)}`
      )
      process.exit(1)
    }
  )
}
