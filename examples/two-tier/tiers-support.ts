/**
 * For the two-tier test: the web and worker processes as they run in a
 * deployment (bundled from web.ts and worker.ts by examples/build.mjs, since
 * under tsx each takes several seconds to load), started, read and stopped,
 * and the PAY_CONFIG naming the chain process they share.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ChainProcess, chainProcessNetwork } from "../standalone/test/chain-work-support.js"
import type { Tier } from "./options.js"

const root = join(import.meta.dirname, "..", "..")

export interface Bundles {
  /** The test's own folder of bundles, under the repository's .tmp/ (remove it after). */
  readonly dir: string
  readonly chain: string
  readonly web: string
  readonly worker: string
}

/**
 * Builds the chain server and both tiers, as `npm run chain` and
 * `node examples/build.mjs two-tier` do, into a folder of this test's own:
 * other test files rebuild the shared dist/ folders while this one runs its
 * bundles. Inside the repository, so the bundles find node_modules.
 */
export const buildBundles = (): Bundles => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  const dir = mkdtempSync(join(root, ".tmp", "two-tier-"))
  execFileSync(
    process.execPath,
    [join(root, "examples/build.mjs"), "chain", "two-tier", "--outdir", dir],
    { cwd: root }
  )
  const at = (name: string) => join(dir, `${name}.mjs`)
  return { dir, chain: at("chain"), web: at("web"), worker: at("worker") }
}

/**
 * A networks file whose one network is the chain process, its token priced in
 * USD, no fees (so a merchant is settled exactly what the buyer paid), and
 * jobs looked for every 50 ms: a process that did chain work would take up a
 * due job within a fraction of a second.
 */
export const writePayConfig = (dir: string, chain: ChainProcess): string => {
  const path = join(dir, "pay-config.json")
  writeFileSync(
    path,
    JSON.stringify({
      networks: [chainProcessNetwork(chain, chain.rpcUrl)],
      jobs: { pollMs: 50, leaseSeconds: 2 }
    })
  )
  return path
}

export interface TierProcess {
  readonly name: string
  readonly child: ChildProcess
  /** A web process's `http://127.0.0.1:<port>`, from its `listening on` line; "" for a worker. */
  readonly url: string
  /** Everything the process printed so far, stdout and stderr. */
  readonly output: () => string
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<number | string>
}

/** Generous: three processes may be loading at once on a busy 2-core machine. */
const START_TIMEOUT_MS = 30_000

const exitOf = (child: ChildProcess): Promise<number | string> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode ?? child.signalCode ?? "")
    } else child.once("exit", (code, signal) => resolve(code ?? signal ?? ""))
  })

/** Runs a tier's bundle with `env` (and nothing else of the test's PAY_* or PORT). */
const spawnTier = (tier: Tier, bundles: Bundles, env: NodeJS.ProcessEnv): ChildProcess =>
  spawn(process.execPath, ["--enable-source-maps", bundles[tier]], {
    env: { PATH: process.env.PATH, ...env },
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })

/**
 * Starts a tier process and resolves once it says it is ready (`listening on
 * <url>`, `worker ready`). Every spawned process is added to `spawned`,
 * whether it starts or not, so it can be stopped.
 */
export const startTier = (
  name: string,
  tier: Tier,
  bundles: Bundles,
  env: NodeJS.ProcessEnv,
  spawned: Array<ChildProcess>
): Promise<TierProcess> =>
  new Promise((resolve, reject) => {
    const web = { HOST: "127.0.0.1", PORT: "0" }
    const child = spawnTier(tier, bundles, tier === "web" ? { ...web, ...env } : env)
    spawned.push(child)
    const exited = exitOf(child)
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${name} did not start in ${START_TIMEOUT_MS} ms:\n${output}`))
    }, START_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const url = output.match(/^listening on (http:\/\/\S+)$/m)?.[1]
      if (tier === "web" ? url !== undefined : /^worker ready/m.test(output)) {
        clearTimeout(timer)
        resolve({ name, child, url: url ?? "", output: () => output, exited })
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${output}`))
    })
  })

/** Runs a tier process that must fail to start: its exit code and what it printed on stderr. */
export const failedStart = (
  tier: Tier,
  bundles: Bundles,
  env: NodeJS.ProcessEnv,
  spawned: Array<ChildProcess>
): Promise<{ readonly code: number | string; readonly stderr: string }> => {
  const child = spawnTier(tier, bundles, env)
  spawned.push(child)
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  // "close", not "exit": by then everything it printed has been read.
  return new Promise((resolve) => {
    child.once("close", (code, signal) => resolve({ code: code ?? signal ?? "", stderr }))
  })
}
