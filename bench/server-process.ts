/**
 * Runs a server under test (the engine or the baseline) as a child process: waits for its
 * "listening on http://…" line, finds the process that really listens (a launcher such as
 * tsx starts the program in a child node), reads its memory and CPU time, and stops it
 * with SIGTERM.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join, resolve as resolvePath } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

export interface ServerProcess {
  readonly name: string
  readonly url: string
  /** The process that holds the listening socket (not a launcher such as tsx). */
  readonly pid: number
  readonly rssBytes: () => number
  /** User + system CPU time so far, in clock ticks. */
  readonly cpuTicks: () => number
  /** How it ended ("code 1", "SIGKILL"), or undefined while it runs. */
  readonly exitStatus: () => string | undefined
  /** Its last lines of stdout and stderr, for error messages. */
  readonly recentOutput: () => string
  readonly stop: () => Promise<void>
}

export const ROOT = fileURLToPath(new URL("..", import.meta.url))
/** Where the benches write their bundles (gitignored). */
export const BUNDLES = "bench/dist"

/**
 * Bundles baseline servers into BUNDLES as .mjs, so that no server runs a TypeScript
 * loader; inside the repository, so that they find their `external` packages in
 * node_modules.
 */
export const bundleBaselines = (
  entryPoints: ReadonlyArray<string>,
  external: ReadonlyArray<string>
) =>
  build({
    absWorkingDir: ROOT,
    entryPoints: [...entryPoints],
    outdir: BUNDLES,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...external],
    logLevel: "warning"
  })

/** The caller's PAY_* and BASELINE_* variables, which the servers must not inherit. */
export const callersSettings = (ours: Readonly<Record<string, string>>) =>
  Object.keys(process.env).filter(
    (name) => (name.startsWith("PAY_") || name.startsWith("BASELINE_")) && !(name in ours)
  )
export const TSX = `${ROOT}node_modules/.bin/tsx`
/** The repository's Bun (its devDependency). */
export const BUN = `${ROOT}node_modules/.bin/bun`
const READY = /listening on (http:\/\/\S+)/
const OUTPUT_LINES_KEPT = 30

const running = new Set<ChildProcess>()

/** Last resort on exit: SIGKILL the process group of every child not yet stopped. */
export const killAllNow = () => {
  for (const child of running) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
}

const clockTicksPerSecond = (): number => {
  try {
    const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
}

/** What a bench's report says of the machine; the load says how busy other work kept it. */
export const describeMachine = () => ({
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  node: process.version,
  loadAverageAtStart: loadavg()[0] ?? 0
})

/** A /proc clock tick (ServerProcess.cpuTicks) in milliseconds. */
export const MS_PER_TICK = 1000 / clockTicksPerSecond()

/**
 * Spawns `command` from the repository's root in a process group of its own (so a SIGKILL
 * fallback also reaches a launcher's child), stdin closed, stdout and stderr piped; it is
 * killed by killAllNow until it exits.
 */
export const spawnTracked = (
  command: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): { readonly child: ChildProcess; readonly exited: Promise<void> } => {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  running.add(child)
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  void exited.then(() => running.delete(child))
  return { child, exited }
}

export const startServer = (options: {
  readonly name: string
  readonly command: string
  /** Paths in them are relative to the repository's root. */
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** Variables of this process's environment the server must not inherit. */
  readonly unsetEnv?: ReadonlyArray<string>
  readonly startTimeoutMs?: number
}): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    // The engine's request lines off (warning) unless BENCH_LOG_LEVEL says otherwise: a line
    // per request piped into this process, which also runs the load, would be measured as the
    // engine's cost; `npm run bench:handler` measures what the line costs (docs/benchmarks.md).
    const env: Record<string, string | undefined> = {
      ...process.env,
      PAY_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warning",
      ...options.env
    }
    for (const name of options.unsetEnv ?? []) delete env[name]
    const { child, exited } = spawnTracked(options.command, options.args, env)
    const lines: Array<string> = []
    const recent = () => lines.join("\n")
    let ready = false
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      reject(
        new Error(`${options.name} did not print "listening on http://…" in time:\n${recent()}`)
      )
    }, options.startTimeoutMs ?? 60_000)
    const onLine = (line: string) => {
      if (line.trim() === "") return
      lines.push(line)
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift()
      const match = ready ? null : READY.exec(line)
      if (match?.[1] === undefined) return
      ready = true
      clearTimeout(timer)
      try {
        resolve(makeServer(options.name, match[1], child, exited, recent))
      } catch (error) {
        reject(error)
      }
    }
    // Whole lines only (a chunk may end mid-URL), and keep draining both pipes after the
    // start, or a chatty server would block on a full pipe.
    for (const stream of [child.stdout, child.stderr]) {
      let partial = ""
      stream?.on("data", (chunk: Buffer) => {
        const parts = (partial + chunk.toString("utf8")).split("\n")
        partial = parts.pop() ?? ""
        for (const line of parts) onLine(line)
      })
    }
    child.once("exit", (code, signal) => {
      // Died under load: its last lines are why, and every request after fails without them.
      if (ready && code !== 0 && signal !== "SIGTERM" && signal !== "SIGKILL") {
        console.error(`${options.name} exited (${signal ?? code}):\n${recent()}`)
      }
      if (!ready) {
        clearTimeout(timer)
        reject(
          new Error(`${options.name} exited before listening (${signal ?? code}):\n${recent()}`)
        )
      }
    })
  })

const makeServer = (
  name: string,
  url: string,
  child: ChildProcess,
  exited: Promise<void>,
  recentOutput: () => string
): ServerProcess => {
  const launcher = child.pid!
  const pid = listeningPid(launcher, Number(new URL(url).port))
  return {
    name,
    url,
    pid,
    rssBytes: () => {
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
      if (kb === undefined) throw new Error(`no VmRSS for ${name} (pid ${pid})`)
      return Number(kb) * 1024
    },
    cpuTicks: () => {
      const fields = statFields(pid)
      return Number(fields[11]) + Number(fields[12])
    },
    exitStatus: () =>
      child.signalCode ?? (child.exitCode === null ? undefined : `code ${child.exitCode}`),
    recentOutput,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      // A launcher (tsx) forwards SIGTERM to the program, which then shuts down cleanly.
      child.kill("SIGTERM")
      const timeout = new Promise<"timeout">((done) => {
        setTimeout(() => done("timeout"), 15_000).unref()
      })
      if ((await Promise.race([exited, timeout])) === "timeout") {
        process.kill(-launcher, "SIGKILL")
        await exited
      }
    }
  }
}

// Fields of /proc/<pid>/stat after the command name, which may itself hold spaces:
// [0] is the state, [1] the parent pid, [11] utime, [12] stime.
const statFields = (pid: number): Array<string> => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
}

const descendants = (root: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const parent = Number(statFields(Number(entry))[1])
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
    } catch {
      // the process ended while we looked
    }
  }
  const all = [root]
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []))
  return all
}

const listeningInodes = (port: number): Set<string> => {
  const inodes = new Set<string>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/)
      const localPort = Number.parseInt(cols[1]?.split(":")[1] ?? "", 16)
      if (localPort === port && cols[3] === "0A") inodes.add(cols[9] ?? "")
    }
  }
  return inodes
}

const listeningPid = (launcher: number, port: number): number => {
  const inodes = listeningInodes(port)
  for (const pid of descendants(launcher)) {
    let fds: Array<string> = []
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]
        if (inode !== undefined && inodes.has(inode)) return pid
      } catch {
        // the descriptor closed while we looked
      }
    }
  }
  throw new Error(`no process under pid ${launcher} listens on port ${port}`)
}

/**
 * A bench part run alone (`npm run bench:<name>`): a temporary folder for its
 * files, a deadline after which it stops itself, children killed on any exit,
 * its report written to `bench/results/<file>.json`, and an explicit exit (a
 * failed run may leave sockets open that would keep the process alive). Does
 * nothing when the module is imported (by bench/run.ts) rather than run.
 */
export const runBenchAlone = <R>(
  moduleUrl: string,
  part: {
    readonly name: string
    readonly title: string
    readonly deadlineMs: number
    readonly measure: (dir: string) => Promise<R>
    readonly report: (result: R) => object
    readonly file: string
    readonly format: (result: R) => ReadonlyArray<string>
  }
): void => {
  if (process.argv[1] === undefined || resolvePath(process.argv[1]) !== fileURLToPath(moduleUrl)) {
    return
  }
  const dir = mkdtempSync(join(tmpdir(), `pay-bench-${part.name}-`))
  const abandon = (why: string, code: number) => {
    console.error(why)
    killAllNow()
    rmSync(dir, { recursive: true, force: true })
    process.exit(code)
  }
  process.on("exit", killAllNow)
  process.on("SIGINT", () => abandon(`bench:${part.name}: interrupted`, 130))
  process.on("SIGTERM", () => abandon(`bench:${part.name}: terminated`, 143))
  setTimeout(
    () =>
      abandon(`bench:${part.name}: still running after ${part.deadlineMs / 1000} s, stopped`, 1),
    part.deadlineMs
  ).unref()
  const results = fileURLToPath(new URL("./results/", import.meta.url))
  const run = async () => {
    try {
      console.log(`${part.title}:`)
      const result = await part.measure(dir)
      mkdirSync(results, { recursive: true })
      writeFileSync(
        join(results, `${part.file}.json`),
        `${JSON.stringify(part.report(result), null, 2)}\n`
      )
      console.log([...part.format(result), ""].join("\n"))
      console.log(`Written to bench/results/${part.file}.json`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  run().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(
        `bench:${part.name} failed: ${error instanceof Error ? error.message : String(error)}`
      )
      process.exit(1)
    }
  )
}
