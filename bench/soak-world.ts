/**
 * What the soak bench (bench/soak.ts) runs against: the sandbox chain in a process of its
 * own (`npm run chain`'s bundle: its EVM grows with every block, and must not be counted
 * as the engine's memory), the engine as `npm start` runs it (its bundle on plain node, a
 * SQLite file) with a PAY_CONFIG naming that chain, the bench's probe preloaded (its event
 * loop's delay, and its memory after each full collection: soak-probe.mjs), and the shop the traffic needs: a webhook endpoint at the loopback
 * receiver (registered first, so that every event the partner's changes make is
 * delivered), a merchant settled in the chain's USDC, and a wallet app made by the CLI.
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { promisify } from "node:util"
import { BENCH_API_KEY } from "./client.js"
import {
  BUNDLES,
  callersSettings,
  ROOT,
  type ServerProcess,
  spawnTracked,
  startServer
} from "./server-process.js"
import { expectStatus, type Http, type Json } from "./wallet-support.js"

/** This bench's own bundles: no other bench's or test's build overwrites them while it runs. */
const SOAK_BUNDLES = `${BUNDLES}/soak`

export const buildBundles = () =>
  execFileSync(
    process.execPath,
    ["examples/build.mjs", "main", "cli", "chain", "--outdir", SOAK_BUNDLES],
    { cwd: ROOT, stdio: "inherit" }
  )

/** A process's VmRSS from /proc, in bytes; NaN once it is gone. */
export const vmRss = (pid: number): number => {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kb === undefined ? Number.NaN : Number(kb) * 1024
  } catch {
    return Number.NaN
  }
}

/**
 * POSTs JSON on a connection of its own (`agent: false`): a mint is not safe to send twice,
 * and a kept-alive connection the chain closes as it is reused would fail the call.
 */
const postOnce = (url: string, body: unknown): Promise<Json> =>
  new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json" } },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          text += chunk
        })
        response.on("end", () => {
          try {
            resolve(JSON.parse(text))
          } catch {
            reject(new Error(`${url} answered ${response.statusCode}: ${text}`))
          }
        })
        response.on("error", reject)
      }
    )
    sent.setTimeout(30_000, () => sent.destroy(new Error(`${url}: no answer in 30 s`)))
    sent.on("error", reject)
    sent.end(JSON.stringify(body))
  })

export interface Chain {
  readonly pid: number
  readonly rpcUrl: string
  readonly usdc: { readonly asset: string; readonly decimals: number }
  readonly collectorPrivateKey: string
  /** One JSON-RPC call straight to the chain (not through the engine); its result. */
  readonly rpc: (method: string, params: ReadonlyArray<unknown>) => Promise<Json>
  readonly stop: () => Promise<void>
}

/** The chain bundle as its own process (`npm run chain`); resolves on its JSON ready line. */
export const startChain = (): Promise<Chain> =>
  new Promise((resolve, reject) => {
    const { child, exited } = spawnTracked(
      process.execPath,
      ["--enable-source-maps", `${SOAK_BUNDLES}/chain.mjs`],
      { ...process.env, HOST: "127.0.0.1", PORT: "0" }
    )
    let output = ""
    let ready = false
    const timer = setTimeout(() => reject(new Error(`the chain did not start:\n${output}`)), 60_000)
    // Both pipes drained for the whole run, or a chatty chain would block on a full pipe.
    child.stderr?.on("data", (chunk: Buffer) => {
      if (!ready) output += chunk.toString()
    })
    child.stdout?.on("data", (chunk: Buffer) => {
      if (ready) return
      output += chunk.toString()
      const line = output.split("\n").find((l) => l.startsWith("{") && l.endsWith("}"))
      if (line === undefined) return
      ready = true
      clearTimeout(timer)
      const started = JSON.parse(line) as Json
      const usdc = (started.tokens as ReadonlyArray<Json>).find((t) => t.symbol === "USDC")
      resolve({
        pid: child.pid!,
        rpcUrl: started.rpcUrl,
        usdc: { asset: usdc.asset, decimals: usdc.decimals },
        collectorPrivateKey: started.collectorPrivateKey,
        rpc: async (method, params) => {
          const answer = await postOnce(started.rpcUrl, { jsonrpc: "2.0", id: 1, method, params })
          if (answer?.error !== undefined) {
            throw new Error(`chain ${method}: ${JSON.stringify(answer.error)}`)
          }
          return answer.result
        },
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return
          child.kill("SIGTERM")
          await exited
        }
      })
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      if (!ready) reject(new Error(`the chain exited (${signal ?? code}):\n${output}`))
    })
  })

/**
 * A PAY_CONFIG whose one network is the chain process, its USDC alone (so a buyer's one
 * option is it), one confirmation, transactions looked at every 250 ms, a fee on each
 * payment (so settlement sends the amount less fees), the chain work at its defaults.
 */
export const writePayConfig = (dir: string, chain: Chain): string => {
  const file = join(dir, "pay-config.json")
  writeFileSync(
    file,
    JSON.stringify({
      networks: [
        {
          chainId: "eip155:31337",
          name: "Sandbox chain (own process)",
          rpcUrl: chain.rpcUrl,
          testnet: true,
          confirmations: 1,
          etaSeconds: 1,
          pollIntervalMs: 250,
          collectorKey: chain.collectorPrivateKey,
          tokens: [
            {
              asset: chain.usdc.asset,
              symbol: "USDC",
              name: "USD Coin",
              decimals: chain.usdc.decimals,
              priceCurrency: "USD",
              authorization: "eip3009"
            }
          ]
        }
      ],
      fees: { default: { fixed: "0.10", percentage: "1.5" } }
    })
  )
  return file
}

/** The engine's memory right after one of its full collections (process.memoryUsage()). */
export interface AfterMajor {
  readonly rssBytes: number
  readonly heapUsedBytes: number
  /** The main isolate's heap as reserved: used, free and fragmented alike. */
  readonly heapTotalBytes: number
  /** Memory of JavaScript objects held outside the heap (Buffers and the like). */
  readonly externalBytes: number
  readonly pauseMs: number
}

/** One read of the engine's probe (soak-probe.mjs): what it saw since the previous read. */
export interface ProbeRead {
  /** The event loop's delay. */
  readonly p99Ms: number
  readonly maxMs: number
  /** VmRSS and the heap used right after each full collection the engine made, and its pause. */
  readonly afterMajor: ReadonlyArray<AfterMajor>
}

export interface Engine {
  readonly server: ServerProcess
  readonly database: string
  /** The next read of the engine's probe. */
  readonly probe: () => Promise<ProbeRead>
}

/** The engine's bundle on plain node (as `npm start`, source maps on), the probe preloaded,
 * on a SQLite file in `dir`. */
export const startEngine = async (dir: string, payConfig: string): Promise<Engine> => {
  const database = join(dir, "pay.sqlite")
  const probeFile = join(dir, "loop-delay.jsonl")
  const env = {
    HOST: "127.0.0.1",
    PORT: "0",
    PAY_DATABASE: database,
    PAY_CONFIG: payConfig,
    PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
    // The webhook receiver is on loopback.
    PAY_FETCH_ALLOW_PRIVATE: "1",
    SOAK_PROBE_FILE: probeFile
  }
  const server = await startServer({
    name: "engine",
    command: process.execPath,
    args: [
      // SOAK_CPU_PROF=<dir>: the engine writes a V8 CPU profile there when it stops, to find
      // what holds its event loop (eldmax).
      ...(process.env.SOAK_CPU_PROF === undefined
        ? []
        : ["--cpu-prof", `--cpu-prof-dir=${process.env.SOAK_CPU_PROF}`]),
      "--import",
      `${ROOT}bench/soak-probe.mjs`,
      "--enable-source-maps",
      `${SOAK_BUNDLES}/main.mjs`
    ],
    env,
    unsetEnv: callersSettings(env)
  })
  let reads = 0
  const lines = () =>
    existsSync(probeFile) ? readFileSync(probeFile, "utf8").trim().split("\n") : []
  return {
    server,
    database,
    probe: async () => {
      const want = ++reads
      process.kill(server.pid, "SIGUSR2")
      for (let tries = 0; tries < 3000; tries++) {
        const line = lines()[want - 1]
        if (line !== undefined) return JSON.parse(line)
        await sleep(10)
      }
      throw new Error("the engine's probe did not answer in 30 s")
    }
  }
}

/**
 * The reference: a bare node:http server in its own process that answers `{}` at once. Its
 * p99, asked at the status route's rate, is what the shared machine alone adds to a request
 * in that minute, to tell the machine's noise from the engine's in the soak's p99s.
 */
export const startReference = (): Promise<ServerProcess> =>
  startServer({
    name: "reference",
    command: process.execPath,
    args: [
      "-e",
      `const s = require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => r.writeHead(200, { "content-type": "application/json", "content-length": 2 }).end("{}")) });
       s.keepAliveTimeout = 5000;
       s.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + s.address().port))`
    ],
    env: {}
  })

/** `pay_process_resident_memory_bytes` and `pay_process_heap_used_bytes` from /metrics. */
export const processGauges = (text: string) => {
  const gauge = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN)
  return {
    rssBytes: gauge("pay_process_resident_memory_bytes"),
    heapUsedBytes: gauge("pay_process_heap_used_bytes")
  }
}

export const WALLET_HEADERS = {
  "api-version": "2026-02-19.preview",
  "sdk-name": "pay-bench-soak",
  "sdk-version": "0.1.0",
  "sdk-platform": "node",
  accept: "application/json"
}

export interface Shop {
  readonly merchantId: string
  readonly partnerHeaders: Record<string, string>
  readonly walletHeaders: Record<string, string>
}

/**
 * The webhook endpoint at `hookUrl` first (every later event is delivered to it), then a
 * merchant settled in the chain's USDC at a fresh address, then a wallet app (the CLI).
 */
export const openShop = async (
  http: Http,
  engine: Engine,
  chain: Chain,
  hookUrl: string,
  /** Given the endpoint's secret before any event is made, to check every signature. */
  onSecret: (secret: string) => void
): Promise<Shop> => {
  const key = { "Api-Key": BENCH_API_KEY }
  const endpoint = await expectStatus(
    http.call("POST", "/v1/webhook-endpoints", {
      headers: { ...key, "Idempotency-Key": `soak-endpoint-${process.pid}` },
      body: { url: hookUrl, description: "soak bench receiver" }
    }),
    "POST /v1/webhook-endpoints",
    201
  )
  onSecret(endpoint.secret)
  const merchant = await expectStatus(
    http.call("POST", "/v1/merchants", {
      headers: { ...key, "Idempotency-Key": `soak-merchant-${process.pid}` },
      body: { merchantName: "Soak Shop", merchantEmail: "soak@shop.example" }
    }),
    "POST /v1/merchants",
    201
  )
  const merchantId: string = merchant.merchant.id
  await expectStatus(
    http.call("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      headers: { ...key, "Idempotency-Key": `soak-settlement-${process.pid}` },
      body: {
        settlements: [
          {
            asset: chain.usdc.asset,
            destination: "eip155:31337:0x000000000000000000000000000000000000dEaD"
          }
        ]
      }
    }),
    "POST /v1/merchants/{id}/settlements/crypto",
    201
  )
  // The operator's CLI on the server's database while it runs; not execFileSync, which would
  // stop this process's loop (and the receiver in it) for the CLI's start.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [`${SOAK_BUNDLES}/cli.mjs`, "apps", "create", "--name", "Soak Wallet", "--json"],
    { cwd: ROOT, env: { ...process.env, PAY_DATABASE: engine.database }, encoding: "utf8" }
  )
  const app = JSON.parse(stdout) as { apiKey?: unknown }
  if (typeof app.apiKey !== "string") throw new Error("apps create printed no apiKey")
  return {
    merchantId,
    partnerHeaders: { ...key, "Merchant-Id": merchantId },
    walletHeaders: { ...WALLET_HEADERS, "api-key": app.apiKey }
  }
}
