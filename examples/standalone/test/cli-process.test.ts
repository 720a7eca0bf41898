/**
 * `npm run pay` as a user and a script run it: the launcher (examples/run.mjs)
 * and the CLI bundle it builds, as real processes on real SQLite files. The
 * bundle is this test's own (`--outdir`), so no other test's build races it.
 * Not in `npm run test:bun`: the CLI runs on Node whichever runtime the server has.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..", "..")
const outdir = `examples/standalone/dist/cli-test-${process.pid}`
const bundle = join(root, outdir, "cli.mjs")
const dir = mkdtempSync(join(tmpdir(), "pay-cli-"))
const database = join(dir, "pay.sqlite")
// No colour settings of the machine running the tests, and no PAY_DATABASE of its own.
const { NO_COLOR: _n, FORCE_COLOR: _f, PAY_DATABASE: _d, ...cleanEnv } = process.env
const baseEnv = { ...cleanEnv, PAY_DATABASE: database }

interface Ran {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program to its end, without blocking the test worker meanwhile. */
const run = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<Ran>((resolve) => {
    execFile(file, args, { cwd: root, env, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code
      resolve({ status: typeof code === "number" ? code : error ? -1 : 0, stdout, stderr })
    })
  })

/** `npm run pay -- …` on this test's bundle: the launcher, which builds it when it must. */
const launch = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = baseEnv) =>
  run(process.execPath, ["examples/run.mjs", "--outdir", outdir, "cli", ...args], env)

/** The bundle alone, its output piped (as a script reads it). */
const cli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = baseEnv) =>
  run(process.execPath, [bundle, ...args], env)

/** The bundle on a terminal (a pseudo-terminal from util-linux's `script`): what a person sees. */
const onTerminal = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const command = [process.execPath, bundle, ...args].map((a) => `'${a}'`).join(" ")
  const ran = await run("script", ["-qec", command, "/dev/null"], { ...env, TERM: "xterm" })
  expect(ran.status, ran.stderr).toBe(0)
  return ran.stdout
}

const ESC = "\u001b"

beforeAll(async () => {
  const first = await launch(["migrate", "--json"])
  expect(first.status, first.stderr).toBe(0)
  // The first run builds the missing bundle, and says why on stderr (stdout stays the command's).
  expect(first.stderr).toBe(`(building cli: ${outdir}/cli.mjs is missing)\n`)
  expect(JSON.parse(first.stdout)).toMatchObject({ created: database })
}, 120_000)

afterAll(() => {
  rmSync(join(root, outdir), { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
})

describe("the launcher (examples/run.mjs)", async () => {
  it("runs the bundle without building it when nothing changed, and builds it again when a source is newer", async () => {
    const built = statSync(bundle).mtimeMs
    const again = await launch(["partners", "list"])
    expect(again.status, again.stderr).toBe(0)
    expect(again.stderr).toBe("")
    expect(again.stdout).toBe("No partners yet.\n")
    expect(statSync(bundle).mtimeMs).toBe(built)

    // Older than every source, as after a `git pull` that changed one (no real source touched).
    utimesSync(bundle, new Date("2001-01-01"), new Date("2001-01-01"))
    const rebuilt = await launch(["partners", "list"])
    expect(rebuilt.status, rebuilt.stderr).toBe(0)
    expect(rebuilt.stderr).toMatch(/^\(building cli: \S+ changed\)\n$/)
    expect(rebuilt.stdout).toBe("No partners yet.\n")
    expect(statSync(bundle).mtimeMs).toBeGreaterThan(new Date("2001-01-01").getTime())
  }, 120_000)
})

describe("colour", async () => {
  it("writes no escape codes into a pipe, and only into a pipe when FORCE_COLOR asks", async () => {
    const help = await cli(["partners", "create", "--help"])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("USAGE")
    expect(help.stdout).not.toContain(ESC)
    const refused = await cli(["partners", "create"])
    expect(refused.stderr).not.toContain(ESC)
    expect(
      (await cli(["partners", "create", "--help"], { ...baseEnv, FORCE_COLOR: "1" })).stdout
    ).toContain(`${ESC}[`)
  })

  it("colours a terminal, unless NO_COLOR is set", async () => {
    expect(await onTerminal(["--help"], baseEnv)).toContain(`${ESC}[`)
    const plain = await onTerminal(["--help"], { ...baseEnv, NO_COLOR: "1" })
    expect(plain).toContain("USAGE")
    expect(plain).not.toContain(ESC)
  })
})

describe("help", async () => {
  it("shows usage lines with the whole command, and each option described by what it is", async () => {
    const help = (await cli(["partners", "create", "--help"])).stdout
    expect(help).toContain(
      "$ pay partners create --name text [--version 2026-02-18 | 2026-02-19.preview] [--database file|url] [--json]"
    )
    expect(help).not.toMatch(/^\$ create/m)
    expect(help).not.toContain("A user-defined piece of text")
    expect(help).toContain("The partner's display name")
    const keys = (await cli(["apps", "keys", "rotate", "--help"])).stdout
    expect(keys).toContain("$ pay apps keys rotate --app app_… [--overlap-seconds seconds]")
    expect((await cli(["partners", "--help"])).stdout).toContain("$ pay partners")
  })
})

/** A refusal: exit code 1, nothing on stdout, one line on stderr. */
const refusal = async (running: Promise<Ran>) => {
  const result = await running
  expect(result.status, result.stdout + result.stderr).toBe(1)
  expect(result.stdout).toBe("")
  expect(result.stderr.split("\n"), result.stderr).toHaveLength(2)
  return result.stderr.trimEnd()
}

describe("refusals", async () => {
  const notSqlite = join(dir, "not-a-database.sqlite")
  writeFileSync(notSqlite, "not SQLite at all, a text file of the right name and of some length")

  it("--json: one JSON object on stderr with the code and the message, exit 1, for every kind", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string, string]> = [
      [["partners", "create"], "usage", "Expected to find option: '--name'"],
      [["bogus"], "usage", "Invalid subcommand for pay"],
      [["audit", "--limit", "0"], "invalid_input", "--limit must be 1 to 1000"],
      [["keys", "list", "--partner", "nope"], "invalid_input", "nope is not a partner id (ptnr_…)"],
      [
        ["keys", "list", "--partner", "ptnr_00000000000000000000"],
        "not_found",
        "no partner ptnr_00000000000000000000"
      ],
      [
        ["payments", "settle", "pay_00000000000000000000"],
        "not_found",
        "No payment pay_00000000000000000000"
      ],
      [
        ["partners", "list", "--database", join(dir, "dat", "pay.sqlite")],
        "database_missing",
        `no database at ${join(dir, "dat", "pay.sqlite")} (PAY_DATABASE/--database)`
      ],
      [
        ["partners", "list", "--database", notSqlite],
        "database_error",
        `SQLite database ${notSqlite}: file is not a database`
      ],
      [
        // Nothing listens on port 1; the password is never shown.
        ["partners", "list", "--database", "postgres://pay:hunter2@127.0.0.1:1/pay"],
        "database_error",
        "database postgres://pay@127.0.0.1:1/pay (PAY_DATABASE/--database): PgClient: Failed to connect: connect ECONNREFUSED 127.0.0.1:1"
      ]
    ]
    for (const [args, code, message] of cases) {
      const line = await refusal(cli([...args, "--json"]))
      const parsed = JSON.parse(line) as { error: { code: string; message: string } }
      expect(Object.keys(parsed), line).toEqual(["error"])
      expect(parsed.error.code, line).toBe(code)
      expect(parsed.error.message, line).toContain(message)
      // Without --json: the same message, one line for people.
      const text = await refusal(cli(args))
      expect(text, text).toMatch(/^error: /)
      expect(text).toContain(message)
    }
  }, 120_000)

  it("refuses a mistyped SQLite path without creating it, from --database or PAY_DATABASE", async () => {
    const mistyped = join(dir, "dat", "pay.sqlite")
    expect(
      await refusal(cli(["partners", "create", "--name", "Acme", "--database", mistyped]))
    ).toBe(
      `error: no database at ${mistyped} (PAY_DATABASE/--database); the server creates it on its first start (or \`pay migrate\`), or check the path`
    )
    expect(await refusal(cli(["apps", "list"], { ...baseEnv, PAY_DATABASE: mistyped }))).toContain(
      `no database at ${mistyped}`
    )
    expect(existsSync(mistyped)).toBe(false)
    expect(existsSync(join(dir, "dat"))).toBe(false)
  })

  it("creates a database only with `migrate`, and says so", async () => {
    const fresh = join(dir, "fresh", "pay.sqlite")
    const created = await cli(["migrate", "--database", fresh])
    expect(created.status, created.stderr).toBe(0)
    expect(created.stdout.split("\n")[0]).toBe(`Created the database ${fresh}.`)
    expect(existsSync(fresh)).toBe(true)
    const again = await cli(["migrate", "--database", fresh])
    expect(again.stdout).toBe("The database is up to date; no migration to apply.\n")
    expect((await cli(["partners", "list", "--database", fresh])).stdout).toBe("No partners yet.\n")
  })
})
