/**
 * Starting and stopping the server `npm start` runs, as its own process (Bun's
 * under `npm run test:bun`): a wrong setting is one line on stderr naming it
 * and what is allowed, with exit code 1 and no stack trace; an unknown PAY_*
 * variable is a warning naming the closest setting; the first partner is made
 * only once the server listens; SIGTERM answers held long-polls at once and
 * exits well within the bound; a second signal exits at once.
 */
import { type ChildProcess, execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { connect, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { testDatabaseUrl } from "@pay/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./e2e-support.js"
import {
  bootstrapKeyOf,
  bundle,
  nodeBinary,
  requireBundles,
  serverCommand,
  startInstance
} from "./instances-support.js"

const root = join(import.meta.dirname, "..", "..", "..")
const dir = mkdtempSync(join(tmpdir(), "pay-startup-"))
const baseEnv: NodeJS.ProcessEnv = { ...process.env, HOST: "127.0.0.1", PORT: "0" }
for (const name of Object.keys(baseEnv)) if (name.startsWith("PAY_")) delete baseEnv[name]
const children: Array<ChildProcess> = []

beforeAll(() => requireBundles("main", "cli"), 60_000)

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

/** A start that fails: its exit code and what it printed on each stream. */
const failedStart = async (env: NodeJS.ProcessEnv) => {
  const [runtime, args] = serverCommand()
  const result = await promisify(execFile)(runtime, args, {
    env: { ...baseEnv, ...env },
    cwd: root,
    timeout: 30_000
  }).then(
    () => ({ code: 0, stdout: "", stderr: "" }),
    (e: { code: number; stdout: string; stderr: string }) => e
  )
  return { code: result.code, stdout: result.stdout, stderr: result.stderr }
}

/** The start fails with exit code 1 and exactly these lines on stderr, no stack trace. */
const expectRefused = async (env: NodeJS.ProcessEnv, lines: ReadonlyArray<string>) => {
  const refused = await failedStart(env)
  expect(refused.code, refused.stderr).toBe(1)
  expect(refused.stderr.trimEnd().split("\n")).toEqual(lines)
  expect(refused.stderr).not.toMatch(/^\s+at /m)
  return refused
}

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** When it exited (Date.now()). */
  readonly at: number
}

/** Starts the server; resolves once its whole banner is printed, with its exit to come. */
const start = async (env: NodeJS.ProcessEnv) => {
  const server = await startInstance("server", env, children, {
    base: baseEnv,
    startTimeoutMs: 30_000
  })
  const exit = server.exited.then(
    (): Exit => ({
      code: server.child.exitCode,
      signal: server.child.signalCode,
      at: Date.now()
    })
  )
  return { ...server, exit }
}

/** Waits until `check` holds, polling; fails after `ms`. */
const until = async (check: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** How many long-polls the server at `url` holds now: `pay_long_polls_held` on its /metrics. */
const heldPolls = async (url: string): Promise<number> => {
  const response = await fetch(`${url}/metrics`)
  expect(response.status).toBe(200)
  const line = (await response.text()).split("\n").find((l) => l.startsWith("pay_long_polls_held "))
  return line === undefined ? 0 : Number(line.slice("pay_long_polls_held ".length))
}

/** A merchant and an unpaid payment of 1.00 USD on a started server. */
const merchantAndPayment = async (url: string, key: string, name: string) => {
  const headers = { "Api-Key": key, "Content-Type": "application/json" }
  const merchant = (await (
    await fetch(`${url}/v1/merchants`, {
      method: "POST",
      headers: { ...headers, "Idempotency-Key": `${name}-m` },
      body: JSON.stringify({ merchantName: "Shop", merchantEmail: "s@shop.test" })
    })
  ).json()) as { merchant: { id: string } }
  const payment = (await (
    await fetch(`${url}/v1/payments`, {
      method: "POST",
      headers: { ...headers, "Merchant-Id": merchant.merchant.id },
      body: JSON.stringify({ referenceId: "R-1", amount: { unit: "iso4217/USD", value: "100" } })
    })
  ).json()) as { paymentId: string; gatewayUrl: string }
  return { merchantId: merchant.merchant.id, payment }
}

describe("a start with a wrong setting says so in one line per setting", () => {
  it("names each wrong variable, its value and what is allowed, several at once", async () => {
    await expectRefused({ PAY_MAX_BODY_BYTES: "-1", PORT: "abc", PAY_SANDBOX: "yes" }, [
      'error: PORT is "abc"; it must be a whole number from 0 to 65535 (0 picks a free port)',
      'error: PAY_MAX_BODY_BYTES is "-1"; it must be from 1024 to 104857600',
      'error: PAY_SANDBOX is "yes"; it must be 1 (the sandbox on any address) or 0 (loopback only, the default)'
    ])
    // A secret's value is never repeated.
    const secret = await expectRefused({ PAY_SECRET: "not base64!" }, [
      "error: PAY_SECRET must be standard base64, e.g. the output of `openssl rand -base64 32`"
    ])
    expect(secret.stderr).not.toContain("not base64!")
  }, 60_000)

  it("names the place in PAY_CONFIG's file and what it must hold", async () => {
    const path = join(dir, "networks.json")
    writeFileSync(
      path,
      JSON.stringify({
        networks: [
          {
            chainId: "eip155:8453",
            name: "Base",
            collectorKey: `0x${"11".repeat(32)}`,
            tokens: [
              {
                asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                symbol: "USDC",
                name: "USD Coin",
                decimals: 6,
                priceCurrency: "USD"
              }
            ]
          }
        ]
      })
    )
    await expectRefused({ PAY_DATABASE: join(dir, "config.sqlite"), PAY_CONFIG: path }, [
      `error: PAY_CONFIG ${path}: networks[0].rpcUrl is missing (an http:// or https:// URL)`
    ])
  }, 60_000)

  it("names PAY_DATABASE, without its password, and why it cannot be opened", async () => {
    await expectRefused({ PAY_DATABASE: "postgres://pay:s3cret@127.0.0.1:1/pay" }, [
      "error: PAY_DATABASE postgres://pay@127.0.0.1:1/pay: connection refused at 127.0.0.1:1 (ECONNREFUSED); check that PostgreSQL runs there and the URL's host and port"
    ])
    const missing = new URL(testDatabaseUrl())
    missing.pathname = "/pay_startup_no_such_database"
    missing.search = ""
    const shown = new URL(missing)
    shown.password = ""
    await expectRefused({ PAY_DATABASE: missing.toString() }, [
      `error: PAY_DATABASE ${shown}: database "pay_startup_no_such_database" does not exist; create it (createdb) or name an existing one in the URL`
    ])
    const file = join(dir, "a-file")
    writeFileSync(file, "")
    await expectRefused({ PAY_DATABASE: join(file, "pay.sqlite") }, [
      `error: PAY_DATABASE ${join(file, "pay.sqlite")}: its folder cannot be made: a file is in the way; give a path in a folder`
    ])
  }, 60_000)

  it("shows the whole cause with PAY_LOG_LEVEL=debug", async () => {
    const file = join(dir, "another-file")
    writeFileSync(file, "")
    const refused = await failedStart({
      PAY_DATABASE: join(file, "pay.sqlite"),
      PAY_LOG_LEVEL: "debug"
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^error: PAY_DATABASE .*a file is in the way/)
    expect(refused.stderr).toContain("SqliteStorageError")
  }, 60_000)
})

describe("a start on a busy port", () => {
  let busy: Server
  beforeAll(async () => {
    busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve))
  })
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())))

  it("says which address is taken, opens nothing (no database, no partner), and the next start shows the first key", async () => {
    const port = (busy.address() as { port: number }).port
    const database = join(dir, "busy.sqlite")
    await expectRefused({ PAY_DATABASE: database, PORT: String(port) }, [
      `error: HOST:PORT 127.0.0.1:${port} is in use by another process (EADDRINUSE); stop it, or set PORT to a free port (0 picks one)`
    ])
    // Refused before anything was opened: not even the file was made.
    expect(existsSync(database)).toBe(false)

    const next = await start({ PAY_DATABASE: database })
    expect(next.output()).toContain(`  Database: ${database} (new: created now)\n`)
    expect(next.output()).toContain("First start: created partner")
    // Not a terminal: the key is in a file only the server's user may read, never in the output.
    const key = bootstrapKeyOf(next.output())
    expect(key, next.output()).toMatch(/^pk_\S+$/)
    expect(next.output()).toContain(`Its API key is in ${join(dir, "bootstrap-api-key-")}`)
    expect(next.output()).not.toContain(key)
    next.child.kill("SIGTERM")
    expect((await next.exit).code).toBe(0)
  }, 90_000)
})

describe("an unknown PAY_ variable", () => {
  it("is a warning naming the closest setting; the start goes on, its new database said so", async () => {
    const database = join(dir, "misspelt.sqlite")
    const first = await start({ PAY_DATABASE: database, PAY_DATABSE: join(dir, "meant.sqlite") })
    expect(first.output()).toContain(
      "warning: PAY_DATABSE is not a setting of this server; did you mean PAY_DATABASE?\n"
    )
    expect(first.output()).toContain(`  Database: ${database} (new: created now)\n`)
    first.child.kill("SIGTERM")
    expect((await first.exit).code).toBe(0)

    const again = await start({ PAY_DATABASE: database, PAY_NOT_A_THING_AT_ALL: "1" })
    expect(again.output()).toContain(
      "warning: PAY_NOT_A_THING_AT_ALL is not a setting of this server; the settings are in docs/configuration.md\n"
    )
    expect(again.output()).toContain(`  Database: ${database}\n`)
    again.child.kill("SIGTERM")
    expect((await again.exit).code).toBe(0)
  }, 90_000)
})

describe("a later start", () => {
  const cliOn = (database: string, ...args: Array<string>) =>
    promisify(execFile)(nodeBinary, [bundle("cli"), ...args], {
      env: { ...baseEnv, PAY_DATABASE: database },
      cwd: root
    })

  it("says how to get a new key when the first one is lost, and that the CLI needs the same PAY_DATABASE; the command it names works", async () => {
    const database = join(dir, "later.sqlite")
    const first = await start({ PAY_DATABASE: database })
    const partnerId = /First start: created partner (ptnr_[0-9A-Za-z]+) /.exec(first.output())?.[1]
    expect(partnerId, first.output()).toBeDefined()
    expect(first.output()).not.toContain("Lost")
    first.child.kill("SIGTERM")
    expect((await first.exit).code).toBe(0)

    const again = await start({ PAY_DATABASE: database })
    expect(again.output()).not.toContain("First start")
    expect(again.output()).not.toContain("partners create")
    expect(again.output()).toContain(
      [
        `  Lost the API key? Make a new one: npm run pay -- keys create --partner ${partnerId}`,
        "    (the CLI must be given the same PAY_DATABASE as this server; each command names the database it used)",
        ""
      ].join("\n")
    )
    // The command the banner names, on the server's database, makes a key the server takes.
    const created = await cliOn(database, "keys", "create", "--partner", partnerId!, "--json")
    expect(created.stderr).toBe(`Database: ${database}\n`)
    const { secret } = JSON.parse(created.stdout) as { secret: string }
    const merchants = await fetch(`${again.url}/v1/merchants`, { headers: { "Api-Key": secret } })
    expect(merchants.status).toBe(200)
    again.child.kill("SIGTERM")
    expect((await again.exit).code).toBe(0)

    // With several partners, it says where to find the one whose key is lost.
    await cliOn(database, "partners", "create", "--name", "Second")
    const third = await start({ PAY_DATABASE: database })
    expect(third.output()).toContain(
      [
        "  Lost an API key? Find the partner with `npm run pay -- partners list`, then: npm run pay -- keys create --partner <ptnr_id>",
        "    (the CLI must be given the same PAY_DATABASE as this server; each command names the database it used)",
        ""
      ].join("\n")
    )
    third.child.kill("SIGTERM")
    expect((await third.exit).code).toBe(0)
  }, 120_000)
})

describe("PORT=0 without PAY_PUBLIC_URL", () => {
  it("hands out links with the port it listens on, not :0", async () => {
    const key = "pk_startup_port_0123456789abcdef"
    const server = await start({
      PAY_DATABASE: join(dir, "free-port.sqlite"),
      PAY_BOOTSTRAP_API_KEY: key
    })
    const { port } = new URL(server.url)
    expect(Number(port)).toBeGreaterThan(0)
    expect(server.output()).toContain(`  API reference: http://127.0.0.1:${port}/docs`)
    const { payment } = await merchantAndPayment(server.url, key, "port")
    expect(payment.gatewayUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/pay_`))
    server.child.kill("SIGTERM")
    expect((await server.exit).code).toBe(0)
  }, 90_000)
})

describe("stopping", () => {
  const key = "pk_startup_key_0123456789abcdef"
  const headers = { "Api-Key": key, "Content-Type": "application/json" }

  /** A server with a merchant and an unpaid payment: its URL and the status path to long-poll. */
  const withPayment = async (name: string) => {
    const server = await start({
      PAY_DATABASE: join(dir, `${name}.sqlite`),
      PAY_BOOTSTRAP_API_KEY: key,
      PAY_MAX_LONG_POLL_MS: "60000",
      PAY_PAYMENT_LIFETIME_SECONDS: "600"
    })
    const { merchantId, payment } = await merchantAndPayment(server.url, key, name)
    return { server, merchantId, paymentId: payment.paymentId }
  }

  it("SIGTERM answers a held 60 s long-poll at once with the current status, then exits well within the bound", async () => {
    const { server, merchantId, paymentId } = await withPayment("drain")
    const before = await heldPolls(server.url)
    const held = fetch(`${server.url}/v1/payments/${paymentId}/status?maxPollMs=60000`, {
      headers: { ...headers, "Merchant-Id": merchantId }
    }).then(async (r) => ({ status: r.status, body: await r.json(), at: Date.now() }))
    // Held (the server's held long-polls counter, not a fixed wait), then the signal: the poll
    // is answered by the stop, not read before the server held it.
    let answered = false
    void held.then(() => {
      answered = true
    })
    await eventually(
      async () => expect(await heldPolls(server.url), "long-polls held").toBe(before + 1),
      { timeoutMs: 10_000, intervalMs: 25 }
    )
    expect(answered, "the poll answered before the signal").toBe(false)
    const signalled = Date.now()
    server.child.kill("SIGTERM")
    const answer = await held
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ status: "requires_action", isFinal: false })
    // Well before the long-poll's own 60 s (a noisy machine: generous).
    expect(answer.at - signalled).toBeLessThan(15_000)
    const exit = await server.exit
    expect(exit.code).toBe(0)
    expect(exit.at - signalled).toBeLessThan(15_000)
    expect(server.output()).toContain("Pay engine stopping (SIGTERM)")
    expect(server.output()).toContain("Pay engine stopped.")
  }, 90_000)

  /**
   * A POST /v1/merchants whose body has only begun to arrive (`sent` of `length` bytes): in
   * flight, so a stop waits for it. Resolves once the server has taken it in: a request
   * answered after it (its bytes arrived later, on the same event loop) shows that, where a
   * fixed wait lost the race on a loaded machine.
   */
  const slowRequest = async (url: string, sent: string, length: number) => {
    const socket: Socket = connect({ host: "127.0.0.1", port: Number(new URL(url).port) })
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    const closed = new Promise<string>((resolve) => {
      let received = ""
      socket.on("data", (data: Buffer) => {
        received += data.toString()
      })
      socket.on("error", () => {})
      socket.once("close", () => resolve(received))
    })
    socket.write(
      `POST /v1/merchants HTTP/1.1\r\nhost: 127.0.0.1\r\napi-key: ${key}\r\nidempotency-key: slow\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${length}\r\n\r\n${sent}`
    )
    expect((await fetch(`${url}/health`)).status).toBe(200)
    return { socket, closed }
  }

  it("SIGTERM gives a request still arriving its grace: finished within it, it is answered, then the process exits", async () => {
    const { server } = await withPayment("grace")
    const body = JSON.stringify({ merchantName: "Late", merchantEmail: "late@shop.test" })
    const { socket, closed } = await slowRequest(server.url, body.slice(0, 10), body.length)
    server.child.kill("SIGTERM")
    await until(() => server.output().includes("Pay engine stopping (SIGTERM)"))
    // The stop waits for it (the grace is 10 s): the rest of the body, a second later.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    let exited = false
    void server.exit.then(() => {
      exited = true
    })
    expect(exited).toBe(false)
    socket.write(body.slice(10))
    expect(await closed).toMatch(/^HTTP\/1\.1 201 /)
    const exit = await server.exit
    expect(exit.code).toBe(0)
  }, 90_000)

  it("a second SIGTERM exits at once, says so, and closes a request still arriving", async () => {
    const { server } = await withPayment("second")
    // A request whose body never finishes arriving: in flight, so the stop waits for it.
    const { closed } = await slowRequest(server.url, `{"merchantName":`, 1000)
    server.child.kill("SIGTERM")
    await until(() => server.output().includes("Pay engine stopping (SIGTERM)"))
    const second = Date.now()
    server.child.kill("SIGTERM")
    const exit = await server.exit
    expect(exit.code).toBe(143)
    expect(exit.at - second).toBeLessThan(5_000)
    expect(server.output()).toContain("second signal: exiting now\n")
    // Closed, not left hanging (whatever the server had answered before).
    expect(typeof (await closed)).toBe("string")
  }, 90_000)
})
