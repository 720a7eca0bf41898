/**
 * The README's commands as a user runs them: the server `npm start` builds and
 * runs, as its own process (first-start key, listening line, clean stop on
 * SIGTERM), and the CLI on the same database while the server runs.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const dist = join(root, "examples/standalone/dist")
const dir = mkdtempSync(join(tmpdir(), "pay-process-"))
const database = join(dir, "pay.sqlite")
const env = { ...process.env, PAY_DATABASE: database, HOST: "127.0.0.1", PORT: "0" }
const children: Array<ChildProcess> = []

// What `npm start` and `npm run pay` run: the bundles built by examples/build.mjs.
beforeAll(() => {
  execFileSync(process.execPath, [join(root, "examples/build.mjs")], { cwd: root })
}, 60_000)

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

/** Starts the server and resolves with its URL and everything printed up to then. */
const startServer = () =>
  new Promise<{ child: ChildProcess; url: string; output: () => string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--enable-source-maps", join(dist, "main.mjs")], {
      env,
      cwd: root
    })
    children.push(child)
    let output = ""
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const url = output.match(/listening on (http:\/\/\S+)/)?.[1]
      // Wait for the whole start banner: it ends with the key or the CLI hint.
      if (url && /(Try: curl|npm run pay)/.test(output)) {
        clearTimeout(timer)
        resolve({ child, url, output: () => output })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)))
  })

const stop = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })

const cli = (...args: Array<string>) =>
  promisify(execFile)(process.execPath, [join(dist, "cli.mjs"), ...args], { env, cwd: root })

describe("npm start and the CLI", () => {
  it("prints a key on first start, serves it, works beside the CLI, and stops cleanly", async () => {
    const first = await startServer()
    const key = first.output().match(/\n\s+(pk_\S+)\n/)?.[1]
    expect(key, first.output()).toBeDefined()
    expect(first.output()).toContain("/docs")

    const health = await fetch(`${first.url}/health`)
    expect(health.status).toBe(200)
    const list = await fetch(`${first.url}/v1/merchants`, { headers: { "Api-Key": key! } })
    expect(list.status).toBe(200)

    // The CLI on the same file while the server runs.
    const created = JSON.parse(
      (
        await cli(
          "partners",
          "create",
          "--name",
          "Script Co",
          "--version",
          "2026-02-19.preview",
          "--json"
        )
      ).stdout
    ) as { id: string; apiKey: string; apiVersion: string }
    expect(created.apiVersion).toBe("2026-02-19.preview")
    const asNew = await fetch(`${first.url}/v1/merchants`, {
      headers: { "Api-Key": created.apiKey }
    })
    expect(asNew.status).toBe(200)
    expect(asNew.headers.get("pay-version")).toBe("2026-02-19.preview")

    const merchant = (await (
      await fetch(`${first.url}/v1/merchants`, {
        method: "POST",
        headers: {
          "Api-Key": key!,
          "Idempotency-Key": "cli-1",
          "Content-Type": "application/json"
        },
        body: JSON.stringify({ merchantName: "Status Shop", merchantEmail: "s@shop.example" })
      })
    ).json()) as { merchant: { id: string } }
    const set = JSON.parse(
      (await cli("merchants", "set-status", merchant.merchant.id, "suspended", "--json")).stdout
    ) as { status: string }
    expect(set.status).toBe("suspended")
    const seen = (await (
      await fetch(`${first.url}/v1/merchants?status=suspended`, { headers: { "Api-Key": key! } })
    ).json()) as { merchants: Array<{ id: string }> }
    expect(seen.merchants.map((m) => m.id)).toEqual([merchant.merchant.id])

    const listed = JSON.parse((await cli("partners", "list", "--json")).stdout) as Array<{
      name: string
    }>
    expect(listed.map((p) => p.name)).toEqual(["Default partner", "Script Co"])
    await expect(
      cli("merchants", "set-status", "mrch_00000000000000000000", "active")
    ).rejects.toThrow(/No merchant/)

    expect(await stop(first.child)).toBe(0)
    expect(first.output()).toContain("Pay engine stopped.")

    // A restart keeps the data and prints no new key.
    const second = await startServer()
    expect(second.output()).not.toMatch(/pk_\S+/)
    const again = await fetch(`${second.url}/v1/merchants/${merchant.merchant.id}`, {
      headers: { "Api-Key": key! }
    })
    expect(again.status).toBe(200)
    expect(await stop(second.child)).toBe(0)
  }, 120_000)
})
