/**
 * The standalone server's settings, from the environment. Every variable is
 * listed in the README.
 */
import {
  ApiKey,
  decodeEngineSecret,
  defaultPaymentsSettings,
  isBasePath,
  isLogFormat,
  isLogLevelName,
  LOG_LEVELS,
  type LogFormat,
  type LogLevelName,
  parseOtlpHeaders,
  type RateLimitSettings,
  type RateLimitsSettings,
  type TelemetrySettings
} from "@pay/core"
import { Config, ConfigError, Data, Either, Option } from "effect"

export interface StandaloneConfig {
  readonly host: string
  readonly port: number
  /** A SQLite file's path, or a `postgres://` (`postgresql://`) URL: see `isPostgresUrl`. */
  readonly database: string
  /** The first partner's key on an empty database, instead of a generated one. */
  readonly bootstrapApiKey: Option.Option<string>
  /** Base URL for links the engine hands out, with the prefix it is served under; defaults to http://HOST:PORT. */
  readonly publicUrl: string
  /** The path prefix requests arrive with: PAY_BASE_PATH, else the path of PAY_PUBLIC_URL. */
  readonly basePath: string
  readonly maxBodyBytes: number
  /** Lifetime of a payment created without `expiresAt`. */
  readonly paymentLifetimeMs: number
  /** The longest a status request is held (`maxPollMs` above it is capped). */
  readonly maxLongPollMs: number
  /** PAY_MAX_HELD_LONG_POLLS: status long-polls held at once; one more is 503 with Retry-After. */
  readonly maxHeldLongPolls?: number
  /** PAY_EXPIRY_SWEEP_SECONDS: how often the expiry sweep records the payments whose time passed. */
  readonly expirySweepMs?: number
  /** PAY_MAX_CONNECTIONS: connections open at once (node's `server.maxConnections`; not on Bun). */
  readonly maxConnections?: number
  /**
   * PAY_SQLITE_READ_WORKER=0: payment listings and statistics on the server's own thread
   * instead of a worker thread (on SQLite, where the host has one: the Node build).
   */
  readonly sqliteReadWorker?: boolean
  /** The `PAY_CONFIG` file (networks, tokens, rates); without one the sandbox chain runs. */
  readonly payConfigPath: Option.Option<string>
  /**
   * PAY_SANDBOX=1: the sandbox chain (no PAY_CONFIG) may run on an address that
   * is not loopback. Without it, such a start is refused: the sandbox's tokens
   * are free and its collecting key is public, and must never pass for money.
   */
  readonly sandboxOnAnyAddress?: boolean
  /** How long an option's price holds; overrides the file's `quoteLockSeconds`. */
  readonly quoteLockMs: Option.Option<number>
  /** PAY_BUYER_DATA_RETENTION_DAYS: how long buyer data is kept after its payment is final. */
  readonly buyerDataRetentionMs?: number
  /**
   * PAY_FETCH_ALLOW_PRIVATE=1: the logo fetcher may reach loopback and private
   * addresses. For tests and private deployments only; off by default.
   */
  readonly fetchAllowPrivate: boolean
  /** PAY_SECRET: the engine's secret (base64, 32+ bytes); without it, the database keeps one. */
  readonly secret: Option.Option<string>
  /**
   * PAY_SECRET_PREVIOUS: earlier engine secrets, comma-separated, each like
   * PAY_SECRET: they still open what was sealed under them, and never seal.
   */
  readonly previousSecrets?: ReadonlyArray<string>
  /** PAY_WEBHOOK_RETRY_SCHEDULE: the waits before each webhook retry; default the engine's. */
  readonly webhookRetryScheduleMs?: Option.Option<ReadonlyArray<number>>
  /** PAY_WEBHOOK_LEASE_SECONDS: how long a claimed delivery is held before another instance takes it. */
  readonly webhookLeaseMs?: Option.Option<number>
  /**
   * PAY_RATE_LIMIT_*, PAY_GATEWAY_RATE_LIMIT_*, PAY_PAYMENT_RATE_LIMIT_*: the
   * limits per partner API key, per wallet app and per payment; only those on.
   */
  readonly rateLimits?: RateLimitsSettings
  /** PAY_METRICS=0: no `/metrics` route (404). On by default. */
  readonly metrics?: boolean
  /** OTEL_EXPORTER_OTLP_ENDPOINT (with OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS): OTLP export, off unset. */
  readonly telemetry?: Option.Option<TelemetrySettings>
  /** PAY_LOG_LEVEL: the least severe log lines written; default info. */
  readonly logLevel?: LogLevelName
  /** PAY_LOG_FORMAT: json (one object per line) or pretty; default pretty on a terminal, else json. */
  readonly logFormat?: LogFormat
}

/**
 * Every environment variable the server reads, with what it allows (for a
 * value that is not even of the right kind, as `PORT=abc`). The one list: the
 * warning about an unknown `PAY_*` variable checks against it, and a test
 * checks that every variable `standaloneConfig` reads is here. PAY_LOG_LEVEL,
 * PAY_LOG_FORMAT and PAY_METRICS are read by the logging and metrics setup.
 */
export const SETTINGS: Readonly<Record<string, string>> = {
  HOST: "an address to listen on (127.0.0.1, 0.0.0.0, ::1)",
  PORT: "a whole number from 0 to 65535 (0 picks a free port)",
  PAY_DATABASE: "the path of a SQLite file or a postgres:// (postgresql://) URL",
  PAY_BOOTSTRAP_API_KEY: "20 to 256 of A-Z a-z 0-9 _ -",
  PAY_PUBLIC_URL: "an absolute http:// or https:// URL",
  PAY_BASE_PATH: 'empty or a path like /pay (starting with "/", no trailing "/")',
  PAY_MAX_BODY_BYTES: "a whole number from 1024 to 104857600",
  PAY_PAYMENT_LIFETIME_SECONDS: "a whole number from 10 to 2592000 (30 days)",
  PAY_CONFIG: "the path of the networks file (JSON)",
  PAY_QUOTE_LOCK_SECONDS: "a whole number from 1 to 3600",
  PAY_BUYER_DATA_RETENTION_DAYS: "a whole number of days from 1 to 3650",
  PAY_MAX_LONG_POLL_MS: "a whole number from 0 to 120000",
  PAY_MAX_HELD_LONG_POLLS: "a whole number from 1 to 10000000",
  PAY_MAX_CONNECTIONS: "a whole number from 1 to 10000000",
  PAY_EXPIRY_SWEEP_SECONDS: "a number of seconds from 0.1 to 3600, at most 3 decimals (e.g. 0.5)",
  PAY_WEBHOOK_RETRY_SCHEDULE:
    "up to 50 whole numbers of seconds from 0 to 604800, comma-separated (e.g. 5,300,1800)",
  PAY_WEBHOOK_LEASE_SECONDS: "a whole number from 2 to 600",
  PAY_RATE_LIMIT_PER_SECOND: "a whole number from 0 (off) to 1000000",
  PAY_RATE_LIMIT_BURST: "a whole number from 0 to 1000000",
  PAY_GATEWAY_RATE_LIMIT_PER_SECOND: "a whole number from 0 (off) to 1000000",
  PAY_GATEWAY_RATE_LIMIT_BURST: "a whole number from 0 to 1000000",
  PAY_PAYMENT_RATE_LIMIT_PER_SECOND: "a whole number from 0 (off) to 1000000",
  PAY_PAYMENT_RATE_LIMIT_BURST: "a whole number from 0 to 1000000",
  PAY_SANDBOX: "1 or 0",
  PAY_SQLITE_READ_WORKER: "1 or 0",
  PAY_FETCH_ALLOW_PRIVATE: "1 or 0",
  PAY_SECRET: "32 or more random bytes in standard base64 (openssl rand -base64 32)",
  PAY_SECRET_PREVIOUS: "secrets like PAY_SECRET, comma-separated",
  PAY_LOG_LEVEL: "trace, debug, info, warning, error or none",
  PAY_LOG_FORMAT: "json or pretty",
  PAY_METRICS: "1 or 0",
  OTEL_EXPORTER_OTLP_ENDPOINT: "the collector's http:// or https:// OTLP base URL",
  OTEL_SERVICE_NAME: "the service name traces and metrics are sent under",
  OTEL_EXPORTER_OTLP_HEADERS: "key=value pairs, comma-separated (values URL-encoded)"
}

/** Settings whose value is never repeated in a message (a key, a secret, a password in a URL). */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set([
  "PAY_DATABASE",
  "PAY_BOOTSTRAP_API_KEY",
  "PAY_SECRET",
  "PAY_SECRET_PREVIOUS"
])

/**
 * The standard OpenTelemetry variables: OTEL_EXPORTER_OTLP_ENDPOINT turns the
 * export on; OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS (`key=value,…`)
 * go with it. Unset or empty: off.
 */
const telemetryConfig: Config.Config<Option.Option<TelemetrySettings>> = Config.all({
  endpoint: Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  serviceName: Config.option(Config.nonEmptyString("OTEL_SERVICE_NAME")),
  headers: Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_HEADERS"))
}).pipe(
  Config.mapOrFail(({ endpoint, serviceName, headers }) => {
    if (Option.isNone(endpoint)) return Either.right(Option.none())
    if (!URL.canParse(endpoint.value) || !/^https?:$/.test(new URL(endpoint.value).protocol)) {
      return Either.left(
        ConfigError.InvalidData(
          ["OTEL_EXPORTER_OTLP_ENDPOINT"],
          "OTEL_EXPORTER_OTLP_ENDPOINT must be the collector's http:// or https:// OTLP base URL, e.g. http://127.0.0.1:4318"
        )
      )
    }
    const parsed = Option.map(headers, parseOtlpHeaders)
    if (Option.isSome(parsed) && "invalid" in parsed.value) {
      return Either.left(
        ConfigError.InvalidData(
          ["OTEL_EXPORTER_OTLP_HEADERS"],
          "OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs, comma-separated (values URL-encoded)"
        )
      )
    }
    return Either.right(
      Option.some({
        otlpEndpoint: endpoint.value,
        ...(Option.isSome(serviceName) ? { serviceName: serviceName.value } : {}),
        ...(Option.isSome(parsed) ? { headers: parsed.value as Record<string, string> } : {})
      })
    )
  })
)

const RETRY_SCHEDULE_MESSAGE =
  "PAY_WEBHOOK_RETRY_SCHEDULE must be up to 50 whole numbers of seconds from 0 to 604800, comma-separated (e.g. 5,300,1800)"

/** "5, 300,1800" → [5000, 300000, 1800000], or undefined when it is not one. */
export const parseRetrySchedule = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(",").map((p) => p.trim())
  if (parts.length > 50 || !parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) <= 604_800)) {
    return undefined
  }
  return parts.map((p) => Number(p) * 1000)
}

const EXPIRY_SWEEP_MESSAGE =
  "PAY_EXPIRY_SWEEP_SECONDS must be a number of seconds from 0.1 to 3600, at most 3 decimals (e.g. 0.5; default 5)"

/**
 * "0.5" → 500: PAY_EXPIRY_SWEEP_SECONDS in milliseconds, or undefined when it
 * is not a number of seconds from 0.1 to 3600 with at most 3 decimals (the
 * engine's `expirySweepMs`, 100 to 3,600,000, in seconds as the other
 * durations are).
 */
export const parseExpirySweepSeconds = (text: string): number | undefined => {
  const trimmed = text.trim()
  if (!/^\d{1,4}(\.\d{1,3})?$/.test(trimmed)) return undefined
  const ms = Math.round(Number(trimmed) * 1000)
  return ms >= 100 && ms <= 3_600_000 ? ms : undefined
}

export const DEFAULT_DATABASE = "./data/pay.sqlite"

/** An address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
  return (
    h === "localhost" ||
    h === "::1" ||
    h === "0:0:0:0:0:0:0:1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  )
}

/** PAY_PUBLIC_URL when it is not set: `http://HOST:PORT`, an IPv6 host bracketed. */
export const defaultPublicUrl = (host: string, port: number): string =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/** A configuration the server refuses to start with: said in one line, exit code 1. */
export class StartRefused extends Data.TaggedError("StartRefused")<{ readonly message: string }> {}

/**
 * Why the sandbox chain may not run on this configuration, or undefined when it
 * may: on a loopback address, or anywhere with PAY_SANDBOX=1.
 */
export const sandboxRefusal = (
  config: Pick<StandaloneConfig, "host" | "sandboxOnAnyAddress">
): string | undefined =>
  isLoopbackHost(config.host) || config.sandboxOnAnyAddress === true
    ? undefined
    : `HOST ${config.host} is not a loopback address, and without PAY_CONFIG the server runs ` +
      "the sandbox chain (free test tokens, a publicly known collecting key): set PAY_CONFIG " +
      "to real networks, or PAY_SANDBOX=1 to run the sandbox on this address anyway"

/** A `postgres://` or `postgresql://` URL selects PostgreSQL; anything else names a SQLite file. */
export const isPostgresUrl = (database: string): boolean => /^postgres(ql)?:\/\//i.test(database)

/** A parseable PostgreSQL URL, or a SQLite path (not empty, not a URL of another scheme). */
export const isValidDatabase = (database: string): boolean =>
  isPostgresUrl(database)
    ? URL.canParse(database)
    : database.length > 0 && !/^[a-z][a-z0-9+.-]*:\/\//i.test(database)

const DATABASE_MESSAGE =
  "PAY_DATABASE must be the path of a SQLite file or a postgres:// (postgresql://) URL"

/**
 * The database for people to read (the start banner, logs): a SQLite path as
 * it is, a PostgreSQL URL without its password, wherever the URL carries one.
 */
export const describeDatabase = (database: string): string => {
  if (!isPostgresUrl(database)) return database
  // Validation refuses such a URL; should one get here all the same, drop its user info.
  if (!URL.canParse(database)) return database.replace(/\/\/[^/]*@/, "//@")
  const url = new URL(database)
  url.password = ""
  // Only when there is one to drop: rewriting the query re-encodes the rest of it.
  const secrets = [...url.searchParams.keys()].filter((name) => /password/i.test(name))
  for (const name of secrets) url.searchParams.delete(name)
  return url.toString()
}

const database = Config.string("PAY_DATABASE").pipe(
  Config.withDefault(DEFAULT_DATABASE),
  Config.validate({ message: DATABASE_MESSAGE, validation: isValidDatabase })
)

const secret = Config.option(Config.string("PAY_SECRET")).pipe(
  Config.mapOrFail((given) =>
    Option.match(given, {
      onNone: () => Either.right(given),
      onSome: (s) =>
        Either.mapBoth(decodeEngineSecret(s), {
          onLeft: (message) => ConfigError.InvalidData(["PAY_SECRET"], `PAY_SECRET ${message}`),
          onRight: () => given
        })
    })
  )
)

/**
 * "A, B" → the secrets, or why it is not a list of them. Empty (or blank) is
 * none, so `PAY_SECRET_PREVIOUS=` in a compose file works as unset. Base64
 * holds no comma.
 */
export const parsePreviousSecrets = (
  text: string
): Either.Either<ReadonlyArray<string>, string> => {
  if (text.trim() === "") return Either.right([])
  const parts = text.split(",").map((part) => part.trim())
  for (const [i, part] of parts.entries()) {
    const which = `PAY_SECRET_PREVIOUS's secret ${i + 1} of ${parts.length}`
    if (part === "") return Either.left(`${which} is empty: give secrets separated by commas`)
    const decoded = decodeEngineSecret(part)
    if (Either.isLeft(decoded)) return Either.left(`${which} ${decoded.left}`)
  }
  return Either.right(parts)
}

const previousSecrets = Config.string("PAY_SECRET_PREVIOUS").pipe(
  Config.withDefault(""),
  Config.mapOrFail((text) =>
    Either.mapLeft(parsePreviousSecrets(text), (message) =>
      ConfigError.InvalidData(["PAY_SECRET_PREVIOUS"], message)
    )
  )
)

/** PAY_SECRET and PAY_SECRET_PREVIOUS: what the server and the CLI seal and open with. */
export const engineSecretsConfig = Config.all({ secret, previousSecrets })

const bootstrapApiKey = Config.option(Config.string("PAY_BOOTSTRAP_API_KEY")).pipe(
  Config.mapOrFail((key) =>
    Option.match(key, {
      onNone: () => Either.right(key),
      onSome: (k) =>
        Either.mapBoth(ApiKey.validateCustomApiKey(k), {
          onLeft: (message) => ConfigError.InvalidData(["PAY_BOOTSTRAP_API_KEY"], message),
          onRight: () => key
        })
    })
  )
)

const publicUrl = Config.option(
  Config.string("PAY_PUBLIC_URL").pipe(
    Config.validate({
      message: "PAY_PUBLIC_URL must be an absolute http:// or https:// URL",
      validation: (s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
    })
  )
)

const basePath = Config.option(
  Config.string("PAY_BASE_PATH").pipe(
    Config.validate({
      message:
        'PAY_BASE_PATH must be empty or a path like /pay (starting with "/", no trailing "/")',
      validation: isBasePath
    })
  )
)

/** The most a rate or a burst may be: a million requests. */
const MAX_RATE_LIMIT = 1_000_000

/** "0" to "1000000", or undefined. */
const parseRateLimitNumber = (text: string): number | undefined => {
  const trimmed = text.trim()
  return /^\d{1,7}$/.test(trimmed) && Number(trimmed) <= MAX_RATE_LIMIT
    ? Number(trimmed)
    : undefined
}

/**
 * One limit from `${prefix}_PER_SECOND` and `${prefix}_BURST`: off (undefined)
 * unless the rate is above 0; the burst defaults to the rate.
 */
export const rateLimitConfig = (prefix: string): Config.Config<RateLimitSettings | undefined> => {
  const rateName = `${prefix}_PER_SECOND`
  const burstName = `${prefix}_BURST`
  const number = (name: string, message: string) =>
    Config.string(name).pipe(
      Config.withDefault("0"),
      Config.mapOrFail((text) => {
        const n = parseRateLimitNumber(text)
        return n === undefined
          ? Either.left(ConfigError.InvalidData([name], message))
          : Either.right(n)
      })
    )
  return Config.all([
    number(
      rateName,
      `${rateName} must be a whole number of requests a second from 0 (off, the default) to ${MAX_RATE_LIMIT}`
    ),
    number(
      burstName,
      `${burstName} must be a whole number of requests from 0 to ${MAX_RATE_LIMIT} (0 or unset: as many as ${rateName})`
    )
  ]).pipe(
    Config.mapOrFail(([perSecond, burst]) => {
      if (perSecond === 0 && burst > 0) {
        return Either.left(
          ConfigError.InvalidData(
            [burstName],
            `${burstName} is set but ${rateName} is 0 (off): set ${rateName} too`
          )
        )
      }
      return Either.right(
        perSecond === 0 ? undefined : { perSecond, burst: burst === 0 ? perSecond : burst }
      )
    })
  )
}

/** The three limits, each off unless its rate is set. */
const rateLimits = Config.all({
  perApiKey: rateLimitConfig("PAY_RATE_LIMIT"),
  perWalletApp: rateLimitConfig("PAY_GATEWAY_RATE_LIMIT"),
  perPayment: rateLimitConfig("PAY_PAYMENT_RATE_LIMIT")
}).pipe(
  Config.map((limits): RateLimitsSettings => {
    const on: { -readonly [K in keyof RateLimitsSettings]: RateLimitSettings } = {}
    if (limits.perApiKey !== undefined) on.perApiKey = limits.perApiKey
    if (limits.perWalletApp !== undefined) on.perWalletApp = limits.perWalletApp
    if (limits.perPayment !== undefined) on.perPayment = limits.perPayment
    return on
  })
)

export const standaloneConfig: Config.Config<StandaloneConfig> = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.integer("PORT").pipe(
    Config.withDefault(8080),
    Config.validate({
      message: "PORT must be from 0 to 65535 (0 picks a free port)",
      validation: (n) => n >= 0 && n <= 65535
    })
  ),
  database,
  bootstrapApiKey,
  secret,
  previousSecrets,
  publicUrl,
  basePath,
  maxBodyBytes: Config.integer("PAY_MAX_BODY_BYTES").pipe(
    Config.withDefault(256 * 1024),
    Config.validate({
      message: "PAY_MAX_BODY_BYTES must be from 1024 to 104857600",
      validation: (n) => n >= 1024 && n <= 100 * 1024 * 1024
    })
  ),
  paymentLifetimeMs: Config.integer("PAY_PAYMENT_LIFETIME_SECONDS").pipe(
    Config.withDefault(300),
    Config.validate({
      message: "PAY_PAYMENT_LIFETIME_SECONDS must be from 10 to 2592000 (30 days)",
      validation: (n) => n >= 10 && n <= 2_592_000
    }),
    Config.map((seconds) => seconds * 1000)
  ),
  payConfigPath: Config.option(Config.nonEmptyString("PAY_CONFIG")),
  quoteLockMs: Config.option(
    Config.integer("PAY_QUOTE_LOCK_SECONDS").pipe(
      Config.validate({
        message: "PAY_QUOTE_LOCK_SECONDS must be from 1 to 3600",
        validation: (n) => n >= 1 && n <= 3600
      }),
      Config.map((seconds) => seconds * 1000)
    )
  ),
  buyerDataRetentionMs: Config.integer("PAY_BUYER_DATA_RETENTION_DAYS").pipe(
    Config.withDefault(90),
    Config.validate({
      message: "PAY_BUYER_DATA_RETENTION_DAYS must be a whole number of days from 1 to 3650",
      validation: (n) => n >= 1 && n <= 3650
    }),
    Config.map((days) => days * 24 * 60 * 60_000)
  ),
  maxLongPollMs: Config.integer("PAY_MAX_LONG_POLL_MS").pipe(
    Config.withDefault(30_000),
    Config.validate({
      message: "PAY_MAX_LONG_POLL_MS must be from 0 to 120000",
      validation: (n) => n >= 0 && n <= 120_000
    })
  ),
  maxHeldLongPolls: Config.integer("PAY_MAX_HELD_LONG_POLLS").pipe(
    Config.withDefault(20_000),
    Config.validate({
      message: "PAY_MAX_HELD_LONG_POLLS must be from 1 to 10000000",
      validation: (n) => n >= 1 && n <= 10_000_000
    })
  ),
  expirySweepMs: Config.string("PAY_EXPIRY_SWEEP_SECONDS").pipe(
    Config.withDefault(String(defaultPaymentsSettings.expirySweepMs / 1000)),
    Config.mapOrFail((text) => {
      const ms = parseExpirySweepSeconds(text)
      return ms === undefined
        ? Either.left(ConfigError.InvalidData(["PAY_EXPIRY_SWEEP_SECONDS"], EXPIRY_SWEEP_MESSAGE))
        : Either.right(ms)
    })
  ),
  maxConnections: Config.integer("PAY_MAX_CONNECTIONS").pipe(
    Config.withDefault(25_000),
    Config.validate({
      message: "PAY_MAX_CONNECTIONS must be from 1 to 10000000",
      validation: (n) => n >= 1 && n <= 10_000_000
    })
  ),
  webhookRetryScheduleMs: Config.option(
    Config.string("PAY_WEBHOOK_RETRY_SCHEDULE").pipe(
      Config.mapOrFail((text) => {
        const schedule = parseRetrySchedule(text)
        return schedule === undefined
          ? Either.left(
              ConfigError.InvalidData(["PAY_WEBHOOK_RETRY_SCHEDULE"], RETRY_SCHEDULE_MESSAGE)
            )
          : Either.right(schedule)
      })
    )
  ),
  webhookLeaseMs: Config.option(
    Config.integer("PAY_WEBHOOK_LEASE_SECONDS").pipe(
      Config.validate({
        message: "PAY_WEBHOOK_LEASE_SECONDS must be from 2 to 600",
        validation: (n) => n >= 2 && n <= 600
      }),
      Config.map((seconds) => seconds * 1000)
    )
  ),
  rateLimits,
  metrics: Config.string("PAY_METRICS").pipe(
    Config.withDefault("1"),
    Config.validate({
      message: "PAY_METRICS must be 1 (/metrics served, the default) or 0 (off)",
      validation: (s) => s === "0" || s === "1"
    }),
    Config.map((s) => s === "1")
  ),
  telemetry: telemetryConfig,
  sandboxOnAnyAddress: Config.string("PAY_SANDBOX").pipe(
    Config.withDefault("0"),
    Config.validate({
      message:
        "PAY_SANDBOX must be 1 (the sandbox on any address) or 0 (loopback only, the default)",
      validation: (s) => s === "0" || s === "1"
    }),
    Config.map((s) => s === "1")
  ),
  sqliteReadWorker: Config.string("PAY_SQLITE_READ_WORKER").pipe(
    Config.withDefault("1"),
    Config.validate({
      message: "PAY_SQLITE_READ_WORKER must be 1 (on, the default) or 0 (off)",
      validation: (s) => s === "0" || s === "1"
    }),
    Config.map((s) => s === "1")
  ),
  logLevel: Config.string("PAY_LOG_LEVEL").pipe(
    Config.withDefault("info"),
    Config.validate({
      message: `PAY_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (default info)`,
      validation: isLogLevelName
    })
  ),
  logFormat: Config.string("PAY_LOG_FORMAT").pipe(
    // Read by a person at a terminal, by a collector anywhere else.
    Config.withDefault(process.stdout.isTTY ? "pretty" : "json"),
    Config.validate({
      message: "PAY_LOG_FORMAT must be json or pretty (default pretty on a terminal, else json)",
      validation: isLogFormat
    })
  ),
  fetchAllowPrivate: Config.string("PAY_FETCH_ALLOW_PRIVATE").pipe(
    Config.withDefault("0"),
    Config.validate({
      message: "PAY_FETCH_ALLOW_PRIVATE must be 1 (on) or 0 (off, the default)",
      validation: (s) => s === "0" || s === "1"
    }),
    Config.map((s) => s === "1")
  )
}).pipe(
  Config.map(({ publicUrl, basePath, ...rest }) => {
    const url = Option.getOrElse(publicUrl, () => defaultPublicUrl(rest.host, rest.port)).replace(
      /\/+$/,
      ""
    )
    return {
      ...rest,
      publicUrl: url,
      basePath: Option.getOrElse(basePath, () => new URL(url).pathname.replace(/\/+$/, ""))
    }
  })
)
