/**
 * Standalone servers as their own processes, on the runtime the tests run
 * under: the bundle `npm start` runs under Node (examples/standalone/dist/main.mjs),
 * the one `npm run start:bun` runs under Bun (main.bun.mjs). Started, reached
 * over loopback, killed. The builds, the CLI and the chain process run on Node,
 * as their npm scripts do on either.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { type Client, client } from "./e2e-support.js"

const root = join(import.meta.dirname, "..", "..", "..")

/** Under `npm run test:bun` the tests themselves run on Bun; npm names its Node. */
export const onBun = "Bun" in globalThis
export const nodeBinary = onBun ? (process.env.npm_node_execpath ?? "node") : process.execPath

/** A bundle examples/build.mjs writes: `main`, `main.bun`, `cli`, `chain`. */
export const bundle = (name: string) => join(root, "examples/standalone/dist", `${name}.mjs`)

/** What `npm start` (Node) or `npm run start:bun` (Bun) runs: the runtime and its arguments. */
export const serverCommand = (): readonly [string, ReadonlyArray<string>] =>
  onBun
    ? [process.execPath, [bundle("main.bun")]]
    : [process.execPath, ["--enable-source-maps", bundle("main")]]

/**
 * The bundles a file runs (`main`, `cli`, `chain`; `main` is this runtime's server), built once
 * per run by bundles.globalSetup.ts: only checked here, since files run in parallel and a
 * rebuild would replace a bundle another file's server is running from.
 */
export const requireBundles = (...targets: ReadonlyArray<string>): void => {
  for (const target of targets) {
    const file = bundle(target === "main-bun" || (target === "main" && onBun) ? "main.bun" : target)
    if (!existsSync(file))
      throw new Error(
        `${file} is missing: the test run's globalSetup builds it (bundles.globalSetup.ts)`
      )
  }
}

/** The server bundle `npm start` (or `npm run start:bun`) runs: checked, built by the run. */
export const requireServer = (): void => requireBundles("main")

export interface Instance {
  readonly name: string
  readonly child: ChildProcess
  /** `http://127.0.0.1:<port>`, from the `listening on` line. */
  readonly url: string
  readonly api: Client
  /** Everything the process printed so far. */
  readonly output: () => string
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>
}

const START_TIMEOUT_MS = 20_000

export interface StartOptions {
  /** The environment `env` is laid over. Default: this process's. */
  readonly base?: NodeJS.ProcessEnv
  /** Default 20 s. */
  readonly startTimeoutMs?: number
}

/**
 * Spawns the server with `env` (HOST, PORT=0 and the caller's PAY_* variables)
 * and resolves once its whole start banner is printed. Every spawned process
 * is added to `spawned`, whether it starts or not, so it can be killed.
 */
export const startInstance = (
  name: string,
  env: NodeJS.ProcessEnv,
  spawned: Array<ChildProcess>,
  { base = process.env, startTimeoutMs = START_TIMEOUT_MS }: StartOptions = {}
): Promise<Instance> =>
  new Promise<Instance>((resolve, reject) => {
    const [runtime, args] = serverCommand()
    const child = spawn(runtime, args, {
      env: { ...base, ...env, HOST: "127.0.0.1", PORT: "0" },
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    spawned.push(child)
    const exited = new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) done()
      else child.once("exit", () => done())
    })
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`instance ${name} did not start in ${startTimeoutMs} ms:\n${output}`))
    }, startTimeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const url = output.match(/listening on (http:\/\/\S+)/)?.[1]
      // The banner ends with the bootstrap note or the CLI hint.
      if (url && /(Try: curl|npm run pay)/.test(output)) {
        clearTimeout(timer)
        resolve({
          name,
          child,
          url,
          api: client(() => url),
          output: () => output,
          exited
        })
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`instance ${name} exited (${code ?? signal}) before it started:\n${output}`))
    })
  })

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

const exitOf = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (!isRunning(child)) resolve()
    else child.once("exit", () => resolve())
  })

/**
 * Stops every process still running: SIGTERM, then SIGKILL for any still
 * there after `graceMs`; resolves once all are gone.
 */
export const stopAll = async (children: ReadonlyArray<ChildProcess>, graceMs = 3000) => {
  const running = children.filter(isRunning)
  for (const child of running) child.kill("SIGTERM")
  const gone = Promise.all(running.map(exitOf))
  const late = setTimeout(() => {
    for (const child of running) if (isRunning(child)) child.kill("SIGKILL")
  }, graceMs)
  await gone
  clearTimeout(late)
}

/**
 * The first partner's key, as a first start without a terminal leaves it: in a file only its
 * owner may read, which the banner names (never in the server's output); read, then removed.
 * Undefined when the output names no such file.
 */
export const bootstrapKeyOf = (output: string): string | undefined => {
  const file = output.match(/Its API key is in (\S+) \(readable by this user only\)/)?.[1]
  if (file === undefined) return undefined
  if ((statSync(file).mode & 0o777) !== 0o600) throw new Error(`${file} is readable by others`)
  const key = readFileSync(file, "utf8").trim()
  // Stored, as the banner asks: the file goes (on PostgreSQL it is in the working directory).
  rmSync(file)
  return key
}
