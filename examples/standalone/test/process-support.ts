/**
 * What process.e2e.test.ts and process-settings.e2e.test.ts share: the server `npm start`
 * runs (or `npm run start:bun`'s under Bun) and the CLI `npm run pay` runs, as processes on a
 * SQLite file of the file's own directory, or on PostgreSQL. Each test file imports its own
 * copy (vitest isolates files), so each has its own directory and children.
 */
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, expect } from "vitest"
import {
  bundle,
  nodeBinary,
  requireBundles,
  serverCommand,
  startInstance
} from "./instances-support.js"

export const root = join(import.meta.dirname, "..", "..", "..")
export const dir = mkdtempSync(join(tmpdir(), "pay-process-"))
export const database = join(dir, "pay.sqlite")
export const baseEnv = { ...process.env, HOST: "127.0.0.1", PORT: "0" }
export const sqliteEnv = { ...baseEnv, PAY_DATABASE: database }
export const children: Array<ChildProcess> = []

/** The file's hooks: the bundles checked before, every child killed and the directory removed after. */
export const processHooks = () => {
  // What `npm start` (or `npm run start:bun`) and `npm run pay` run: bundles built by examples/build.mjs.
  beforeAll(() => requireBundles("main", "cli"), 60_000)
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  })
}

/** Starts the server and resolves with its URL and everything printed up to then. */
export const startServer = (env: NodeJS.ProcessEnv = sqliteEnv) =>
  startInstance("server", env, children, { startTimeoutMs: 30_000 })

export const stop = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })

/** The server started with `env`, which must exit: its exit code and what it printed. */
export const startRefused = async (env: NodeJS.ProcessEnv) => {
  const [runtime, args] = serverCommand()
  return await promisify(execFile)(runtime, args, { env, cwd: root, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e
  )
}

/** The server started with `env` exits with 1 at once, printing `message`. */
export const expectStartRefused = async (
  env: NodeJS.ProcessEnv,
  message: string,
  options: { readonly oneLine?: boolean } = {}
) => {
  const refused = await startRefused(env)
  expect(refused?.code).toBe(1)
  expect(`${refused?.stdout}${refused?.stderr}`).toContain(message)
  // The operator's to fix: said in one line, without a stack trace.
  if (options.oneLine) {
    expect(refused?.stderr.trim().split("\n"), refused?.stderr).toHaveLength(1)
    expect(refused?.stderr).toMatch(/^error: /)
  }
}

export const cliOn =
  (env: NodeJS.ProcessEnv) =>
  (...args: Array<string>) =>
    promisify(execFile)(nodeBinary, [bundle("cli"), ...args], { env, cwd: root })
export const cli = cliOn(sqliteEnv)

export const MIGRATIONS = [
  "0001_initial",
  "0002_payments",
  "0003_idempotency_lease",
  "0004_payment_aggregates",
  "0005_wallet_apps",
  "0006_gateway",
  "0007_option_client_id",
  "0008_chain_work",
  "0009_logos",
  "0010_merchant_logo",
  "0011_engine_secret",
  "0012_events",
  "0013_webhook_endpoints",
  "0014_webhook_deliveries",
  "0015_webhook_delivery_work",
  "0016_payment_filters",
  "0017_api_keys",
  "0018_payment_livemode",
  "0019_audit_log",
  "0020_option_purge",
  "0021_rate_limits",
  "0022_settlement_held",
  "0023_chain_job_failing",
  "0024_deploy_jobs",
  "0025_option_method",
  "0026_native_coin",
  "0027_key_scopes",
  "0028_app_status",
  "0029_retention"
]
/**
 * PostgreSQL's: one more, the reference search's finer statistics (its 0024; deploy jobs 0025,
 * how options are paid 0026, the native coin 0027, API keys' scopes 0028, apps' status 0029,
 * the purge's indexes and lease 0030).
 */
export const PG_MIGRATIONS = [
  ...MIGRATIONS.slice(0, -6),
  "0024_reference_statistics",
  "0025_deploy_jobs",
  "0026_option_method",
  "0027_native_coin",
  "0028_key_scopes",
  "0029_app_status",
  "0030_retention"
]

/** An entry as `pay audit --json` prints it. */
export interface AuditJson {
  readonly id: string
  readonly at: string
  readonly partnerId: string
  readonly actor: { readonly kind: string; readonly keyId?: string }
  readonly action: string
  readonly subject: string
  readonly merchantId: string | null
  readonly before: unknown
  readonly after: unknown
}

/** Failure of a CLI run: its exit code and what it printed. */
export const refusal = (run: Promise<unknown>) =>
  run.then(
    () => {
      throw new Error("the command succeeded")
    },
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr })
  )

/** `pay apps create` and `pay apps list` on a database without wallet apps. */
export const appsScenario = async (run: ReturnType<typeof cliOn>) => {
  expect((await run("apps", "list")).stdout).toContain("No wallet apps yet.")
  const created = JSON.parse(
    (
      await run(
        "apps",
        "create",
        "--name",
        "Demo Wallet",
        "--icon-url",
        "https://wallet.example/icon.png",
        "--json"
      )
    ).stdout
  ) as Record<string, string>
  expect(Object.keys(created).sort()).toEqual(["apiKey", "appId", "iconUrl", "id", "name"])
  expect(created.id).toMatch(/^app_[0-9A-Za-z]{20}$/)
  expect(created.appId).toBe(created.id)
  expect(created.name).toBe("Demo Wallet")
  expect(created.iconUrl).toBe("https://wallet.example/icon.png")
  expect(created.apiKey).toMatch(/^pk_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/)

  // Text for people: the App-Id and the key, each on its own line.
  const text = (await run("apps", "create", "--name", "  Plain Wallet  ")).stdout
  const shown = text.match(/\n\s+(app_\S+)\n[\s\S]*\n\s+(pk_\S+)\n/)
  expect(shown, text).not.toBeNull()
  expect(text).toContain("shown only this once")

  const listed = JSON.parse((await run("apps", "list", "--json")).stdout) as Array<{
    id: string
    name: string
    iconUrl: string | null
  }>
  expect(listed.map((a) => [a.id, a.name, a.iconUrl])).toEqual([
    [created.id, "Demo Wallet", "https://wallet.example/icon.png"],
    [shown?.[1], "Plain Wallet", null]
  ])
  // The key is never shown again.
  expect((await run("apps", "list")).stdout).not.toContain("pk_")

  for (const args of [
    ["--name", ""],
    ["--name", "x".repeat(257)],
    ["--name", "Wallet", "--icon-url", "http://wallet.example/icon.png"],
    ["--name", "Wallet", "--icon-url", "not a url"]
  ]) {
    const refused = await refusal(run("apps", "create", ...args))
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n"), refused.stderr).toHaveLength(1)
    expect(refused.stderr).toMatch(/^error: --(name|icon-url) /)
  }
  expect(JSON.parse((await run("apps", "list", "--json")).stdout)).toHaveLength(2)
}
