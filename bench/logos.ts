/**
 * Merchant logos (issue 15): the time to create a merchant whose `iconUrl` is a 1024×1024
 * PNG or a 4096×4096 JPEG, and the server's memory peak while ten such creations run at
 * once. The images are `smoothImage`'s (@pay/logos/testing: smooth gradients, the kind of
 * picture a logo file holds, each well under the engine's 2 MB fetch limit), served over
 * HTTPS on loopback by `startLogoServer` (a throwaway test CA, trusted by the servers
 * through NODE_EXTRA_CA_CERTS) from this process. Each creation gets an image of its own:
 * smoothImage's gradient with a 16 px block of a colour of its own in a corner (the first is
 * smoothImage's image byte for byte), so every logo is fetched, normalised and written
 * anew, as a new merchant's would be, never found already kept under its name.
 *
 * The engine runs as `npm start` runs it (its esbuild bundle on plain node, a fresh SQLite
 * file, the bench's PAY_CONFIG, PAY_FETCH_ALLOW_PRIVATE=1 so its fetcher may reach
 * loopback). Beside it, in the same run, the baseline (bench/baseline-logo-server.ts,
 * bundled alike): bare node:http + node:https + sharp + better-sqlite3 with the engine's
 * pragmas, doing the least the route must (the key, the body, the Idempotency-Key's claim,
 * the fetch, checkLogo's sharp calls with the same parameters, the master's SHA-256, one
 * transaction with the logo, the merchant and the key's answer); every master it makes is
 * checked to be the engine's byte for byte (the same SHA-256 name).
 *
 * 1. Sequential: `warmups` rounds, then `rounds` measured, each round creating one merchant
 *    with the PNG, one with the JPEG and one without a logo on each server, the servers
 *    alternating which goes first; median and p95 of each, and the engine's over the
 *    baseline's.
 * 2. Memory: `bursts` times on each server (alternating), ten creations at once, all with a
 *    4096 JPEG (the largest decode; ten distinct images): the server's VmRSS read from /proc
 *    just before (idle), then sampled every `sampleMs` until the ten have answered, and its
 *    VmHWM (reset before the burst through /proc/<pid>/clear_refs where allowed); the peak
 *    is the larger of the two.
 *
 * `npm run bench:logos` runs it alone (writes bench/results/logos.json); `npm run bench`
 * includes it. BENCH_LOGO_ROUNDS (default 20) and BENCH_LOGO_BURSTS (default 3) size it.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { type LogoServer, smoothImage, startLogoServer } from "@pay/logos/testing"
import sharp from "sharp"
import { BENCH_API_KEY, BENCH_PAY_CONFIG } from "./client.js"
import {
  BUNDLES,
  bundleBaselines,
  callersSettings,
  ROOT,
  runBenchAlone,
  type ServerProcess,
  startServer
} from "./server-process.js"

export interface LogoBenchSettings {
  /** Rounds not counted, first. */
  readonly warmups: number
  /** Rounds measured: each creates one merchant per kind (PNG, JPEG, none) on each server. */
  readonly rounds: number
  /** Bursts of `burstSize` creations at once, on each server. */
  readonly bursts: number
  readonly burstSize: number
  /** How often VmRSS is read during a burst. */
  readonly sampleMs: number
  /** One creation that has not answered by then fails the bench. */
  readonly requestTimeoutMs: number
  /** The whole section's bound, for the callers' deadlines. */
  readonly deadlineMs: number
}

const whole = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be at least ${min}`)
  return value
}

export const logoSettings = (): LogoBenchSettings => {
  const warmups = 2
  const rounds = whole("BENCH_LOGO_ROUNDS", 20, 1)
  const bursts = whole("BENCH_LOGO_BURSTS", 3, 1)
  // Builds, images and starts; then at most 5 s a creation one at a time (they take well
  // under 1 s here) and 30 s a burst.
  return {
    warmups,
    rounds,
    bursts,
    burstSize: 10,
    sampleMs: 20,
    requestTimeoutMs: 60_000,
    deadlineMs: 120_000 + (warmups + rounds) * 6 * 5_000 + bursts * 2 * 30_000
  }
}

export type ImageKind = "png" | "jpeg"
export type Kind = ImageKind | "none"

const IMAGES: Record<ImageKind, { readonly side: number; readonly label: string }> = {
  png: { side: 1024, label: "1024×1024 PNG" },
  jpeg: { side: 4096, label: "4096×4096 JPEG" }
}
const KIND_LABELS: Record<Kind, string> = {
  png: "1024 PNG logo",
  jpeg: "4096 JPEG logo",
  none: "no logo"
}
const KINDS: ReadonlyArray<Kind> = ["png", "jpeg", "none"]
/** The engine's fetch limit (SafeFetch.ts: 2 * 1024 * 1024 bytes). */
const FETCH_LIMIT_BYTES = 2 * 1024 * 1024
const BLOCK = 16

export interface Spread {
  /** Every creation's time, in the order measured. */
  readonly ms: ReadonlyArray<number>
  readonly median: number
  /** Nearest rank. */
  readonly p95: number
  readonly min: number
  readonly max: number
}

export interface Burst {
  /** VmRSS just before the burst. */
  readonly idleBytes: number
  /** The larger of the sampled VmRSS and the VmHWM. */
  readonly peakBytes: number
  readonly sampledPeakBytes: number
  /** Undefined where the high-water mark could not be reset. */
  readonly hwmBytes: number | undefined
  /** From the first request sent to the last answer read. */
  readonly wallMs: number
}

export interface MemoryRun {
  /** VmRSS after the start, before any creation. */
  readonly afterStartBytes: number
  readonly bursts: ReadonlyArray<Burst>
}

export interface LogoBenchResult {
  readonly date: string
  readonly loadAverageAtStart: number
  readonly node: string
  readonly cores: number
  readonly sharp: {
    readonly version: string
    /** sharp's defaults as read in this process: the engine sets neither. */
    readonly concurrency: number
    readonly cache: ReturnType<typeof sharp.cache>
    readonly uvThreadpoolSize: string
  }
  readonly images: Record<
    ImageKind,
    {
      readonly label: string
      /** smoothImage's own image. */
      readonly bytes: number
      /** Every variant served, smoothImage's included. */
      readonly minBytes: number
      readonly maxBytes: number
      readonly variants: number
    }
  >
  readonly fetchLimitBytes: number
  readonly warmups: number
  readonly rounds: number
  readonly sequential: ReadonlyArray<{
    readonly kind: Kind
    readonly engine: Spread
    readonly baseline: Spread
    /** The engine's median over the baseline's. */
    readonly ratioMedian: number
    readonly ratioP95: number
  }>
  /** Masters with the same SHA-256 name from both servers, of the images both normalised. */
  readonly identicalMasters: { readonly same: number; readonly of: number }
  readonly memory: {
    readonly burstSize: number
    readonly sampleMs: number
    readonly engine: MemoryRun
    readonly baseline: MemoryRun
  }
}

const spread = (ms: ReadonlyArray<number>): Spread => {
  const sorted = [...ms].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  const p95 = sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)]!
  return { ms, median, p95, min: sorted[0]!, max: sorted.at(-1)! }
}

/**
 * `count` images: smoothImage's gradient (the same pixels and encoder settings), the first
 * as is, each other with a BLOCK px square of a colour of its own in the top-left corner
 * (37·n, 91·n, 13·n mod 256: distinct for n < 256), so its master, and its name, are new.
 */
const imageVariants = async (
  side: number,
  format: ImageKind,
  count: number
): Promise<Array<Uint8Array>> => {
  const pixels = Buffer.alloc(side * side * 3)
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const at = (y * side + x) * 3
      pixels[at] = Math.floor((255 * x) / side)
      pixels[at + 1] = Math.floor((255 * y) / side)
      pixels[at + 2] = 160
    }
  }
  const encode = async () =>
    new Uint8Array(
      await sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
        .toFormat(format, format === "jpeg" ? { quality: 85 } : {})
        .toBuffer()
    )
  const images = [await encode()]
  for (let n = 1; n < count; n++) {
    for (let y = 0; y < BLOCK; y++) {
      for (let x = 0; x < BLOCK; x++) {
        const at = (y * side + x) * 3
        pixels[at] = (37 * n) % 256
        pixels[at + 1] = (91 * n) % 256
        pixels[at + 2] = (13 * n) % 256
      }
    }
    images.push(await encode())
  }
  return images
}

const MEMORY_FIELD = (field: "VmRSS" | "VmHWM") => new RegExp(`^${field}:\\s+(\\d+) kB$`, "m")

const memory = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  const kb = MEMORY_FIELD(field).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  if (kb === undefined) throw new Error(`no ${field} for pid ${pid}`)
  return Number(kb) * 1024
}

/** Resets the process's VmHWM to its VmRSS (Linux, same user or root); false if refused. */
const resetHighWaterMark = (pid: number): boolean => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

interface Running {
  readonly name: "engine" | "baseline"
  readonly process: ServerProcess
}

let created = 0

/** One `POST /v1/merchants`: its time, from sending to the answer read, and its logo's name. */
const createMerchant = async (
  server: Running,
  iconUrl: string | null,
  timeoutMs: number
): Promise<{ readonly ms: number; readonly logoName: string | null }> => {
  const body = JSON.stringify({
    merchantName: `Logo Shop ${++created}`,
    merchantEmail: "logos@shop.example",
    ...(iconUrl === null ? {} : { iconUrl })
  })
  const headers = {
    "Api-Key": BENCH_API_KEY,
    "Idempotency-Key": `bench-logo-${process.pid}-${created}`,
    "Content-Type": "application/json"
  }
  const started = performance.now()
  const response = await fetch(`${server.process.url}/v1/merchants`, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await response.text()
  const ms = performance.now() - started
  if (response.status !== 201) {
    throw new Error(`${server.name}: POST /v1/merchants answered ${response.status}: ${text}`)
  }
  const shown = (JSON.parse(text) as { merchant?: { iconUrl?: unknown } }).merchant?.iconUrl
  if (iconUrl === null) {
    if (shown !== null) throw new Error(`${server.name}: a logo where none was given: ${text}`)
    return { ms, logoName: null }
  }
  const logoName = typeof shown === "string" ? /\/logos\/([0-9a-f]{64}\.webp)$/.exec(shown) : null
  if (logoName?.[1] === undefined) throw new Error(`${server.name}: no frozen logo in ${text}`)
  return { ms, logoName: logoName[1] }
}

/** `burstSize` creations at once on `server`, its memory watched. */
const burst = async (
  server: Running,
  iconUrls: ReadonlyArray<string>,
  settings: LogoBenchSettings,
  names: (index: number, name: string) => void
): Promise<Burst> => {
  const pid = server.process.pid
  // What the previous requests left running (a WAL checkpoint, sharp's threads) settles.
  await sleep(1_000)
  const idleBytes = memory(pid, "VmRSS")
  const reset = resetHighWaterMark(pid)
  let sampledPeakBytes = idleBytes
  const sample = () => {
    sampledPeakBytes = Math.max(sampledPeakBytes, memory(pid, "VmRSS"))
  }
  const timer = setInterval(sample, settings.sampleMs)
  const started = performance.now()
  try {
    const results = await Promise.all(
      iconUrls.map((url) => createMerchant(server, url, settings.requestTimeoutMs))
    )
    results.forEach((r, i) => {
      names(i, r.logoName!)
    })
  } finally {
    clearInterval(timer)
  }
  const wallMs = performance.now() - started
  sample()
  const hwmBytes = reset ? memory(pid, "VmHWM") : undefined
  return {
    idleBytes,
    peakBytes: Math.max(sampledPeakBytes, hwmBytes ?? 0),
    sampledPeakBytes,
    hwmBytes,
    wallMs
  }
}

const buildServers = async () => {
  execFileSync(process.execPath, ["examples/build.mjs", "main"], { cwd: ROOT, stdio: "inherit" })
  await bundleBaselines(["bench/baseline-logo-server.ts"], ["better-sqlite3", "sharp"])
}

const startServers = async (dir: string, logos: LogoServer) => {
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  const engineEnv = {
    HOST: "127.0.0.1",
    PORT: "0",
    PAY_DATABASE: join(dir, "engine.sqlite"),
    PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
    PAY_CONFIG: payConfig,
    PAY_FETCH_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: logos.caFile
  }
  const started: Array<Running> = []
  try {
    started.push({
      name: "engine",
      process: await startServer({
        name: "engine",
        command: process.execPath,
        args: ["--enable-source-maps", "examples/standalone/dist/main.mjs"],
        env: engineEnv,
        unsetEnv: callersSettings(engineEnv)
      })
    })
    const baselineEnv = {
      PORT: "0",
      BASELINE_DATABASE: join(dir, "baseline.sqlite"),
      BASELINE_API_KEY: BENCH_API_KEY,
      NODE_EXTRA_CA_CERTS: logos.caFile
    }
    started.push({
      name: "baseline",
      process: await startServer({
        name: "baseline",
        command: process.execPath,
        args: [`${BUNDLES}/baseline-logo-server.mjs`],
        env: baselineEnv,
        unsetEnv: callersSettings(baselineEnv)
      })
    })
    return started as [Running, Running]
  } catch (error) {
    await Promise.all(started.map((s) => s.process.stop()))
    throw error
  }
}

/** The whole section, in a folder of `dir`'s (removed after), its servers stopped after. */
export const measureLogos = async (
  dir: string,
  settings: LogoBenchSettings
): Promise<LogoBenchResult> => {
  const loadAverageAtStart = loadavg()[0] ?? 0
  const work = mkdtempSync(join(dir, "logos-"))
  let logos: LogoServer | undefined
  let servers: [Running, Running] | undefined
  try {
    await buildServers()
    const sequentialImages = settings.warmups + settings.rounds
    const counts: Record<ImageKind, number> = {
      png: sequentialImages,
      jpeg: sequentialImages + settings.bursts * settings.burstSize
    }
    console.log("  making the images…")
    const images = {} as Record<ImageKind, Array<Uint8Array>>
    const described = {} as LogoBenchResult["images"]
    for (const kind of ["png", "jpeg"] as const) {
      const { side, label } = IMAGES[kind]
      const own = await smoothImage(side, kind)
      const variants = await imageVariants(side, kind, counts[kind])
      if (Buffer.compare(Buffer.from(own), Buffer.from(variants[0]!)) !== 0) {
        throw new Error(`the ${label} variants no longer start from smoothImage's image`)
      }
      const sizes = variants.map((v) => v.length)
      described[kind] = {
        label,
        bytes: own.length,
        minBytes: Math.min(...sizes),
        maxBytes: Math.max(...sizes),
        variants: variants.length
      }
      if (described[kind].maxBytes >= FETCH_LIMIT_BYTES) {
        throw new Error(`a ${label} is ${described[kind].maxBytes} bytes: over the 2 MB limit`)
      }
      images[kind] = variants
    }
    logos = await startLogoServer()
    const server = logos
    const urlOf = (kind: ImageKind, n: number) => {
      const path = `/${kind}/${n}.${kind === "png" ? "png" : "jpg"}`
      return { path, url: `${server.origin}${path}` }
    }
    for (const kind of ["png", "jpeg"] as const) {
      images[kind].forEach((bytes, n) => {
        server.set(urlOf(kind, n).path, bytes, kind === "png" ? "image/png" : "image/jpeg")
      })
    }

    servers = await startServers(work, server)
    const [engine, baseline] = servers
    const afterStart = {
      engine: memory(engine.process.pid, "VmRSS"),
      baseline: memory(baseline.process.pid, "VmRSS")
    }
    // Each image's name from each server, to compare the masters.
    const names = {
      engine: new Map<string, string>(),
      baseline: new Map<string, string>()
    }

    const times = {
      engine: { png: [] as Array<number>, jpeg: [] as Array<number>, none: [] as Array<number> },
      baseline: { png: [] as Array<number>, jpeg: [] as Array<number>, none: [] as Array<number> }
    }
    for (let round = 0; round < sequentialImages; round++) {
      const warmup = round < settings.warmups
      const order = round % 2 === 0 ? [engine, baseline] : [baseline, engine]
      const line: Array<string> = []
      for (const kind of KINDS) {
        const cells: Array<string> = []
        for (const s of order) {
          const image = kind === "none" ? null : urlOf(kind, round)
          const { ms, logoName } = await createMerchant(
            s,
            image?.url ?? null,
            settings.requestTimeoutMs
          )
          if (image !== null) names[s.name].set(image.path, logoName!)
          if (!warmup) times[s.name][kind].push(ms)
          cells.push(`${s.name} ${ms.toFixed(0)}`)
        }
        line.push(`${kind} ${cells.join(" ")}`)
      }
      const label = warmup
        ? `warm-up ${round + 1}/${settings.warmups}`
        : `round ${round - settings.warmups + 1}/${settings.rounds}`
      // Whether memory keeps growing from one creation to the next, or levels off.
      const rss = (s: Running) => `${s.name} ${(memory(s.process.pid, "VmRSS") / 1e6).toFixed(0)}`
      console.log(`  ${label} (ms): ${line.join(", ")}; VmRSS (MB) ${rss(engine)} ${rss(baseline)}`)
    }

    const bursts = { engine: [] as Array<Burst>, baseline: [] as Array<Burst> }
    for (let b = 0; b < settings.bursts; b++) {
      const first = sequentialImages + b * settings.burstSize
      const batch = Array.from({ length: settings.burstSize }, (_, i) => urlOf("jpeg", first + i))
      for (const s of b % 2 === 0 ? [engine, baseline] : [baseline, engine]) {
        const result = await burst(
          s,
          batch.map((image) => image.url),
          settings,
          (i, name) => names[s.name].set(batch[i]!.path, name)
        )
        bursts[s.name].push(result)
        const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
        console.log(
          `  burst ${b + 1}/${settings.bursts} on ${s.name}: ${settings.burstSize} × 4096 JPEG ` +
            `at once in ${result.wallMs.toFixed(0)} ms, VmRSS ${mb(result.idleBytes)} → ` +
            `${mb(result.peakBytes)} MB`
        )
      }
    }

    // Every image was fetched by both servers, once each: nothing was served from a cache.
    let same = 0
    let of = 0
    for (const kind of ["png", "jpeg"] as const) {
      images[kind].forEach((_, n) => {
        const { path } = urlOf(kind, n)
        if (server.requests(path) !== 2) {
          throw new Error(`${path} was fetched ${server.requests(path)} times, not twice`)
        }
        of++
        const fromEngine = names.engine.get(path)
        if (fromEngine !== undefined && fromEngine === names.baseline.get(path)) same++
      })
    }
    if (new Set(names.engine.values()).size !== names.engine.size) {
      throw new Error("two images gave the engine the same logo name: they were not all new")
    }

    return {
      date: new Date().toISOString(),
      loadAverageAtStart,
      node: process.version,
      cores: cpus().length,
      sharp: {
        version: sharp.versions.sharp ?? "unknown",
        concurrency: sharp.concurrency(),
        cache: sharp.cache(),
        uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? "4 (libuv's default)"
      },
      images: described,
      fetchLimitBytes: FETCH_LIMIT_BYTES,
      warmups: settings.warmups,
      rounds: settings.rounds,
      sequential: KINDS.map((kind) => {
        const e = spread(times.engine[kind])
        const b = spread(times.baseline[kind])
        return {
          kind,
          engine: e,
          baseline: b,
          ratioMedian: e.median / b.median,
          ratioP95: e.p95 / b.p95
        }
      }),
      identicalMasters: { same, of },
      memory: {
        burstSize: settings.burstSize,
        sampleMs: settings.sampleMs,
        engine: { afterStartBytes: afterStart.engine, bursts: bursts.engine },
        baseline: { afterStartBytes: afterStart.baseline, bursts: bursts.baseline }
      }
    }
  } catch (error) {
    for (const s of servers ?? []) {
      const exit = s.process.exitStatus()
      if (exit !== undefined) {
        console.error(
          `${s.name} ended early (${exit}); its last output:\n${s.process.recentOutput()}`
        )
      }
    }
    throw error
  } finally {
    await Promise.all((servers ?? []).map((s) => s.process.stop()))
    await logos?.close()
    rmSync(work, { recursive: true, force: true })
  }
}

export const formatLogos = (r: LogoBenchResult): Array<string> => {
  const n = (x: number, digits = 0) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const mb = (bytes: number) => n(bytes / 1e6)
  const cache = r.sharp.cache
  const image = (kind: ImageKind) => {
    const i = r.images[kind]
    return (
      `${i.label} ${n(i.bytes)} bytes (its ${i.variants} variants ${n(i.minBytes)} to ` +
      `${n(i.maxBytes)})`
    )
  }
  const cell = (s: Spread) => `${n(s.median)} / ${n(s.p95)}`.padStart(20)
  const logoCost = (server: "engine" | "baseline", kind: ImageKind) => {
    const median = (k: Kind) => r.sequential.find((row) => row.kind === k)![server].median
    return n(median(kind) - median("none"))
  }
  const memoryRow = (name: string, run: MemoryRun) =>
    `  ${name.padEnd(10)}${`${mb(run.afterStartBytes)} MB`.padStart(8)}   ` +
    run.bursts
      .map(
        (b, i) =>
          `${i + 1}: ${mb(b.idleBytes)} → ${mb(b.peakBytes)} MB ` +
          `(+${mb(b.peakBytes - b.idleBytes)}) in ${n(b.wallMs / 1000, 1)} s`
      )
      .join("; ")
  const hwm = r.memory.engine.bursts.every((b) => b.hwmBytes !== undefined)
  return [
    "",
    `Logos: POST /v1/merchants with an iconUrl, the image fetched over HTTPS on loopback ` +
      `(load average ${n(r.loadAverageAtStart, 2)} at start; Node ${r.node}, ${r.cores} cores; ` +
      `the engine checks at most 2 images at once (@pay/logos maxConcurrentChecks); ` +
      `sharp ${r.sharp.version} with its defaults, which the engine keeps: concurrency ` +
      `${r.sharp.concurrency}, cache ${cache.memory.max} MB / ${cache.files.max} files / ` +
      `${cache.items.max} items; libuv threadpool ${r.sharp.uvThreadpoolSize})`,
    `  images (smoothImage's, each creation its own variant): ${image("png")}, ${image("jpeg")}; ` +
      `the fetch limit is ${n(r.fetchLimitBytes)} bytes`,
    "  the engine as npm start runs it (PAY_CONFIG, PAY_FETCH_ALLOW_PRIVATE=1, the test CA in " +
      "NODE_EXTRA_CA_CERTS); the baseline bench/baseline-logo-server.ts (node:http, node:https, " +
      "checkLogo's sharp calls, better-sqlite3 WAL + synchronous = FULL), bundled alike",
    `  one at a time, ${r.rounds} rounds after ${r.warmups} warm-ups, the servers alternating ` +
      "(ms, from request sent to answer read):",
    `  ${"".padEnd(18)}${"engine p50 / p95".padStart(20)}${"baseline p50 / p95".padStart(20)}` +
      `${"engine/baseline p50, p95".padStart(28)}`,
    ...r.sequential.map(
      (row) =>
        `  ${KIND_LABELS[row.kind].padEnd(18)}${cell(row.engine)}${cell(row.baseline)}` +
        `${`×${n(row.ratioMedian, 2)}, ×${n(row.ratioP95, 2)}`.padStart(28)}`
    ),
    `  the logo's own time (p50 with it − p50 without): 1024 PNG engine ` +
      `${logoCost("engine", "png")} ms, baseline ${logoCost("baseline", "png")} ms; 4096 JPEG ` +
      `engine ${logoCost("engine", "jpeg")} ms, baseline ${logoCost("baseline", "jpeg")} ms`,
    `  masters byte-identical between the servers (same SHA-256 name): ` +
      `${r.identicalMasters.same} of ${r.identicalMasters.of}`,
    `  ${r.memory.burstSize} creations at once, all 4096 JPEG (distinct images), the servers ` +
      `alternating: VmRSS just before, and the peak (VmRSS every ${r.memory.sampleMs} ms` +
      `${hwm ? ", and VmHWM reset before each burst" : ""}), all ${r.memory.burstSize} answered in:`,
    `  ${"".padEnd(10)}${"started".padStart(8)}   bursts: idle → peak (peak − idle)`,
    memoryRow("engine", r.memory.engine),
    memoryRow("baseline", r.memory.baseline)
  ]
}

// Run alone (`npm run bench:logos`), not when bench/run.ts imports it.
runBenchAlone(import.meta.url, {
  name: "logos",
  title: "Logos",
  deadlineMs: logoSettings().deadlineMs,
  measure: (dir) => measureLogos(dir, logoSettings()),
  report: (logos) => ({ logos }),
  file: "logos",
  format: formatLogos
})
