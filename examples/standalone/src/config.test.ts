import { bucketSettings, engineConfig } from "@pay/core"
import {
  ConfigError,
  ConfigProvider,
  ConfigProviderPathPatch,
  Effect,
  Either,
  Exit,
  HashSet,
  Option
} from "effect"
import { describe, expect, it } from "vitest"
import {
  isLoopbackHost,
  parseExpirySweepSeconds,
  parsePreviousSecrets,
  SETTINGS,
  sandboxRefusal,
  standaloneConfig
} from "./config.js"
import { startErrorLines } from "./startErrors.js"

/** The standalone server's settings read from `env` alone: the settings, or the one-line refusal. */
const read = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(
      Effect.withConfigProvider(
        standaloneConfig,
        ConfigProvider.fromMap(new Map(Object.entries(env)))
      )
    )
  )

describe("where the sandbox chain may run", () => {
  it("knows loopback addresses from the others", () => {
    for (const host of [
      "127.0.0.1",
      "127.1.2.3",
      "::1",
      "[::1]",
      "localhost",
      "LOCALHOST",
      "::ffff:127.0.0.1"
    ]) {
      expect(isLoopbackHost(host), host).toBe(true)
    }
    for (const host of [
      "0.0.0.0",
      "::",
      "10.0.0.5",
      "192.168.1.10",
      "pay.example",
      "128.0.0.1",
      "127.0.0.1.nip.io",
      ""
    ]) {
      expect(isLoopbackHost(host), host).toBe(false)
    }
  })

  it("runs on loopback, and elsewhere only with PAY_SANDBOX=1, saying which settings to change", () => {
    expect(sandboxRefusal({ host: "127.0.0.1" })).toBeUndefined()
    expect(sandboxRefusal({ host: "::1", sandboxOnAnyAddress: false })).toBeUndefined()
    expect(sandboxRefusal({ host: "0.0.0.0", sandboxOnAnyAddress: true })).toBeUndefined()
    const refused = sandboxRefusal({ host: "0.0.0.0" })
    expect(refused).toContain("HOST 0.0.0.0 is not a loopback address")
    expect(refused).toContain("PAY_CONFIG")
    expect(refused).toContain("PAY_SANDBOX=1")
    expect(sandboxRefusal({ host: "10.0.0.5", sandboxOnAnyAddress: false })).toBeDefined()
  })
})

describe("PAY_SECRET_PREVIOUS", () => {
  const a = btoa("a".repeat(32))
  const b = btoa("b".repeat(48))

  it("is comma-separated secrets, spaces around them allowed; empty is none", () => {
    expect(parsePreviousSecrets(a)).toEqual(Either.right([a]))
    expect(parsePreviousSecrets(` ${a} , ${b}\n`)).toEqual(Either.right([a, b]))
    expect(parsePreviousSecrets("")).toEqual(Either.right([]))
    expect(parsePreviousSecrets("  ")).toEqual(Either.right([]))
  })

  it("refuses an empty entry or one that is not a secret, naming which", () => {
    expect(parsePreviousSecrets(`${a},`)).toEqual(
      Either.left("PAY_SECRET_PREVIOUS's secret 2 of 2 is empty: give secrets separated by commas")
    )
    expect(parsePreviousSecrets(`${a},${btoa("short")}`)).toEqual(
      Either.left(
        "PAY_SECRET_PREVIOUS's secret 2 of 2 must be at least 32 random bytes (it holds 5)"
      )
    )
    expect(parsePreviousSecrets(`${a} ${b}`)).toEqual(
      Either.left(
        "PAY_SECRET_PREVIOUS's secret 1 of 1 must be standard base64, e.g. the output of `openssl rand -base64 32`"
      )
    )
  })
})

describe("the connection and long-poll limits (PAY_MAX_CONNECTIONS, PAY_MAX_HELD_LONG_POLLS)", () => {
  it("default to 25,000 connections and, left to the engine's default, 20,000 held long-polls", () => {
    const config = read({})
    expect(Either.isRight(config)).toBe(true)
    if (Either.isRight(config)) {
      expect(config.right.maxConnections).toBe(25_000)
      // The engine's setting: not given, so the engine's schema applies its default.
      expect(config.right.maxHeldLongPolls).toBeUndefined()
      expect(engineConfig({ publicUrl: "http://127.0.0.1:8080" }).payments.maxHeldLongPolls).toBe(
        20_000
      )
    }
  })

  it("take whole numbers from 1", () => {
    const config = read({ PAY_MAX_CONNECTIONS: "100", PAY_MAX_HELD_LONG_POLLS: "3" })
    expect(Either.isRight(config) && config.right.maxConnections).toBe(100)
    expect(Either.isRight(config) && config.right.maxHeldLongPolls).toBe(3)
  })

  it("refuse anything else with one line naming the variable and its range", () => {
    for (const [name, value] of [
      ["PAY_MAX_CONNECTIONS", "0"],
      ["PAY_MAX_CONNECTIONS", "many"],
      ["PAY_MAX_CONNECTIONS", "1.5"],
      ["PAY_MAX_HELD_LONG_POLLS", "0"],
      ["PAY_MAX_HELD_LONG_POLLS", "-3"],
      ["PAY_MAX_HELD_LONG_POLLS", "20000000"]
    ] as const) {
      const config = read({ [name]: value })
      expect(Either.isLeft(config), `${name}=${value}`).toBe(true)
      if (Either.isLeft(config)) {
        const message = String(config.left)
        expect(message, `${name}=${value}`).toContain(name)
        expect(message.split("\n").length, `${name}=${value}`).toBe(1)
      }
    }
  })
})

describe("the expiry sweep's interval (PAY_EXPIRY_SWEEP_SECONDS)", () => {
  it("defaults to 5 s, the engine's default (left to the engine)", () => {
    expect(Either.getOrThrow(read({})).expirySweepMs).toBeUndefined()
    expect(engineConfig({ publicUrl: "http://127.0.0.1:8080" }).payments.expirySweepMs).toBe(5_000)
  })

  it("takes seconds from 0.1 to 3600, whole or with up to 3 decimals, in milliseconds", () => {
    for (const [value, ms] of [
      ["0.5", 500],
      ["0.1", 100],
      ["0.7", 700],
      ["1.25", 1_250],
      ["2.001", 2_001],
      ["5", 5_000],
      [" 30 ", 30_000],
      ["3600", 3_600_000],
      ["3600.000", 3_600_000]
    ] as const) {
      expect(parseExpirySweepSeconds(value), value).toBe(ms)
      expect(Either.getOrThrow(read({ PAY_EXPIRY_SWEEP_SECONDS: value })).expirySweepMs).toBe(ms)
    }
  })

  it("refuses anything else in one line naming the variable and what is allowed", () => {
    for (const value of [
      "",
      "0",
      "0.05",
      "0.099",
      "3600.001",
      "3601",
      "-1",
      "0.0005",
      ".5",
      "5.",
      "1e2",
      "5s",
      "0x10",
      "Infinity",
      "NaN",
      "1,5"
    ]) {
      expect(parseExpirySweepSeconds(value), value).toBeUndefined()
      const config = read({ PAY_EXPIRY_SWEEP_SECONDS: value })
      expect(Either.isLeft(config), JSON.stringify(value)).toBe(true)
      if (Either.isLeft(config)) {
        const message = String(config.left)
        expect(message, JSON.stringify(value)).toContain(
          "PAY_EXPIRY_SWEEP_SECONDS must be a number of seconds from 0.1 to 3600, at most 3 decimals (e.g. 0.5; default 5)"
        )
        expect(message.split("\n").length, JSON.stringify(value)).toBe(1)
      }
    }
    // As the server says it at start: the variable, the value, what is allowed.
    const env = { PAY_EXPIRY_SWEEP_SECONDS: "0.05" }
    const exit = Effect.runSyncExit(
      Effect.withConfigProvider(
        standaloneConfig,
        ConfigProvider.fromMap(new Map(Object.entries(env)))
      )
    )
    expect(Exit.isFailure(exit) && startErrorLines(exit.cause, { env })).toEqual([
      'error: PAY_EXPIRY_SWEEP_SECONDS is "0.05"; it must be a number of seconds from 0.1 to 3600, at most 3 decimals (e.g. 0.5; default 5)'
    ])
  })
})

describe("the rate limits (PAY_RATE_LIMIT_*, PAY_GATEWAY_RATE_LIMIT_*, PAY_PAYMENT_RATE_LIMIT_*)", () => {
  it("are all off by default, and 0 is off", () => {
    expect(Either.getOrThrow(read({})).rateLimits).toEqual({})
    expect(
      Either.getOrThrow(read({ PAY_RATE_LIMIT_PER_SECOND: "0", PAY_RATE_LIMIT_BURST: "0" }))
        .rateLimits
    ).toEqual({})
  })

  it("take a rate, and a burst that defaults to the rate", () => {
    const config = Either.getOrThrow(
      read({
        PAY_RATE_LIMIT_PER_SECOND: "50",
        PAY_GATEWAY_RATE_LIMIT_PER_SECOND: "20",
        PAY_GATEWAY_RATE_LIMIT_BURST: "100",
        PAY_PAYMENT_RATE_LIMIT_PER_SECOND: " 5 "
      })
    )
    // A burst not given is left to the engine, whose bucket then holds one second's worth.
    expect(config.rateLimits).toEqual({
      perApiKey: { perSecond: 50 },
      perWalletApp: { perSecond: 20, burst: 100 },
      perPayment: { perSecond: 5 }
    })
    expect(bucketSettings(config.rateLimits?.perApiKey)).toEqual({ perSecond: 50, burst: 50 })
    expect(bucketSettings(config.rateLimits?.perWalletApp)).toEqual({ perSecond: 20, burst: 100 })
    expect(bucketSettings(config.rateLimits?.perPayment)).toEqual({ perSecond: 5, burst: 5 })
  })

  it("leave the partner's limit to the engine's default unless set; 0 turns it off", () => {
    expect(
      Either.getOrThrow(read({ PAY_RATE_LIMIT_PER_SECOND: "50" })).rateLimits?.perPartner
    ).toBeUndefined()
    expect(
      Either.getOrThrow(
        read({ PAY_PARTNER_RATE_LIMIT_PER_SECOND: "200", PAY_PARTNER_RATE_LIMIT_BURST: "400" })
      ).rateLimits
    ).toEqual({ perPartner: { perSecond: 200, burst: 400 } })
    expect(
      Either.getOrThrow(
        read({ PAY_RATE_LIMIT_PER_SECOND: "50", PAY_PARTNER_RATE_LIMIT_PER_SECOND: "0" })
      ).rateLimits
    ).toEqual({ perApiKey: { perSecond: 50 }, perPartner: { perSecond: 0 } })
  })

  it("take the webhook caps per partner, and refuse one out of range in one line", () => {
    const config = Either.getOrThrow(
      read({ PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: "4", PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: "2" })
    )
    expect([config.webhookMaxEndpointsPerPartner, config.webhookInFlightPerPartner]).toEqual([4, 2])
    const unset = Either.getOrThrow(read({}))
    expect([unset.webhookMaxEndpointsPerPartner, unset.webhookInFlightPerPartner]).toEqual([
      undefined,
      undefined
    ])
    for (const [env, says] of [
      [
        { PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: "0" },
        "PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER must be from 1 to 10000"
      ],
      [
        { PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: "1001" },
        "PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER must be from 1 to 1000"
      ],
      [{ PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: "many" }, "PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER"]
    ] as const) {
      const refused = read(env)
      expect(Either.isLeft(refused), JSON.stringify(env)).toBe(true)
      if (Either.isLeft(refused)) {
        expect(String(refused.left), JSON.stringify(env)).toContain(says)
        expect(String(refused.left).split("\n").length, JSON.stringify(env)).toBe(1)
      }
    }
  })

  it("refuse anything but whole numbers from 0 to 1000000, and a burst without a rate, in one line", () => {
    for (const [env, says] of [
      [{ PAY_RATE_LIMIT_PER_SECOND: "-1" }, "PAY_RATE_LIMIT_PER_SECOND must be a whole number"],
      [{ PAY_RATE_LIMIT_PER_SECOND: "1.5" }, "PAY_RATE_LIMIT_PER_SECOND must be a whole number"],
      [{ PAY_RATE_LIMIT_PER_SECOND: "lots" }, "PAY_RATE_LIMIT_PER_SECOND must be a whole number"],
      [
        { PAY_GATEWAY_RATE_LIMIT_PER_SECOND: "1000001" },
        "PAY_GATEWAY_RATE_LIMIT_PER_SECOND must be a whole number"
      ],
      [
        { PAY_PAYMENT_RATE_LIMIT_PER_SECOND: "5", PAY_PAYMENT_RATE_LIMIT_BURST: "1e3" },
        "PAY_PAYMENT_RATE_LIMIT_BURST must be a whole number of requests from 0 to 1000000"
      ],
      [
        { PAY_RATE_LIMIT_BURST: "10" },
        "PAY_RATE_LIMIT_BURST is set but PAY_RATE_LIMIT_PER_SECOND is 0 (off): set PAY_RATE_LIMIT_PER_SECOND too"
      ]
    ] as const) {
      const config = read(env)
      expect(Either.isLeft(config), JSON.stringify(env)).toBe(true)
      if (Either.isLeft(config)) {
        const message = String(config.left)
        expect(message, JSON.stringify(env)).toContain(says)
        expect(message.split("\n").length, JSON.stringify(env)).toBe(1)
      }
    }
  })
})

describe("the SQLite read worker (PAY_SQLITE_READ_WORKER)", () => {
  it("is on by default, off with 0, and refuses anything else naming the variable", () => {
    const on = read({})
    expect(Either.isRight(on) && on.right.sqliteReadWorker).toBe(true)
    const off = read({ PAY_SQLITE_READ_WORKER: "0" })
    expect(Either.isRight(off) && off.right.sqliteReadWorker).toBe(false)
    for (const value of ["yes", "2", ""]) {
      const refused = read({ PAY_SQLITE_READ_WORKER: value })
      expect(Either.isLeft(refused) && String(refused.left), value).toContain(
        "PAY_SQLITE_READ_WORKER"
      )
    }
  })
})

/** Every variable `standaloneConfig` reads: a provider that has none, recording what is asked. */
const variablesRead = (): ReadonlyArray<string> => {
  const asked = new Set<string>()
  const provider = ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path) => {
        asked.add(path.join("_"))
        return Effect.fail(ConfigError.MissingData([...path], "unset"))
      },
      enumerateChildren: () => Effect.succeed(HashSet.empty()),
      patch: ConfigProviderPathPatch.empty
    })
  )
  Effect.runSyncExit(Effect.withConfigProvider(standaloneConfig, provider))
  return [...asked]
}

describe("the list of settings", () => {
  it("holds every variable the server's settings read (a new one must be added to SETTINGS)", () => {
    const read = variablesRead()
    expect(read).toContain("PAY_MAX_BODY_BYTES")
    expect(read).toContain("PAY_PAYMENT_RATE_LIMIT_BURST")
    expect(read.length).toBeGreaterThan(25)
    expect(read.filter((name) => SETTINGS[name] === undefined)).toEqual([])
  })
})

describe("PAY_METRICS and the OpenTelemetry variables", () => {
  const settings = (env: Record<string, string>) => {
    const read_ = read(env)
    if (Either.isLeft(read_)) throw new Error(String(read_.left))
    return read_.right
  }
  const refusal = (env: Record<string, string>) => {
    const read_ = read(env)
    if (Either.isRight(read_)) throw new Error("the settings were accepted")
    return String(read_.left)
  }

  it("serves /metrics unless PAY_METRICS=0; anything else is refused, naming the variable", () => {
    expect(settings({}).metrics).toBe(true)
    expect(settings({ PAY_METRICS: "0" }).metrics).toBe(false)
    expect(refusal({ PAY_METRICS: "off" })).toContain(
      "PAY_METRICS must be 1 (/metrics served, the default) or 0 (off)"
    )
  })

  it("exports only with OTEL_EXPORTER_OTLP_ENDPOINT, with the service name and headers given", () => {
    expect(settings({}).telemetry).toEqual(Option.none())
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }).telemetry).toEqual(Option.none())
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_SERVICE_NAME: "pay-eu",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb, x-tenant = t1"
      }).telemetry
    ).toEqual(
      Option.some({
        otlpEndpoint: "http://collector:4318",
        serviceName: "pay-eu",
        headers: { "api-key": "a,b", "x-tenant": "t1" }
      })
    )
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toContain(
      "OTEL_EXPORTER_OTLP_ENDPOINT must be the collector's http:// or https:// OTLP base URL"
    )
    expect(
      refusal({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "novalue"
      })
    ).toContain("OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs")
  })
})

describe("PAY_LOG_LEVEL and PAY_LOG_FORMAT", () => {
  it("default to info, and to pretty on a terminal or json elsewhere", () => {
    const config = read({})
    expect(Either.isRight(config)).toBe(true)
    if (Either.isRight(config)) {
      expect(config.right.logLevel).toBe("info")
      expect(config.right.logFormat).toBe(process.stdout.isTTY ? "pretty" : "json")
    }
  })

  it("take each level and format", () => {
    for (const level of ["trace", "debug", "info", "warning", "error", "none"]) {
      expect(Either.getOrThrow(read({ PAY_LOG_LEVEL: level })).logLevel).toBe(level)
    }
    for (const format of ["json", "pretty"]) {
      expect(Either.getOrThrow(read({ PAY_LOG_FORMAT: format })).logFormat).toBe(format)
    }
  })

  it("refuse anything else in one line naming the variable and what is allowed", () => {
    for (const [env, allowed] of [
      [
        { PAY_LOG_LEVEL: "warn" },
        "PAY_LOG_LEVEL must be one of trace, debug, info, warning, error, none"
      ],
      [
        { PAY_LOG_LEVEL: "INFO" },
        "PAY_LOG_LEVEL must be one of trace, debug, info, warning, error, none"
      ],
      [{ PAY_LOG_FORMAT: "text" }, "PAY_LOG_FORMAT must be json or pretty"]
    ] as const) {
      const config = read(env)
      expect(Either.isLeft(config), JSON.stringify(env)).toBe(true)
      if (Either.isLeft(config)) {
        const message = String(config.left)
        expect(message).toContain(allowed)
        expect(message.split("\n").length, JSON.stringify(env)).toBe(1)
      }
    }
  })
})
