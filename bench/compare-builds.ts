/**
 * `npm run bench:builds -- <before.mjs> <after.mjs>`: two builds of the standalone
 * server (`node examples/build.mjs main` bundles, e.g. one saved from an earlier commit)
 * under the same load on the hot routes, alternating rounds so that the machine's other
 * work falls on both alike; prints each round and the range of after/before ratios.
 * SQLite, synchronous = FULL, the same PAY_CONFIG as `npm run bench`. The bundles must sit
 * inside the repository (examples/standalone/dist/) so they find its node_modules. Beside
 * throughput, each server's CPU time per request (read from /proc), which the load of a
 * shared machine disturbs far less.
 * BENCH_ROUNDS (default 3), BENCH_SECONDS (default 5), BENCH_WARMUP_SECONDS (default 2).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import {
  BENCH_API_KEY,
  BENCH_PAY_CONFIG,
  createMerchant,
  createPayment,
  inParallel,
  paymentBody,
  paymentHeaders,
  statusPath,
  type Target
} from "./client.js"
import { type LoadResult, measureLoad } from "./load.js"
import { killAllNow, type ServerProcess, startServer } from "./server-process.js"

const [beforeBundle, afterBundle] = process.argv.slice(2)
if (beforeBundle === undefined || afterBundle === undefined) {
  throw new Error("usage: npm run bench:builds -- <before.mjs> <after.mjs>")
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const load = {
  connections: 50,
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  seconds: Number(process.env.BENCH_SECONDS ?? 5)
}

const dir = mkdtempSync(join(tmpdir(), "pay-bench-builds-"))
const started: Array<ServerProcess> = []

const start = async (
  name: string,
  bundle: string
): Promise<{ readonly target: Target; readonly server: ServerProcess }> => {
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  const server = await startServer({
    name,
    command: process.execPath,
    args: [resolve(bundle)],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: join(dir, `${name}.sqlite`),
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_CONFIG: payConfig
    }
  })
  started.push(server)
  return {
    target: { name, url: server.url, merchantId: await createMerchant(name, server.url) },
    server
  }
}

const measure = async (
  target: Target,
  server: ServerProcess,
  route: "create" | "status",
  ids: ReadonlyArray<string>
) => {
  let n = 0
  const spec = {
    name: `${route} on ${target.name}`,
    url: target.url,
    method: route === "create" ? ("POST" as const) : ("GET" as const),
    headers: paymentHeaders(target),
    next: () =>
      route === "create"
        ? { path: "/v1/payments", body: paymentBody(n++) }
        : { path: statusPath(ids[n++ % ids.length]!) }
  }
  // The warm-up on its own, so that the CPU time read around the measured run is its alone.
  await measureLoad(spec, { ...load, warmupSeconds: 0, seconds: load.warmupSeconds })
  const ticks = server.cpuTicks()
  const result = await measureLoad(spec, { ...load, warmupSeconds: 0 })
  // Clock ticks are 10 ms (USER_HZ 100 on Linux).
  const cpuMsPerRequest = ((server.cpuTicks() - ticks) * 10) / result.requests
  return { ...result, cpuMsPerRequest }
}

const main = async () => {
  const before = await start("before", beforeBundle)
  const after = await start("after", afterBundle)
  const ids = new Map<string, ReadonlyArray<string>>()
  for (const { target } of [before, after]) {
    ids.set(target.name, await inParallel(1_000, 50, (i) => createPayment(target, 100_000 + i)))
  }
  const ratios: Record<string, Array<number>> = { create: [], status: [] }
  const cpuRatios: Record<string, Array<number>> = { create: [], status: [] }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const route of ["status", "create"] as const) {
      // Alternate which build goes first, so neither always runs on a warmer machine.
      const order = round % 2 === 1 ? [before, after] : [after, before]
      const results = new Map<string, LoadResult & { readonly cpuMsPerRequest: number }>()
      for (const { target, server } of order) {
        results.set(target.name, await measure(target, server, route, ids.get(target.name)!))
      }
      const b = results.get("before")!
      const a = results.get("after")!
      ratios[route]!.push(a.requestsPerSecond / b.requestsPerSecond)
      cpuRatios[route]!.push(a.cpuMsPerRequest / b.cpuMsPerRequest)
      console.log(
        `round ${round} ${route}: before ${b.requestsPerSecond.toFixed(0)} req/s ${b.cpuMsPerRequest.toFixed(3)} ms CPU/req, after ${a.requestsPerSecond.toFixed(0)} req/s ${a.cpuMsPerRequest.toFixed(3)} ms CPU/req (throughput ${(a.requestsPerSecond / b.requestsPerSecond).toFixed(2)}, CPU ${(a.cpuMsPerRequest / b.cpuMsPerRequest).toFixed(2)})`
      )
    }
  }
  const range = (values: ReadonlyArray<number>) =>
    `${Math.min(...values).toFixed(2)} to ${Math.max(...values).toFixed(2)}`
  for (const [route, values] of Object.entries(ratios)) {
    console.log(
      `${route}: after/before throughput ${range(values)}, server CPU per request ${range(cpuRatios[route]!)}, over ${values.length} rounds`
    )
  }
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    killAllNow()
    rmSync(dir, { recursive: true, force: true })
  })
