/**
 * The bench's side of bench/memory-probe.mjs: the node arguments that load it into a
 * server under test, and a read on demand (SIGUSR2, then the file it writes): forced full
 * GCs first, then the resident memory and the heap, and a heap snapshot when asked for.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { ROOT, type ServerProcess } from "./server-process.js"

export interface MemoryRead {
  /** VmRSS of /proc/self/status, after the forced GCs. */
  readonly vmRssBytes: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly arrayBuffers: number
  /** The heap snapshot written with it, when the probe was asked for snapshots. */
  readonly snapshot?: string
}

/** Node arguments that come before the script: GC exposed, the probe preloaded. */
export const PROBE_NODE_ARGS = ["--expose-gc", "--import", `${ROOT}bench/memory-probe.mjs`]

/** The environment the probe reads: where it writes, and whether it writes heap snapshots. */
export const probeEnv = (dir: string, snapshots: boolean): Record<string, string> => {
  mkdirSync(dir, { recursive: true })
  return { BENCH_PROBE_DIR: dir, BENCH_PROBE_SNAPSHOTS: snapshots ? "1" : "0" }
}

/** A probe of one server process: each call is the next read. */
export const memoryProbe = (server: ServerProcess, dir: string) => {
  let n = 0
  return async (timeoutMs = 120_000): Promise<MemoryRead> => {
    const file = join(dir, `probe-${++n}.json`)
    process.kill(server.pid, "SIGUSR2")
    const until = performance.now() + timeoutMs
    while (!existsSync(file)) {
      if (performance.now() > until) throw new Error(`${server.name}: no memory read in time`)
      await sleep(50)
    }
    return JSON.parse(readFileSync(file, "utf8")) as MemoryRead
  }
}
