/**
 * `npm run bench:profile -- <status|create> <sqlite|postgres>`: where one payment route's
 * time goes in the engine under load. The standalone bundle, as `npm start` runs it, under
 * V8's CPU profiler (`--cpu-prof`), loaded by autocannon (50 connections, a warm-up, then
 * the measured run); then the profile's busy time (idle left out) by part: each of the
 * engine's packages, Effect's runtime, the database driver, Node's own HTTP and streams,
 * the socket writes (`writev`, a system call) and the garbage collector. A native call
 * (SQLite's C code under better-sqlite3) counts in the JavaScript function that made it.
 * Beside each share, its part of the server's CPU time per request in the measured run.
 * The profiler itself costs a few per cent; read the shares, not the throughput.
 * BENCH_SECONDS (10) and BENCH_WARMUP_SECONDS (3) size the run; BENCH_PROFILE_KEEP, a
 * folder, keeps the .cpuprofile (Chrome DevTools opens it); PostgreSQL as the tests'
 * (bench/postgres.ts).
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  BENCH_API_KEY,
  BENCH_PAY_CONFIG,
  createMerchant,
  createPayment,
  inParallel,
  paymentBody,
  paymentHeaders,
  statusPath
} from "./client.js"
import { measureLoad } from "./load.js"
import { type BenchPostgres, startPostgres } from "./postgres.js"
import { killAllNow, MS_PER_TICK, ROOT, startServer } from "./server-process.js"

const [route = "status", store = "sqlite"] = process.argv.slice(2)
if (!["status", "create"].includes(route) || !["sqlite", "postgres"].includes(store)) {
  console.error("usage: npm run bench:profile -- <status|create> <sqlite|postgres>")
  process.exit(2)
}
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const BUNDLE = "examples/standalone/dist/main.mjs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** For each line of the esbuild bundle, the source module it came from (its `// path` marks). */
const modulesByLine = (bundle: string): Array<string> => {
  const byLine: Array<string> = []
  let current = "(bundle)"
  for (const line of readFileSync(bundle, "utf8").split("\n")) {
    const mark = /^\/\/ (\S+\.(?:ts|js|mjs|cjs))$/.exec(line)
    if (mark?.[1] !== undefined) current = mark[1]
    byLine.push(current)
  }
  return byLine
}

/** A source module as a part of the report: a package, or a folder of the engine's core. */
const partOf = (module: string): string => {
  const dependency = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module)
  if (dependency?.[1] !== undefined) return dependency[1]
  const core = /^packages\/core\/src\/([^/]+)\//.exec(module)
  if (core?.[1] !== undefined) return `@pay/core ${core[1]}`
  const pkg = /^packages\/([^/]+)\//.exec(module)
  return pkg?.[1] !== undefined ? `@pay/${pkg[1]}` : module
}

const partsOf = (profile: CpuProfile, bundle: string) => {
  const lines = modulesByLine(bundle)
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const parts = new Map<string, number>()
  let busy = 0
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)?.callFrame
    const dt = profile.timeDeltas[i] ?? 0
    if (frame === undefined || frame.functionName === "(idle)") return
    let part: string
    if (frame.url.endsWith(BUNDLE)) part = partOf(lines[frame.lineNumber] ?? "(bundle)")
    else if (frame.url.startsWith("node:")) part = "Node (http, streams, timers…)"
    else if (frame.url === "") part = `native: ${frame.functionName}`
    else part = partOf(frame.url.replace(/^.*?node_modules\//, "node_modules/"))
    parts.set(part, (parts.get(part) ?? 0) + dt)
    busy += dt
  })
  return { parts, busy }
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-profile-"))
  let postgres: BenchPostgres | undefined
  process.on("exit", killAllNow)
  try {
    execFileSync(process.execPath, ["examples/build.mjs", "main"], { cwd: ROOT, stdio: "inherit" })
    postgres = store === "postgres" ? await startPostgres(["engine"]) : undefined
    const payConfig = join(dir, "pay-config.json")
    writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
    const profiles = join(dir, "profiles")
    const server = await startServer({
      name: "engine",
      command: process.execPath,
      args: ["--enable-source-maps", "--cpu-prof", `--cpu-prof-dir=${profiles}`, BUNDLE],
      env: {
        HOST: "127.0.0.1",
        PORT: "0",
        PAY_DATABASE: postgres?.urls.engine ?? join(dir, "profile.sqlite"),
        PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
        PAY_CONFIG: payConfig
      }
    })
    const target = {
      name: "engine",
      url: server.url,
      merchantId: await createMerchant("engine", server.url)
    }
    let n = 0
    const ids = route === "status" ? await inParallel(200, 50, (i) => createPayment(target, i)) : []
    const spec = {
      name: `${route} on ${store}`,
      url: server.url,
      method: route === "status" ? ("GET" as const) : ("POST" as const),
      headers: paymentHeaders(target),
      next:
        route === "status"
          ? () => ({ path: statusPath(ids[n++ % ids.length]!) })
          : () => ({ path: "/v1/payments", body: paymentBody(n++) })
    }
    await measureLoad(spec, { connections: 50, warmupSeconds: 0, seconds: warmupSeconds })
    const ticks = server.cpuTicks()
    const load = await measureLoad(spec, { connections: 50, warmupSeconds: 0, seconds })
    const cpuMsPerRequest = ((server.cpuTicks() - ticks) * MS_PER_TICK) / load.requests
    await server.stop()
    const keep = process.env.BENCH_PROFILE_KEEP
    if (keep !== undefined) cpSync(profiles, keep, { recursive: true })
    const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"))
    if (file === undefined) throw new Error("the server wrote no CPU profile")
    const profile = JSON.parse(readFileSync(join(profiles, file), "utf8")) as CpuProfile
    const { parts, busy } = partsOf(profile, join(ROOT, BUNDLE))
    console.log(
      `\n${spec.method} ${route === "status" ? "/v1/payments/{id}/status" : "/v1/payments"} on ` +
        `${store}, ${new Date().toISOString()}: ${Math.round(load.requestsPerSecond)} req/s ` +
        `under the profiler, ${(cpuMsPerRequest * 1000).toFixed(0)} µs of server CPU per request`
    )
    console.log(`${"part".padEnd(44)}${"busy time".padStart(10)}${"µs/request".padStart(12)}`)
    const rows = [...parts].sort((a, b) => b[1] - a[1])
    const shown = rows.filter(([, t]) => t / busy >= 0.005)
    for (const [part, t] of shown) {
      const share = t / busy
      console.log(
        `${part.slice(0, 43).padEnd(44)}${`${(share * 100).toFixed(1)} %`.padStart(10)}` +
          `${(share * cpuMsPerRequest * 1000).toFixed(1).padStart(12)}`
      )
    }
    const rest = rows.slice(shown.length).reduce((sum, [, t]) => sum + t, 0)
    console.log(
      `${"the rest (each under 0.5 %)".padEnd(44)}${`${((rest / busy) * 100).toFixed(1)} %`.padStart(10)}`
    )
  } finally {
    await postgres?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench:profile failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
