/**
 * Cold start: from spawning a server's process to its first answered request, on Node and
 * on Bun. The engine starts as `npm start` and `npm run start:bun` start it (its esbuild
 * bundles, main.mjs with --enable-source-maps on node, main.bun.mjs on bun), each time on a
 * fresh SQLite file (so the migrations run and the first start creates its partner): with
 * the sandbox chain (no PAY_CONFIG, the default start, the EVM in the process) and with the
 * bench's PAY_CONFIG (one network, as deployed). The bare baselines (baseline-server.ts,
 * baseline-bun-server.ts, bundled the same way: no loader or transpiling at start on either
 * runtime) give each runtime's floor. The clock starts just before the spawn and stops when
 * the answer to `GET /health` on loopback, polled every few ms, has been read in full. Runs
 * alternate the runtimes (which goes first swaps every round) so that the machine's other
 * work falls on both alike; each server is stopped, and its files removed, before the next
 * starts. `npm run bench:cold` runs it alone (BENCH_COLD_RUNS starts of each, default 7,
 * writes bench/results/cold-start.json); `npm run bench` includes it.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { createServer } from "node:net"
import { loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { BENCH_API_KEY, BENCH_PAY_CONFIG } from "./client.js"
import {
  BUN,
  BUNDLES,
  bundleBaselines,
  ROOT,
  runBenchAlone,
  spawnTracked
} from "./server-process.js"

export interface ColdStartSettings {
  /** Starts of each server on each runtime. */
  readonly runs: number
  /** How often /health is tried until it answers. */
  readonly pollMs: number
  /** A start that has not answered by then fails the bench. */
  readonly startTimeoutMs: number
  /** The whole section's bound, for the callers' deadlines. */
  readonly deadlineMs: number
}

export const coldStartSettings = (): ColdStartSettings => {
  const runs = Number(process.env.BENCH_COLD_RUNS ?? 7)
  if (!Number.isInteger(runs) || runs < 1) throw new Error("BENCH_COLD_RUNS must be at least 1")
  // Builds, then each start (a few seconds at most on this machine) and its stop.
  return { runs, pollMs: 5, startTimeoutMs: 60_000, deadlineMs: 60_000 + runs * 7 * 20_000 }
}

export type Runtime = "node" | "bun"

export interface Spread {
  /** Every start's time, in the order measured. */
  readonly ms: ReadonlyArray<number>
  readonly min: number
  readonly median: number
  readonly max: number
}

export interface ColdStartCase {
  readonly name: string
  readonly node: Spread
  /** Absent for a Node-only case. */
  readonly bun?: Spread
  /** Bun's median over Node's. */
  readonly bunOverNode?: number
}

export interface ColdStartResult {
  readonly runs: number
  readonly pollMs: number
  readonly node: string
  readonly bun: string
  readonly loadAverageAtStart: number
  readonly cases: ReadonlyArray<ColdStartCase>
}

const BASELINE_MERCHANT_ID = "mrch_0000000000baseline00"

interface Case {
  readonly name: string
  readonly command: { readonly node: ReadonlyArray<string>; readonly bun?: ReadonlyArray<string> }
  /** The server's environment, for a start in its own empty folder. */
  readonly env: (dir: string, port: number) => Record<string, string>
}

const engineEnv = (dir: string, port: number) => ({
  HOST: "127.0.0.1",
  PORT: String(port),
  PAY_DATABASE: join(dir, "pay.sqlite"),
  PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY
})

const ENGINE = {
  node: [process.execPath, "--enable-source-maps", "examples/standalone/dist/main.mjs"],
  bun: [BUN, "examples/standalone/dist/main.bun.mjs"]
}

const withPayConfig = (dir: string, port: number) => {
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  return { ...engineEnv(dir, port), PAY_CONFIG: payConfig }
}

const CASES: ReadonlyArray<Case> = [
  { name: "engine, sandbox chain (no PAY_CONFIG)", command: ENGINE, env: engineEnv },
  { name: "engine, PAY_CONFIG (one network)", command: ENGINE, env: withPayConfig },
  // What Node's --enable-source-maps costs at start (it reads the bundle's source map);
  // Bun maps its stack traces without being asked.
  {
    name: "  the same, node without --enable-source-maps",
    command: { node: [process.execPath, "examples/standalone/dist/main.mjs"] },
    env: withPayConfig
  },
  {
    name: "bare baseline (no migrations)",
    command: {
      node: [process.execPath, `${BUNDLES}/baseline-server.mjs`],
      bun: [BUN, `${BUNDLES}/baseline-bun-server.mjs`]
    },
    env: (dir, port) => ({
      PORT: String(port),
      BASELINE_DATABASE: join(dir, "baseline.sqlite"),
      BASELINE_API_KEY: BENCH_API_KEY,
      BASELINE_MERCHANT_ID
    })
  }
]

/** The engine's bundles for both runtimes, and the baselines bundled alike. */
const buildAll = async () => {
  execFileSync(process.execPath, ["examples/build.mjs", "main", "main-bun"], {
    cwd: ROOT,
    stdio: "inherit"
  })
  await bundleBaselines(
    ["bench/baseline-server.ts", "bench/baseline-bun-server.ts"],
    ["better-sqlite3"]
  )
}

/** A port free on loopback now (the server is given it, so the poll knows where to look). */
const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => done(port))
    })
  })

/** GET /health's status once its answer is read in full, or undefined if nothing answers. */
const probe = (port: number, timeoutMs: number): Promise<number | undefined> =>
  new Promise((done) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/health", agent: false, timeout: timeoutMs },
      (res) => {
        res.resume()
        res.once("end", () => done(res.statusCode))
        res.once("error", () => done(undefined))
      }
    )
    req.once("timeout", () => req.destroy(new Error("timeout")))
    req.once("error", () => done(undefined))
    req.end()
  })

/** Runs left over from an address in use (another process took the free port first). */
const PORT_RETRIES = 3

const startOnce = async (
  c: Case,
  runtime: Runtime,
  dir: string,
  settings: ColdStartSettings
): Promise<number> => {
  for (let attempt = 1; ; attempt++) {
    const runDir = mkdtempSync(join(dir, "cold-"))
    const port = await freePort()
    const env: Record<string, string | undefined> = { ...process.env }
    // Only what the case sets: nothing of the caller's PAY_* or BASELINE_* leaks in.
    for (const name of Object.keys(env)) {
      if (name.startsWith("PAY_") || name.startsWith("BASELINE_")) delete env[name]
    }
    Object.assign(env, c.env(runDir, port))
    const [command, ...args] = c.command[runtime] ?? []
    const started = performance.now()
    const { child, exited } = spawnTracked(command!, args, env)
    let ended: string | undefined
    void exited.then(() => {
      ended = child.signalCode ?? `code ${child.exitCode}`
    })
    const lines: Array<string> = []
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on("data", (chunk: Buffer) => {
        lines.push(...chunk.toString("utf8").split("\n").filter(Boolean))
        lines.splice(0, Math.max(0, lines.length - 30))
      })
    }
    try {
      for (;;) {
        const left = settings.startTimeoutMs - (performance.now() - started)
        const status = await probe(port, Math.max(1, left))
        if (status === 200) return performance.now() - started
        if (status !== undefined) {
          throw new Error(`${c.name} on ${runtime}: GET /health answered ${status}`)
        }
        if (ended !== undefined) {
          if (attempt < PORT_RETRIES && lines.some((line) => /EADDRINUSE|in use/i.test(line))) {
            break
          }
          throw new Error(
            `${c.name} on ${runtime} ended (${ended}) before answering:\n${lines.join("\n")}`
          )
        }
        if (left <= 0) {
          throw new Error(
            `${c.name} on ${runtime} did not answer in ${settings.startTimeoutMs / 1000} s:\n` +
              lines.join("\n")
          )
        }
        await sleep(settings.pollMs)
      }
    } finally {
      // Stopped, and gone, before the next start: SIGTERM as in production, SIGKILL if slow.
      if (ended === undefined) {
        child.kill("SIGTERM")
        const timeout = sleep(15_000, "timeout" as const, { ref: false })
        if ((await Promise.race([exited, timeout])) === "timeout" && child.pid !== undefined) {
          try {
            process.kill(-child.pid, "SIGKILL")
          } catch {
            // already gone
          }
          await exited
        }
      }
      rmSync(runDir, { recursive: true, force: true })
    }
  }
}

const spread = (ms: ReadonlyArray<number>): Spread => {
  const sorted = [...ms].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return { ms, min: sorted[0]!, median, max: sorted.at(-1)! }
}

/** Every case `settings.runs` times on each runtime, in a folder of `dir`'s. */
export const measureColdStart = async (
  dir: string,
  settings: ColdStartSettings
): Promise<ColdStartResult> => {
  const loadAverageAtStart = loadavg()[0] ?? 0
  await buildAll()
  const bun = execFileSync(BUN, ["--version"], { encoding: "utf8" }).trim()
  const times = CASES.map(() => ({ node: [] as Array<number>, bun: [] as Array<number> }))
  for (let round = 1; round <= settings.runs; round++) {
    const order: ReadonlyArray<Runtime> = round % 2 === 1 ? ["node", "bun"] : ["bun", "node"]
    const line: Array<string> = []
    for (const [i, c] of CASES.entries()) {
      for (const runtime of order) {
        if (c.command[runtime] === undefined) continue
        const ms = await startOnce(c, runtime, dir, settings)
        times[i]![runtime].push(ms)
        line.push(`${runtime} ${ms.toFixed(0)}`)
      }
    }
    console.log(`  round ${round}/${settings.runs} (ms): ${line.join(", ")}`)
  }
  return {
    runs: settings.runs,
    pollMs: settings.pollMs,
    node: process.version,
    bun,
    loadAverageAtStart,
    cases: CASES.map((c, i) => {
      const node = spread(times[i]!.node)
      if (c.command.bun === undefined) return { name: c.name, node }
      const onBun = spread(times[i]!.bun)
      return { name: c.name, node, bun: onBun, bunOverNode: onBun.median / node.median }
    })
  }
}

export const formatColdStart = (r: ColdStartResult): Array<string> => {
  const n = (x: number, digits = 0) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const cell = (s: Spread | undefined) =>
    (s === undefined ? "" : `${n(s.min)} / ${n(s.median)} / ${n(s.max)}`).padStart(24)
  return [
    "",
    `Cold start: process spawned → its first answer to GET /health on loopback (tried every ` +
      `${r.pollMs} ms), ms, min / median / max of ${r.runs} starts each, the runtimes ` +
      `alternating (Node ${r.node}, Bun ${r.bun}; load average ${n(r.loadAverageAtStart, 2)} ` +
      "at start)",
    "  the engine as npm start / npm run start:bun run it, each start on a fresh SQLite file " +
      "(migrations, first partner); the bare baselines bundled alike",
    `  ${"".padEnd(46)}${"Node".padStart(24)}${"Bun".padStart(24)}${"Bun/Node".padStart(10)}`,
    ...r.cases
      .map(
        (c) =>
          `  ${c.name.padEnd(46)}${cell(c.node)}${cell(c.bun)}` +
          (c.bunOverNode === undefined ? "" : n(c.bunOverNode, 2).padStart(10))
      )
      .map((line) => line.trimEnd())
  ]
}

// Run alone (`npm run bench:cold`), not when bench/run.ts imports it.
runBenchAlone(import.meta.url, {
  name: "cold",
  title: "Cold start",
  deadlineMs: coldStartSettings().deadlineMs,
  measure: (dir) => measureColdStart(dir, coldStartSettings()),
  report: (coldStart) => ({ date: new Date().toISOString(), coldStart }),
  file: "cold-start",
  format: formatColdStart
})
