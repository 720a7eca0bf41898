import { Cause, ConfigError, ConfigProvider, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { StartRefused, standaloneConfig } from "./config.js"
import { configErrorLines, databaseProblem, listenProblem, startErrorLines } from "./startErrors.js"

/** The lines for what `standaloneConfig` says of `env`. */
const linesFor = (env: Record<string, string>) => {
  const exit = Effect.runSyncExit(
    Effect.withConfigProvider(
      standaloneConfig,
      ConfigProvider.fromMap(new Map(Object.entries(env)))
    )
  )
  if (Exit.isSuccess(exit)) throw new Error("the settings were accepted")
  return startErrorLines(exit.cause, { env })
}

describe("a wrong setting's line", () => {
  it("names the variable, the value and what is allowed; several at once, one line each", () => {
    expect(linesFor({ PAY_MAX_BODY_BYTES: "-1", PORT: "x1", PAY_QUOTE_LOCK_SECONDS: "0" })).toEqual(
      [
        'error: PORT is "x1"; it must be a whole number from 0 to 65535 (0 picks a free port)',
        'error: PAY_MAX_BODY_BYTES is "-1"; it must be from 1024 to 104857600',
        'error: PAY_QUOTE_LOCK_SECONDS is "0"; it must be from 1 to 3600'
      ]
    )
    expect(linesFor({ PAY_WEBHOOK_RETRY_SCHEDULE: "5,soon" })).toEqual([
      'error: PAY_WEBHOOK_RETRY_SCHEDULE is "5,soon"; it must be up to 50 whole numbers of seconds from 0 to 604800, comma-separated (e.g. 5,300,1800)'
    ])
    expect(linesFor({ PAY_MAX_LONG_POLL_MS: "soon" })).toEqual([
      'error: PAY_MAX_LONG_POLL_MS is "soon"; it must be a whole number from 0 to 120000'
    ])
  })

  it("never repeats a secret's value", () => {
    const lines = linesFor({ PAY_SECRET: "hunter2!", PAY_BOOTSTRAP_API_KEY: "short" })
    expect(lines?.join("\n")).not.toContain("hunter2")
    expect(lines?.join("\n")).not.toContain('"short"')
    expect(lines).toEqual([
      "error: PAY_BOOTSTRAP_API_KEY is not valid; it must be 20 to 256 of A-Z a-z 0-9 _ -",
      "error: PAY_SECRET must be standard base64, e.g. the output of `openssl rand -base64 32`"
    ])
  })

  it("keeps a message that says more than what it must be", () => {
    expect(linesFor({ PAY_SECRET_PREVIOUS: "a," })).toEqual([
      "error: PAY_SECRET_PREVIOUS's secret 1 of 2 must be standard base64, e.g. the output of `openssl rand -base64 32`"
    ])
  })

  it("says a message that names no variable as it is", () => {
    expect(configErrorLines(ConfigError.InvalidData([], "something odd"), {})).toEqual([
      "something odd"
    ])
  })
})

describe("a database or an address that fails", () => {
  const pgError = (code: string, message: string) => ({
    _tag: "SqlError",
    message: "PgClient: Failed to connect",
    cause: Object.assign(new Error(message), { code })
  })

  it("names PAY_DATABASE without its password, and the cause in words", () => {
    const url = "postgres://pay:pw@db.internal:6432/pay"
    expect(databaseProblem(pgError("28P01", "password authentication failed"), url)).toBe(
      "PAY_DATABASE postgres://pay@db.internal:6432/pay: password authentication failed; check the URL's user and password"
    )
    expect(databaseProblem(pgError("ENOTFOUND", "getaddrinfo ENOTFOUND"), url)).toBe(
      "PAY_DATABASE postgres://pay@db.internal:6432/pay: host db.internal not found (ENOTFOUND); check the URL's host"
    )
    expect(
      databaseProblem(
        {
          _tag: "SqliteStorageError",
          cause: Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" })
        },
        "/srv/pay.sqlite"
      )
    ).toBe(
      "PAY_DATABASE /srv/pay.sqlite: permission denied; give a path the server's user may write, or change the folder's permissions"
    )
    expect(databaseProblem(new Error("not a database error"), url)).toBeUndefined()
  })

  it("names HOST:PORT and what to do", () => {
    const inUse = Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE" })
    expect(listenProblem(inUse, "::1", 8080)).toBe(
      "HOST:PORT [::1]:8080 is in use by another process (EADDRINUSE); stop it, or set PORT to a free port (0 picks one)"
    )
    const denied = Object.assign(new Error("listen EACCES"), { code: "EACCES" })
    expect(listenProblem(denied, "0.0.0.0", 80)).toBe(
      "HOST:PORT 0.0.0.0:80 needs privileges (EACCES); ports below 1024 need them: set PORT from 1024 up"
    )
    expect(
      startErrorLines(Cause.fail(inUse), { host: "127.0.0.1", port: 8080, database: "x.sqlite" })
    ).toEqual([
      "error: HOST:PORT 127.0.0.1:8080 is in use by another process (EADDRINUSE); stop it, or set PORT to a free port (0 picks one)"
    ])
  })

  it("says a refusal as it is, anything else in one line, and nothing for an interrupt", () => {
    expect(startErrorLines(Cause.fail(new StartRefused({ message: "PAY_CONFIG x: no" })))).toEqual([
      "error: PAY_CONFIG x: no"
    ])
    expect(startErrorLines(Cause.die(new Error("boom")))).toEqual([
      "error: the server could not start: boom (--verbose shows the whole cause)"
    ])
    expect(startErrorLines(Cause.interrupt(Cause.empty as never))).toBeUndefined()
  })
})

describe("a refusal of a setting the engine owns", () => {
  it("names the variable with the engine's range in the variable's unit, or the standalone's own floor", () => {
    expect(
      linesFor({
        PAY_BUYER_DATA_RETENTION_DAYS: "3651",
        PAY_MAX_HELD_LONG_POLLS: "0",
        PAY_EXPIRY_SWEEP_SECONDS: "3600.001"
      })
    ).toEqual([
      'error: PAY_BUYER_DATA_RETENTION_DAYS is "3651"; it must be a whole number of days from 1 to 3650',
      'error: PAY_MAX_HELD_LONG_POLLS is "0"; it must be from 1 to 10000000',
      'error: PAY_EXPIRY_SWEEP_SECONDS is "3600.001"; it must be a number of seconds from 0.1 to 3600, at most 3 decimals (e.g. 0.5; default 5)'
    ])
    // The floor is the standalone's (10 s), the ceiling the engine's (30 days).
    for (const seconds of ["9", "2592001"]) {
      expect(linesFor({ PAY_PAYMENT_LIFETIME_SECONDS: seconds })).toEqual([
        `error: PAY_PAYMENT_LIFETIME_SECONDS is "${seconds}"; it must be from 10 to 2592000 (30 days)`
      ])
    }
    expect(linesFor({ PAY_WEBHOOK_LEASE_SECONDS: "601" })).toEqual([
      'error: PAY_WEBHOOK_LEASE_SECONDS is "601"; it must be from 2 to 600'
    ])
    expect(linesFor({ PAY_RATE_LIMIT_PER_SECOND: "1000001" })).toEqual([
      'error: PAY_RATE_LIMIT_PER_SECOND is "1000001"; it must be a whole number of requests a second from 0 (off, the default) to 1000000'
    ])
  })
})

describe("a refusal of a retention or the purge's interval", () => {
  it("names the variable with the engine's range in days (seconds for the interval), one line each", () => {
    expect(
      linesFor({
        PAY_EVENT_RETENTION_DAYS: "0",
        PAY_WEBHOOK_DELIVERY_RETENTION_DAYS: "3651",
        PAY_IDEMPOTENCY_RETENTION_DAYS: "1",
        PAY_OPTION_RETENTION_DAYS: "soon",
        PAY_AUDIT_RETENTION_DAYS: "364",
        PAY_PURGE_INTERVAL_SECONDS: "86401"
      })
    ).toEqual([
      'error: PAY_EVENT_RETENTION_DAYS is "0"; it must be a whole number of days from 1 to 3650',
      'error: PAY_WEBHOOK_DELIVERY_RETENTION_DAYS is "3651"; it must be a whole number of days from 1 to 3650',
      'error: PAY_IDEMPOTENCY_RETENTION_DAYS is "1"; it must be a whole number of days from 2 to 3650',
      'error: PAY_OPTION_RETENTION_DAYS is "soon"; it must be a whole number of days from 1 to 3650',
      'error: PAY_AUDIT_RETENTION_DAYS is "364"; it must be 0 (never purged) or a whole number of days from 365 to 36500',
      'error: PAY_PURGE_INTERVAL_SECONDS is "86401"; it must be a whole number of seconds from 1 to 86400'
    ])
  })
})

describe("the retentions and the purge's interval as read", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.withConfigProvider(
        standaloneConfig,
        ConfigProvider.fromMap(new Map(Object.entries(env)))
      )
    ).retention
  it("takes each in the engine's unit, only those given; 0 days of audit trail is never", () => {
    expect(read({})).toEqual({})
    expect(read({ PAY_AUDIT_RETENTION_DAYS: "0" })).toEqual({})
    expect(
      read({
        PAY_EVENT_RETENTION_DAYS: "30",
        PAY_IDEMPOTENCY_RETENTION_DAYS: "2",
        PAY_AUDIT_RETENTION_DAYS: "400",
        PAY_PURGE_INTERVAL_SECONDS: "5"
      })
    ).toEqual({
      eventsMs: 30 * 86_400_000,
      idempotencyKeysMs: 2 * 86_400_000,
      auditTrailMs: 400 * 86_400_000,
      purgeEveryMs: 5000
    })
  })
})

describe("the settings a start refuses, each value", () => {
  // What the process tests once started the server for, one start per value: one start of
  // process-settings.e2e now gives them all at once, the values are told apart here.
  it.each([
    [
      { PAY_SANDBOX: "yes" },
      'PAY_SANDBOX is "yes"; it must be 1 (the sandbox on any address) or 0 (loopback only, the default)'
    ],
    [{ PAY_SECRET: btoa("too short") }, "PAY_SECRET must be at least 32 random bytes (it holds 9)"],
    [{ PAY_SECRET: "not base64!" }, "PAY_SECRET must be standard base64"],
    ...["5,soon", "", "604801", Array.from({ length: 51 }, () => "1").join(",")].map(
      (schedule) =>
        [
          { PAY_WEBHOOK_RETRY_SCHEDULE: schedule },
          "; it must be up to 50 whole numbers of seconds"
        ] as const
    ),
    [
      { PAY_WEBHOOK_LEASE_SECONDS: "1" },
      'PAY_WEBHOOK_LEASE_SECONDS is "1"; it must be from 2 to 600'
    ],
    ...["0", "3651", "forever"].map(
      (days) =>
        [
          { PAY_BUYER_DATA_RETENTION_DAYS: days },
          `PAY_BUYER_DATA_RETENTION_DAYS is "${days}"`
        ] as const
    ),
    [{ PAY_BASE_PATH: "pay/" }, 'PAY_BASE_PATH is "pay/"; it must be empty or a path like /pay'],
    [
      { PAY_FETCH_ALLOW_PRIVATE: "yes" },
      'PAY_FETCH_ALLOW_PRIVATE is "yes"; it must be 1 (on) or 0 (off, the default)'
    ],
    [
      { PAY_SQLITE_READ_WORKER: "yes" },
      'PAY_SQLITE_READ_WORKER is "yes"; it must be 1 (on, the default) or 0 (off)'
    ]
  ] as ReadonlyArray<readonly [Record<string, string>, string]>)(
    "%j: one line, naming it",
    (env, message) => {
      const lines = linesFor(env) ?? []
      expect(lines, JSON.stringify(lines)).toHaveLength(1)
      expect(lines[0]).toMatch(/^error: /)
      expect(lines[0]).toContain(message)
    }
  )
})
