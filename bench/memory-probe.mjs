// Bench only, never part of the product: loaded into a server under test with
// `node --expose-gc --import <this file>` (bench/memory-probe.ts says how). On SIGUSR2 it
// forces full garbage collections, reads the process's memory, optionally writes a heap
// snapshot, and writes what it read to BENCH_PROBE_DIR/probe-<n>.json (n counts the
// signals), so that the bench reads memory the same way from outside any server, engine
// or baseline, without a route of the server's own.
import { readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { writeHeapSnapshot } from "node:v8"

const dir = process.env.BENCH_PROBE_DIR
const snapshots = process.env.BENCH_PROBE_SNAPSHOTS === "1"
const gc = globalThis.gc
if (dir === undefined || typeof gc !== "function") {
  throw new Error("memory-probe: needs BENCH_PROBE_DIR and node --expose-gc")
}

const vmRssBytes = () => {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) * 1024
}

// Between collections a turn of the event loop, so finalizers and weak callbacks run and
// what they free is collected by the next.
const turn = () => new Promise((done) => setImmediate(done))

let count = 0
let busy = false
process.on("SIGUSR2", async () => {
  if (busy) return
  busy = true
  const n = ++count
  try {
    for (let i = 0; i < 4; i++) {
      gc()
      await turn()
    }
    const memory = process.memoryUsage()
    const read = { n, vmRssBytes: vmRssBytes(), ...memory }
    const snapshot = snapshots ? writeHeapSnapshot(join(dir, `probe-${n}.heapsnapshot`)) : undefined
    const file = join(dir, `probe-${n}.json`)
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...read, snapshot }))
    renameSync(`${file}.tmp`, file)
  } finally {
    busy = false
  }
})
