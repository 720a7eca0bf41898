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
import {
  type Caip10,
  type Caip19,
  cliActor,
  findCurrency,
  Merchants,
  Partners,
  type PaymentId,
  Payments
} from "@pay/core"
import { CAIP2_CHAIN_ID, TEST_USDC_ADDRESS } from "@pay/sandbox-chain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { engineLayer } from "../src/app.js"
import { nodeHost } from "../src/host-node.js"

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

/**
 * `check` on every item, four at a time: each runs CLI processes of its own, independent of the
 * others', and a run of them one after another left cores idle while each started.
 */
const eachConcurrently = async <A>(
  items: ReadonlyArray<A>,
  check: (item: A) => Promise<void>
): Promise<void> => {
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < items.length) await check(items[next++]!)
    })
  )
}

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
  // The first run builds the missing bundle, and says why on stderr (stdout stays the command's),
  // then the command names the database it used.
  expect(first.stderr).toBe(`(building cli: ${outdir}/cli.mjs is missing)\nDatabase: ${database}\n`)
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
    expect(again.stderr).toBe(`Database: ${database}\n`)
    expect(again.stdout).toBe("No partners yet.\n")
    expect(statSync(bundle).mtimeMs).toBe(built)

    // Older than every source, as after a `git pull` that changed one (no real source touched).
    utimesSync(bundle, new Date("2001-01-01"), new Date("2001-01-01"))
    const rebuilt = await launch(["partners", "list"])
    expect(rebuilt.status, rebuilt.stderr).toBe(0)
    const [building, ...rest] = rebuilt.stderr.split("\n")
    expect(building).toMatch(/^\(building cli: \S+ changed\)$/)
    expect(rest).toEqual([`Database: ${database}`, ""])
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

  /** A word said twice in a row (`apps apps keys`), anywhere in a help page. */
  const DOUBLED = /(?<![\w-])([\w-]+) \1(?![\w-])/

  it("lists every command once by its whole name, descriptions in one column, no word doubled on any page", async () => {
    const root = (await cli(["--help"])).stdout
    expect(root).toContain(
      "  - apps keys rotate --app app_… [--overlap-seconds seconds] [--database file|url] [--json] <key-id>"
    )
    expect(root).toContain(
      "  - merchants list [--partner ptnr_…] [--limit count] [--before mrch_…] [--database file|url] [--json]"
    )
    expect(root).toContain("  - payments get [--database file|url] [--json] <payment-id>")
    expect(root).not.toContain("apps apps")
    // What the CLI works on, said at the top: the server's database.
    expect(root).toContain("pay 0.1.0 -- the pay engine's operator CLI")
    expect(root).toContain(
      "The operator's commands on the server's database: PAY_DATABASE (or --database), which must be the one the server was given."
    )
    const listed = root.split("\n").filter((line) => line.startsWith("  - "))
    expect(listed.length).toBeGreaterThan(20)
    const column = new Set(listed.map((line) => /^ {2}- \S+(?: \S+)* {2,}/.exec(line)?.[0].length))
    expect([...column]).toHaveLength(1)
    expect(column.has(undefined)).toBe(false)

    const pages = [
      [],
      ["apps"],
      ["apps", "keys"],
      ["apps", "keys", "revoke"],
      ["keys"],
      ["keys", "create"],
      ["merchants"],
      ["merchants", "list"],
      ["merchants", "set-status"],
      ["payments"],
      ["payments", "get"],
      ["payments", "settle"],
      ["partners"],
      ["audit"],
      ["secret"],
      ["migrate"]
    ]
    await eachConcurrently(pages, async (page) => {
      const help = await cli([...page, "--help"])
      expect(help.status, page.join(" ")).toBe(0)
      expect(help.stdout, page.join(" ")).not.toMatch(DOUBLED)
      expect(help.stdout, page.join(" ")).toContain(`$ ${["pay", ...page].join(" ")}`)
    })
    // An argument's description is its own, not its choices said again.
    const setStatus = (await cli(["merchants", "set-status", "--help"])).stdout
    expect(setStatus).toContain("  Its new status")
    expect(setStatus.match(/active \| inactive \| suspended/g)).toHaveLength(1)
  }, 60_000)
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
        ["payments", "settle", "pay_00000000000000000000", "--destination", "0xdead"],
        "invalid_input",
        "--destination must be a CAIP-10 account id like eip155:8453:0xabc…"
      ],
      [
        ["payments", "get", "pay_00000000000000000000"],
        "not_found",
        "No payment pay_00000000000000000000"
      ],
      [["payments", "get", "nope"], "invalid_input", '"nope" is not a payment id (pay_…)'],
      [
        ["merchants", "list", "--partner", "ptnr_00000000000000000000"],
        "not_found",
        "No partner ptnr_00000000000000000000"
      ],
      [["merchants", "list", "--limit", "0"], "invalid_input", "--limit must be 1 to 1000"],
      [
        ["merchants", "list", "--before", "pay_00000000000000000000"],
        "invalid_input",
        "--before must be a merchant id (mrch_…)"
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
    await eachConcurrently(cases, async ([args, code, message]) => {
      const line = await refusal(cli([...args, "--json"]))
      const parsed = JSON.parse(line) as {
        error: { code: string; message: string; database?: string }
      }
      expect(Object.keys(parsed), line).toEqual(["error"])
      expect(parsed.error.code, line).toBe(code)
      expect(parsed.error.message, line).toContain(message)
      // What was not found was looked for in a database: the refusal names it.
      expect(parsed.error.database, line).toBe(code === "not_found" ? database : undefined)
      // Without --json: the same message, one line for people.
      const text = await refusal(cli(args))
      expect(text, text).toMatch(/^error: /)
      expect(text).toContain(message)
      if (code === "not_found") expect(text.endsWith(` (database: ${database})`)).toBe(true)
      else expect(text).not.toContain("(database:")
    })
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

describe("the database a command used", async () => {
  it("is named on stderr, in one line, by every command that opened it; stdout stays the answer", async () => {
    const listed = await cli(["partners", "list", "--json"])
    expect(listed.status, listed.stderr).toBe(0)
    expect(listed.stderr).toBe(`Database: ${database}\n`)
    expect(JSON.parse(listed.stdout)).toEqual([])

    // --database wins over PAY_DATABASE, and the line says which one was used.
    const other = join(dir, "other", "pay.sqlite")
    const migrated = await cli(["migrate", "--database", other, "--json"])
    expect(migrated.stderr).toBe(`Database: ${other}\n`)
    expect(JSON.parse(migrated.stdout)).toMatchObject({ created: other })
    const apps = await cli(["apps", "list", "--database", other])
    expect(apps.stderr).toBe(`Database: ${other}\n`)
    expect(apps.stdout).toBe("No wallet apps yet.\n")

    // Help opens no database, and says none.
    expect((await cli(["merchants", "--help"])).stderr).toBe("")
  })
})

/** A partner with two merchants and two payments, one paid and settled, one failed. */
const shopDatabase = join(dir, "shop.sqlite")
const shopEnv = { ...baseEnv, PAY_DATABASE: shopDatabase }
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const BUYER = "eip155:8453:0x1111111111111111111111111111111111111111" as Caip10
const SANDBOX_USDC = `${CAIP2_CHAIN_ID}/erc20:${TEST_USDC_ADDRESS}` as Caip19
const DESTINATION = "eip155:8453:0x2222222222222222222222222222222222222222" as Caip10
const COLLECT_HASH = `0x${"ab".repeat(32)}`
const SETTLE_HASH = `0x${"cd".repeat(32)}`
const SETTLED_AT = "2026-11-28T10:00:00.000Z"

/** Written by the engine's own services on the SQLite file, as the server would; closed after. */
const shop = () =>
  Effect.gen(function* () {
    const { partner } = yield* (yield* Partners).create({ name: "Acme", actor: cliActor })
    const merchants = yield* Merchants
    const store = yield* merchants.create(partner, {
      name: "Corner Store",
      email: "store@shop.test",
      iconUrl: null
    })
    const cafe = yield* merchants.create(partner, {
      name: "Cafe",
      email: "cafe@shop.test",
      iconUrl: null
    })
    yield* merchants.setStatus(cafe.id, "suspended")
    const payments = yield* Payments
    const usd = { kind: "fiat", currency: findCurrency("USD")! } as const
    const processing = (asset: Caip19, value: bigint) =>
      ({
        _tag: "StartProcessing",
        tokenAmount: { asset, value },
        buyer: { account: BUYER, providerName: "MetaMask", providerIcon: null },
        transaction: { networkId: "8453", hash: COLLECT_HASH, nonce: 7 }
      }) as const
    const paid = yield* payments.create(partner, store.id, {
      referenceId: "order-1",
      amount: { unit: usd, value: 1050n }
    })
    yield* payments.transition(paid.id, processing(USDC_BASE, 10_500_000n))
    yield* payments.transition(paid.id, {
      _tag: "Succeed",
      txId: COLLECT_HASH,
      transaction: null,
      fees: { fixed: 0n, percentage: "0.4", total: 42_000n },
      settlement: {
        amount: 10_458_000n,
        status: "settled",
        destination: DESTINATION,
        txHash: SETTLE_HASH,
        settledAt: new Date(SETTLED_AT)
      }
    })
    const failed = yield* payments.create(partner, store.id, {
      referenceId: "order-2",
      amount: { unit: usd, value: 500n }
    })
    // Paid in the sandbox's test USDC, which the server learns from the chain it starts.
    yield* payments.transition(failed.id, processing(SANDBOX_USDC, 5_000_000n))
    yield* payments.transition(failed.id, { _tag: "Fail", failureCode: "authorization_expired" })
    return { partner, store, cafe, paid: paid.id as PaymentId, failed: failed.id as PaymentId }
  }).pipe(
    Effect.provide(
      engineLayer(nodeHost, {
        database: shopDatabase,
        publicUrl: "http://localhost",
        logLevel: "warning"
      })
    ),
    Effect.runPromise
  )

describe("merchants list and payments get", async () => {
  let fixture: Awaited<ReturnType<typeof shop>>
  beforeAll(async () => {
    fixture = await shop()
  })

  it("`merchants list`: the only partner's merchants, newest first, as a table and as JSON, page by page", async () => {
    const { partner, store, cafe } = fixture
    const text = await cli(["merchants", "list"], shopEnv)
    expect(text.status, text.stderr).toBe(0)
    expect(text.stderr).toBe(`Database: ${shopDatabase}\n`)
    expect(text.stdout).toBe(
      [
        `Merchants of partner ${partner.id} (Acme), newest first: 2 of 2`,
        `${cafe.id}  suspended  ${cafe.createdAt.toISOString()}  Cafe  <cafe@shop.test>`,
        `${store.id}  active     ${store.createdAt.toISOString()}  Corner Store  <store@shop.test>`,
        ""
      ].join("\n")
    )
    const json = await cli(["merchants", "list", "--json"], shopEnv)
    expect(json.stderr).toBe(`Database: ${shopDatabase}\n`)
    expect(JSON.parse(json.stdout)).toEqual(
      [cafe, store].map((m) => ({
        id: m.id,
        partnerId: partner.id,
        name: m.name,
        email: m.email,
        status: m === cafe ? "suspended" : "active",
        createdAt: m.createdAt.toISOString()
      }))
    )
    const first = (await cli(["merchants", "list", "--limit", "1"], shopEnv)).stdout
    expect(first).toContain(`1 of 2\n${cafe.id}  suspended`)
    expect(first.trimEnd().split("\n").at(-1)).toBe(`(more: --before ${cafe.id})`)
    const next = JSON.parse(
      (await cli(["merchants", "list", "--before", cafe.id, "--json"], shopEnv)).stdout
    ) as Array<{ id: string }>
    expect(next.map((m) => m.id)).toEqual([store.id])
  })

  it("`merchants list` with several partners: refused without --partner (naming them), that partner's with it", async () => {
    const { partner, store } = fixture
    const created = await cli(["partners", "create", "--name", "Other", "--json"], shopEnv)
    expect(created.status, created.stderr).toBe(0)
    const other = (JSON.parse(created.stdout) as { id: string }).id

    const refused = await refusal(cli(["merchants", "list", "--json"], shopEnv))
    expect(JSON.parse(refused)).toEqual({
      error: {
        code: "invalid_input",
        message: `this database has 2 partners: name one with --partner: ${partner.id} (Acme), ${other} (Other)`
      }
    })
    const none = await cli(["merchants", "list", "--partner", other], shopEnv)
    expect(none.stdout).toBe(`No merchants of partner ${other} (Other) yet.\n`)
    expect(
      JSON.parse((await cli(["merchants", "list", "--partner", other, "--json"], shopEnv)).stdout)
    ).toEqual([])
    const mine = (await cli(["merchants", "list", "--partner", partner.id], shopEnv)).stdout
    expect(mine).toContain(`${store.id}  active`)
  })

  it("`payments get`: a paid and settled payment, every fact on its line; --json the same facts", async () => {
    const { partner, store, paid } = fixture
    const text = await cli(["payments", "get", paid], shopEnv)
    expect(text.status, text.stderr).toBe(0)
    expect(text.stderr).toBe(`Database: ${shopDatabase}\n`)
    const lines = text.stdout.trimEnd().split("\n")
    expect(lines.slice(0, 11)).toEqual([
      `Payment ${paid}`,
      "  Status:      succeeded",
      "  Amount:      10.50 USD",
      "  Paid in:     10.500000 USDC on Base",
      `  Merchant:    ${store.id} (Corner Store), active`,
      `  Partner:     ${partner.id}`,
      "  Reference:   order-1",
      `  Buyer:       ${BUYER} (MetaMask)`,
      `  Transaction: ${COLLECT_HASH} on network 8453, nonce 7`,
      "  Fees:        0.042000 USDC on Base (0.4 %)",
      `  Settlement:  settled: 10.458000 USDC on Base, to ${DESTINATION}, tx ${SETTLE_HASH}, at ${SETTLED_AT}`
    ])
    expect(lines.slice(11).map((line) => line.split(":")[0])).toEqual([
      "  Created",
      "  Updated",
      "  Final"
    ])

    const json = await cli(["payments", "get", paid, "--json"], shopEnv)
    expect(json.stderr).toBe(`Database: ${shopDatabase}\n`)
    expect(JSON.parse(json.stdout)).toMatchObject({
      id: paid,
      status: "succeeded",
      failureCode: null,
      amount: { unit: "iso4217/USD", value: "1050" },
      tokenAmount: { unit: `caip19/${USDC_BASE}`, value: "10500000" },
      partnerId: partner.id,
      merchant: { id: store.id, name: "Corner Store", status: "active" },
      referenceId: "order-1",
      buyer: { account: BUYER, providerName: "MetaMask", providerIcon: null },
      transaction: { networkId: "8453", hash: COLLECT_HASH, nonce: 7 },
      fees: { total: { value: "42000" }, fixed: { value: "0" }, percentage: "0.4" },
      settlement: {
        status: "settled",
        amount: { unit: `caip19/${USDC_BASE}`, value: "10458000" },
        destination: DESTINATION,
        txHash: SETTLE_HASH,
        settledAt: SETTLED_AT
      }
    })
  })

  it("`payments get`: a failed payment shows its failureCode; an unknown id is refused, exit 1, naming the database", async () => {
    const { failed } = fixture
    const text = (await cli(["payments", "get", failed], shopEnv)).stdout
    expect(text).toContain("  Status:      failed, failureCode authorization_expired\n")
    expect(text).toContain("  Amount:      5.00 USD\n  Paid in:     5.000000 USDC on Sandbox\n")
    expect(text).not.toContain("Settlement:")
    const json = JSON.parse((await cli(["payments", "get", failed, "--json"], shopEnv)).stdout)
    expect(json).toMatchObject({
      status: "failed",
      failureCode: "authorization_expired",
      settlement: null
    })

    const unknown = "pay_0000000000ZZZZZZZZZZ"
    expect(await refusal(cli(["payments", "get", unknown], shopEnv))).toBe(
      `error: No payment ${unknown} (database: ${shopDatabase})`
    )
    expect(JSON.parse(await refusal(cli(["payments", "get", unknown, "--json"], shopEnv)))).toEqual(
      {
        error: { code: "not_found", message: `No payment ${unknown}`, database: shopDatabase }
      }
    )
  })
})
