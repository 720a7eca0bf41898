/**
 * Several standalone servers as their own processes (the bundle `npm start`
 * runs, examples/standalone/dist/main.mjs) on one database: started, reached
 * over loopback, killed. For the multi-instance test.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"
import { type Client, client } from "./e2e-support.js"

const root = join(import.meta.dirname, "..", "..", "..")
const mainBundle = join(root, "examples/standalone/dist/main.mjs")

/** Builds the server bundle, as `npm start` does. */
export const buildServer = (): void => {
  execFileSync(process.execPath, [join(root, "examples/build.mjs"), "main"], { cwd: root })
}

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

/**
 * Spawns the server with `env` (HOST, PORT=0 and the caller's PAY_* variables)
 * and resolves once its whole start banner is printed. Every spawned process
 * is added to `spawned`, whether it starts or not, so it can be killed.
 */
export const startInstance = (
  name: string,
  env: NodeJS.ProcessEnv,
  spawned: Array<ChildProcess>
): Promise<Instance> =>
  new Promise<Instance>((resolve, reject) => {
    const child = spawn(process.execPath, ["--enable-source-maps", mainBundle], {
      env: { ...process.env, ...env, HOST: "127.0.0.1", PORT: "0" },
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
      reject(new Error(`instance ${name} did not start in ${START_TIMEOUT_MS} ms:\n${output}`))
    }, START_TIMEOUT_MS)
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
