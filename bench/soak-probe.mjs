// Bench only, never part of the product: loaded into the engine under the soak bench
// (bench/soak.ts) with `node --import <this file>`. The engine's /metrics reports its RSS and
// heap but not its event-loop delay, and an RSS read at a random point of the garbage
// collector's cycle moves by tens of MB from one minute to the next (seen: 305 to 430 MB on
// a 2-core machine), more than the 10 % the soak judges; forcing a full collection to read
// it instead stalled the engine 0.7 to 1.5 s on the loaded machine, which every route's p99
// then showed. So this only watches: the event loop's delay (perf_hooks'
// monitorEventLoopDelay, sampled every 10 ms), and after each full (major) collection the
// engine makes by itself, its VmRSS and heap used: what it holds then is what a leak keeps.
// On SIGUSR2 (once a minute) it appends what it saw since the previous signal as one JSON
// line to SOAK_PROBE_FILE.
import { appendFileSync, readFileSync } from "node:fs"
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"

const file = process.env.SOAK_PROBE_FILE
if (file === undefined) throw new Error("soak-probe: needs SOAK_PROBE_FILE")

const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
const ms = (ns) => ns / 1e6
const vmRssBytes = () => {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) * 1024
}

let afterMajor = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue
    const memory = process.memoryUsage()
    afterMajor.push({
      rssBytes: vmRssBytes(),
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
      pauseMs: entry.duration
    })
  }
}).observe({ entryTypes: ["gc"] })

let n = 0
process.on("SIGUSR2", () => {
  const line = {
    n: ++n,
    p50Ms: ms(histogram.percentile(50)),
    p99Ms: ms(histogram.percentile(99)),
    maxMs: ms(histogram.max),
    meanMs: ms(histogram.mean),
    afterMajor
  }
  histogram.reset()
  afterMajor = []
  appendFileSync(file, `${JSON.stringify(line)}\n`)
})
