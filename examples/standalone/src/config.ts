/**
 * The standalone server's settings, from the environment. Every variable is
 * listed in the README.
 */
import {
  ApiKey,
  decodeEngineSecret,
  defaultPaymentsSettings,
  GatewaySettings,
  HttpSettings,
  isBasePath,
  isLogFormat,
  isLogLevelName,
  LOG_LEVELS,
  type LogFormat,
  type LogLevelName,
  PaymentsSettings,
  parseOtlpHeaders,
  RateLimitSettings,
  type RateLimitsSettings,
  RetentionSettings,
  type TelemetrySettings,
  WebhookDeliverySettings
} from "@pay/core"
import { Config, ConfigError, Data, Either, Option, Schema } from "effect"
import { type EngineSetting, engineTakes, maxItemsOf, rangeInUnits } from "./engineSettings.js"

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
  /**
   * The settings below that the engine owns are undefined when not given: the
   * engine's schema applies its default (engineSettings.ts).
   */
  readonly maxBodyBytes?: number | undefined
  /** Lifetime of a payment created without `expiresAt`. */
  readonly paymentLifetimeMs?: number | undefined
  /** The longest a status request is held (`maxPollMs` above it is capped). */
  readonly maxLongPollMs?: number | undefined
  /** PAY_MAX_HELD_LONG_POLLS: status long-polls held at once; one more is 503 with Retry-After. */
  readonly maxHeldLongPolls?: number | undefined
  /** PAY_MAX_HELD_PUBLIC_LONG_POLLS: public (payment link) status long-polls held at once. */
  readonly maxHeldPublicLongPolls?: number | undefined
  /** PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT: public status long-polls held at once on one payment. */
  readonly maxHeldLongPollsPerPayment?: number | undefined
  /** PAY_EXPIRY_SWEEP_SECONDS: how often the expiry sweep records the payments whose time passed. */
  readonly expirySweepMs?: number | undefined
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
  readonly buyerDataRetentionMs?: number | undefined
  /**
   * PAY_EVENT_RETENTION_DAYS, PAY_WEBHOOK_DELIVERY_RETENTION_DAYS,
   * PAY_IDEMPOTENCY_RETENTION_DAYS, PAY_OPTION_RETENTION_DAYS,
   * PAY_AUDIT_RETENTION_DAYS, PAY_PURGE_INTERVAL_SECONDS: the engine's
   * `retention`, only those given (in its milliseconds).
   */
  readonly retention?: Partial<typeof RetentionSettings.Encoded>
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
  /** PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: the most live webhook endpoints one partner may have. */
  readonly webhookMaxEndpointsPerPartner?: number | undefined
  /** PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: the most deliveries in flight to one partner's endpoints. */
  readonly webhookInFlightPerPartner?: number | undefined
  /**
   * PAY_RATE_LIMIT_*, PAY_PARTNER_RATE_LIMIT_*, PAY_GATEWAY_RATE_LIMIT_*,
   * PAY_PAYMENT_RATE_LIMIT_*: the limits per partner API key, per partner,
   * per wallet app and per payment; only those set.
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

const DAY_MS = 86_400_000

/** The variables that are engine settings, each with its setting and unit. */
export const ENGINE_VARIABLES = {
  PAY_MAX_BODY_BYTES: { fields: HttpSettings.fields, key: "maxBodyBytes", perUnit: 1 },
  PAY_PAYMENT_LIFETIME_SECONDS: {
    fields: PaymentsSettings.fields,
    key: "paymentLifetimeMs",
    perUnit: 1000
  },
  PAY_MAX_LONG_POLL_MS: { fields: PaymentsSettings.fields, key: "maxLongPollMs", perUnit: 1 },
  PAY_MAX_HELD_LONG_POLLS: { fields: PaymentsSettings.fields, key: "maxHeldLongPolls", perUnit: 1 },
  PAY_MAX_HELD_PUBLIC_LONG_POLLS: {
    fields: PaymentsSettings.fields,
    key: "maxHeldPublicLongPolls",
    perUnit: 1
  },
  PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT: {
    fields: PaymentsSettings.fields,
    key: "maxHeldLongPollsPerPayment",
    perUnit: 1
  },
  PAY_EXPIRY_SWEEP_SECONDS: {
    fields: PaymentsSettings.fields,
    key: "expirySweepMs",
    perUnit: 1000
  },
  PAY_QUOTE_LOCK_SECONDS: { fields: GatewaySettings.fields, key: "quoteLockMs", perUnit: 1000 },
  PAY_BUYER_DATA_RETENTION_DAYS: {
    fields: GatewaySettings.fields,
    key: "buyerDataRetentionMs",
    perUnit: 86_400_000
  },
  PAY_WEBHOOK_RETRY_SCHEDULE: {
    fields: WebhookDeliverySettings.fields,
    key: "retryScheduleMs",
    perUnit: 1000
  },
  PAY_WEBHOOK_LEASE_SECONDS: {
    fields: WebhookDeliverySettings.fields,
    key: "leaseMs",
    perUnit: 1000
  },
  PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: {
    fields: WebhookDeliverySettings.fields,
    key: "maxEndpointsPerPartner",
    perUnit: 1
  },
  PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: {
    fields: WebhookDeliverySettings.fields,
    key: "perPartner",
    perUnit: 1
  },
  PAY_EVENT_RETENTION_DAYS: { fields: RetentionSettings.fields, key: "eventsMs", perUnit: DAY_MS },
  PAY_WEBHOOK_DELIVERY_RETENTION_DAYS: {
    fields: RetentionSettings.fields,
    key: "webhookDeliveriesMs",
    perUnit: DAY_MS
  },
  PAY_IDEMPOTENCY_RETENTION_DAYS: {
    fields: RetentionSettings.fields,
    key: "idempotencyKeysMs",
    perUnit: DAY_MS
  },
  PAY_OPTION_RETENTION_DAYS: {
    fields: RetentionSettings.fields,
    key: "expiredOptionsMs",
    perUnit: DAY_MS
  },
  PAY_AUDIT_RETENTION_DAYS: {
    fields: RetentionSettings.fields,
    key: "auditTrailMs",
    perUnit: DAY_MS
  },
  PAY_PURGE_INTERVAL_SECONDS: {
    fields: RetentionSettings.fields,
    key: "purgeEveryMs",
    perUnit: 1000
  },
  PAY_RATE_LIMIT_PER_SECOND: {
    fields: RateLimitSettings.from.fields,
    key: "perSecond",
    perUnit: 1
  },
  PAY_RATE_LIMIT_BURST: { fields: RateLimitSettings.from.fields, key: "burst", perUnit: 1 }
} satisfies Readonly<Record<string, EngineSetting>>

const range = (name: keyof typeof ENGINE_VARIABLES) => rangeInUnits(ENGINE_VARIABLES[name])

/**
 * PAY_PAYMENT_LIFETIME_SECONDS's floor is the standalone's own, deliberately
 * above the engine's 1 s (a second check, not the engine's range repeated): a
 * server's default lifetime under 10 s would leave a buyer no time to pay,
 * while an embedder's tests may want 1 s. Its ceiling is the engine's.
 */
const MIN_PAYMENT_LIFETIME_SECONDS = 10

/**
 * PAY_WEBHOOK_LEASE_SECONDS's floor is the standalone's own, above the
 * engine's 1 s: the variable is documented and refused below 2 (2 to 600,
 * "keep it above the 15 s an attempt may take"), and a start that worked must
 * not change what it refuses. Its ceiling is the engine's.
 */
const MIN_WEBHOOK_LEASE_SECONDS = 2

/** The retry schedule's rule, from the engine's: how many waits, each from and to (in seconds). */
const retrySchedule = {
  ...range("PAY_WEBHOOK_RETRY_SCHEDULE"),
  most: maxItemsOf(ENGINE_VARIABLES.PAY_WEBHOOK_RETRY_SCHEDULE)
}

/** The expiry sweep's range in seconds (0.1 to 3600), and its default: the engine's. */
const expirySweep = (() => {
  const { from, to } = rangeInUnits({ ...ENGINE_VARIABLES.PAY_EXPIRY_SWEEP_SECONDS, perUnit: 1 })
  return {
    from: from / 1000,
    to: to / 1000,
    byDefault: defaultPaymentsSettings.expirySweepMs / 1000
  }
})()

/** The most a rate or a burst may be (the engine's: a million requests). */
const MAX_RATE_LIMIT = range("PAY_RATE_LIMIT_PER_SECOND").to

/** A retention in whole days, as the engine's range says in days. */
const days = (name: keyof typeof ENGINE_VARIABLES) =>
  `a whole number of days from ${range(name).from} to ${range(name).to}`

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
  PAY_MAX_BODY_BYTES: `a whole number from ${range("PAY_MAX_BODY_BYTES").from} to ${range("PAY_MAX_BODY_BYTES").to}`,
  PAY_PAYMENT_LIFETIME_SECONDS: `a whole number from ${MIN_PAYMENT_LIFETIME_SECONDS} to ${range("PAY_PAYMENT_LIFETIME_SECONDS").to} (30 days)`,
  PAY_CONFIG: "the path of the networks file (JSON)",
  PAY_QUOTE_LOCK_SECONDS: `a whole number from ${range("PAY_QUOTE_LOCK_SECONDS").from} to ${range("PAY_QUOTE_LOCK_SECONDS").to}`,
  PAY_BUYER_DATA_RETENTION_DAYS: `a whole number of days from ${range("PAY_BUYER_DATA_RETENTION_DAYS").from} to ${range("PAY_BUYER_DATA_RETENTION_DAYS").to}`,
  PAY_EVENT_RETENTION_DAYS: days("PAY_EVENT_RETENTION_DAYS"),
  PAY_WEBHOOK_DELIVERY_RETENTION_DAYS: days("PAY_WEBHOOK_DELIVERY_RETENTION_DAYS"),
  PAY_IDEMPOTENCY_RETENTION_DAYS: days("PAY_IDEMPOTENCY_RETENTION_DAYS"),
  PAY_OPTION_RETENTION_DAYS: days("PAY_OPTION_RETENTION_DAYS"),
  PAY_AUDIT_RETENTION_DAYS: `0 (never purged) or ${days("PAY_AUDIT_RETENTION_DAYS")}`,
  PAY_PURGE_INTERVAL_SECONDS: `a whole number of seconds from ${range("PAY_PURGE_INTERVAL_SECONDS").from} to ${range("PAY_PURGE_INTERVAL_SECONDS").to}`,
  PAY_MAX_LONG_POLL_MS: `a whole number from ${range("PAY_MAX_LONG_POLL_MS").from} to ${range("PAY_MAX_LONG_POLL_MS").to}`,
  PAY_MAX_HELD_LONG_POLLS: `a whole number from ${range("PAY_MAX_HELD_LONG_POLLS").from} to ${range("PAY_MAX_HELD_LONG_POLLS").to}`,
  PAY_MAX_HELD_PUBLIC_LONG_POLLS: `a whole number from ${range("PAY_MAX_HELD_PUBLIC_LONG_POLLS").from} to ${range("PAY_MAX_HELD_PUBLIC_LONG_POLLS").to}`,
  PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT: `a whole number from ${range("PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT").from} to ${range("PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT").to}`,
  PAY_MAX_CONNECTIONS: "a whole number from 1 to 10000000",
  PAY_EXPIRY_SWEEP_SECONDS: `a number of seconds from ${expirySweep.from} to ${expirySweep.to}, at most 3 decimals (e.g. 0.5)`,
  PAY_WEBHOOK_RETRY_SCHEDULE: `up to ${retrySchedule.most} whole numbers of seconds from ${retrySchedule.from} to ${retrySchedule.to}, comma-separated (e.g. 5,300,1800)`,
  PAY_WEBHOOK_LEASE_SECONDS: `a whole number from ${MIN_WEBHOOK_LEASE_SECONDS} to ${range("PAY_WEBHOOK_LEASE_SECONDS").to}`,
  PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: `a whole number from ${range("PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER").from} to ${range("PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER").to}`,
  PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: `a whole number from ${range("PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER").from} to ${range("PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER").to}`,
  PAY_RATE_LIMIT_PER_SECOND: `a whole number from 0 (off) to ${MAX_RATE_LIMIT}`,
  PAY_RATE_LIMIT_BURST: `a whole number from 0 to ${MAX_RATE_LIMIT}`,
  PAY_PARTNER_RATE_LIMIT_PER_SECOND: `a whole number from 0 (off) to ${MAX_RATE_LIMIT}; unset: as PAY_RATE_LIMIT_PER_SECOND`,
  PAY_PARTNER_RATE_LIMIT_BURST: `a whole number from 0 to ${MAX_RATE_LIMIT}`,
  PAY_GATEWAY_RATE_LIMIT_PER_SECOND: `a whole number from 0 (off) to ${MAX_RATE_LIMIT}`,
  PAY_GATEWAY_RATE_LIMIT_BURST: `a whole number from 0 to ${MAX_RATE_LIMIT}`,
  PAY_PAYMENT_RATE_LIMIT_PER_SECOND: `a whole number from 0 (off) to ${MAX_RATE_LIMIT}`,
  PAY_PAYMENT_RATE_LIMIT_BURST: `a whole number from 0 to ${MAX_RATE_LIMIT}`,
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

const RETRY_SCHEDULE_MESSAGE = `PAY_WEBHOOK_RETRY_SCHEDULE must be ${SETTINGS.PAY_WEBHOOK_RETRY_SCHEDULE}`

/**
 * "5, 300,1800" → [5000, 300000, 1800000], or undefined when it is not a
 * schedule the engine takes (its `retryScheduleMs`: how many waits, each's range).
 */
export const parseRetrySchedule = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(",").map((p) => p.trim())
  if (!parts.every((p) => /^\d{1,16}$/.test(p))) return undefined
  const schedule = parts.map((p) => Number(p) * 1000)
  return engineTakes(ENGINE_VARIABLES.PAY_WEBHOOK_RETRY_SCHEDULE, schedule) ? schedule : undefined
}

const EXPIRY_SWEEP_MESSAGE = `PAY_EXPIRY_SWEEP_SECONDS must be a number of seconds from ${expirySweep.from} to ${expirySweep.to}, at most 3 decimals (e.g. 0.5; default ${expirySweep.byDefault})`

/**
 * "0.5" → 500: PAY_EXPIRY_SWEEP_SECONDS in milliseconds, or undefined when it
 * is not a number of seconds with at most 3 decimals that the engine takes
 * (its `expirySweepMs`, 100 to 3,600,000, in seconds as the other durations are).
 */
export const parseExpirySweepSeconds = (text: string): number | undefined => {
  const trimmed = text.trim()
  if (!/^\d{1,7}(\.\d{1,3})?$/.test(trimmed)) return undefined
  const ms = Math.round(Number(trimmed) * 1000)
  return engineTakes(ENGINE_VARIABLES.PAY_EXPIRY_SWEEP_SECONDS, ms) ? ms : undefined
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

/** A whole number of requests (the engine checks its range), or undefined. */
const parseRateLimitNumber = (text: string): number | undefined => {
  const trimmed = text.trim()
  return /^\d{1,16}$/.test(trimmed) ? Number(trimmed) : undefined
}

/**
 * One limit from `${prefix}_PER_SECOND` and `${prefix}_BURST`: off (undefined)
 * unless the rate is above 0. The engine's `RateLimitSettings` checks both
 * (each's range, no burst without a rate), and its default applies to a burst
 * not given (the rate).
 */
export const rateLimitConfig = (prefix: string): Config.Config<RateLimitSettings | undefined> => {
  const rateName = `${prefix}_PER_SECOND`
  const burstName = `${prefix}_BURST`
  const number = (name: string, key: "perSecond" | "burst", message: string) =>
    Config.option(Config.string(name)).pipe(
      Config.mapOrFail((given) => {
        if (Option.isNone(given)) return Either.right(undefined)
        const n = parseRateLimitNumber(given.value)
        return n === undefined || !engineTakes({ ...ENGINE_VARIABLES.PAY_RATE_LIMIT_BURST, key }, n)
          ? Either.left(ConfigError.InvalidData([name], message))
          : Either.right(n)
      })
    )
  return Config.all([
    number(
      rateName,
      "perSecond",
      `${rateName} must be a whole number of requests a second from 0 (off, the default) to ${MAX_RATE_LIMIT}`
    ),
    number(
      burstName,
      "burst",
      `${burstName} must be a whole number of requests from 0 to ${MAX_RATE_LIMIT} (0 or unset: as many as ${rateName})`
    )
  ]).pipe(
    Config.mapOrFail(([perSecond, burst]) => {
      const limit = { perSecond: perSecond ?? 0, ...(burst === undefined ? {} : { burst }) }
      if (Either.isLeft(Schema.decodeUnknownEither(RateLimitSettings)(limit))) {
        // The engine's one refusal of two numbers in range: a burst without a rate.
        return Either.left(
          ConfigError.InvalidData(
            [burstName],
            `${burstName} is set but ${rateName} is 0 (off): set ${rateName} too`
          )
        )
      }
      return Either.right(limit.perSecond === 0 ? undefined : limit)
    })
  )
}

/**
 * The partner's limit (all its keys together): unset, the engine's default
 * (the same as one key's); set to 0, off (`{ perSecond: 0 }`, which the
 * engine tells apart from absent), so only each key's own limit holds.
 */
const partnerRateLimit = Config.all([
  rateLimitConfig("PAY_PARTNER_RATE_LIMIT"),
  Config.option(Config.string("PAY_PARTNER_RATE_LIMIT_PER_SECOND"))
]).pipe(
  Config.map(([limit, given]): RateLimitSettings | undefined =>
    limit === undefined && Option.isSome(given) ? { perSecond: 0 } : limit
  )
)

/** The four limits, each off unless its rate is set (the partner's: see above). */
const rateLimits = Config.all({
  perApiKey: rateLimitConfig("PAY_RATE_LIMIT"),
  perPartner: partnerRateLimit,
  perWalletApp: rateLimitConfig("PAY_GATEWAY_RATE_LIMIT"),
  perPayment: rateLimitConfig("PAY_PAYMENT_RATE_LIMIT")
}).pipe(
  Config.map((limits): RateLimitsSettings => {
    const on: { -readonly [K in keyof RateLimitsSettings]: RateLimitSettings } = {}
    if (limits.perApiKey !== undefined) on.perApiKey = limits.perApiKey
    if (limits.perPartner !== undefined) on.perPartner = limits.perPartner
    if (limits.perWalletApp !== undefined) on.perWalletApp = limits.perWalletApp
    if (limits.perPayment !== undefined) on.perPayment = limits.perPayment
    return on
  })
)

/**
 * A whole-number variable that is an engine setting: unset, undefined (the
 * engine's default applies); set, converted to the engine's unit and checked
 * by the engine's schema, a refusal naming the variable and the engine's range
 * in the variable's unit (`PAY_QUOTE_LOCK_SECONDS must be from 1 to 3600`).
 * `floor` is a variable's own minimum above the engine's, checked first;
 * `note` follows the range in the refusal.
 */
const engineWholeNumber = (
  name: keyof typeof ENGINE_VARIABLES,
  { rule = "", floor, note = "" }: { rule?: string; floor?: number; note?: string } = {}
): Config.Config<number | undefined> => {
  const setting = ENGINE_VARIABLES[name]
  const engine = range(name)
  const from = floor ?? engine.from
  return Config.option(Config.integer(name)).pipe(
    Config.mapOrFail((given) =>
      Option.isNone(given)
        ? Either.right(undefined)
        : given.value >= from && engineTakes(setting, given.value * setting.perUnit)
          ? Either.right(given.value * setting.perUnit)
          : Either.left(
              ConfigError.InvalidData(
                [name],
                `${name} must be ${rule}from ${from} to ${engine.to}${note}`
              )
            )
    )
  )
}

/**
 * PAY_AUDIT_RETENTION_DAYS: unset or 0, the engine never purges the audit
 * trail (its default); else days in the engine's range (a year or more).
 */
const auditRetention: Config.Config<number | undefined> = Config.option(
  Config.integer("PAY_AUDIT_RETENTION_DAYS")
).pipe(
  Config.mapOrFail((given) => {
    if (Option.isNone(given) || given.value === 0) return Either.right(undefined)
    const ms = given.value * DAY_MS
    return engineTakes(ENGINE_VARIABLES.PAY_AUDIT_RETENTION_DAYS, ms)
      ? Either.right(ms)
      : Either.left(
          ConfigError.InvalidData(
            ["PAY_AUDIT_RETENTION_DAYS"],
            `PAY_AUDIT_RETENTION_DAYS must be ${SETTINGS.PAY_AUDIT_RETENTION_DAYS}`
          )
        )
  })
)

/** The engine's `retention` from its variables: only those given, so its defaults apply. */
const retention: Config.Config<Partial<typeof RetentionSettings.Encoded>> = Config.all({
  eventsMs: engineWholeNumber("PAY_EVENT_RETENTION_DAYS", { rule: "a whole number of days " }),
  webhookDeliveriesMs: engineWholeNumber("PAY_WEBHOOK_DELIVERY_RETENTION_DAYS", {
    rule: "a whole number of days "
  }),
  idempotencyKeysMs: engineWholeNumber("PAY_IDEMPOTENCY_RETENTION_DAYS", {
    rule: "a whole number of days "
  }),
  expiredOptionsMs: engineWholeNumber("PAY_OPTION_RETENTION_DAYS", {
    rule: "a whole number of days "
  }),
  auditTrailMs: auditRetention,
  purgeEveryMs: engineWholeNumber("PAY_PURGE_INTERVAL_SECONDS", {
    rule: "a whole number of seconds "
  })
}).pipe(
  Config.map((given) =>
    Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
  )
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
  maxBodyBytes: engineWholeNumber("PAY_MAX_BODY_BYTES"),
  // The standalone's own floor (MIN_PAYMENT_LIFETIME_SECONDS), then the engine's check.
  paymentLifetimeMs: engineWholeNumber("PAY_PAYMENT_LIFETIME_SECONDS", {
    floor: MIN_PAYMENT_LIFETIME_SECONDS,
    note: " (30 days)"
  }),
  payConfigPath: Config.option(Config.nonEmptyString("PAY_CONFIG")),
  quoteLockMs: engineWholeNumber("PAY_QUOTE_LOCK_SECONDS").pipe(Config.map(Option.fromNullable)),
  buyerDataRetentionMs: engineWholeNumber("PAY_BUYER_DATA_RETENTION_DAYS", {
    rule: "a whole number of days "
  }),
  retention,
  maxLongPollMs: engineWholeNumber("PAY_MAX_LONG_POLL_MS"),
  maxHeldLongPolls: engineWholeNumber("PAY_MAX_HELD_LONG_POLLS"),
  maxHeldPublicLongPolls: engineWholeNumber("PAY_MAX_HELD_PUBLIC_LONG_POLLS"),
  maxHeldLongPollsPerPayment: engineWholeNumber("PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT"),
  expirySweepMs: Config.option(Config.string("PAY_EXPIRY_SWEEP_SECONDS")).pipe(
    Config.mapOrFail((given) => {
      if (Option.isNone(given)) return Either.right(undefined)
      const ms = parseExpirySweepSeconds(given.value)
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
  // The standalone's own floor (MIN_WEBHOOK_LEASE_SECONDS), then the engine's check.
  webhookLeaseMs: engineWholeNumber("PAY_WEBHOOK_LEASE_SECONDS", {
    floor: MIN_WEBHOOK_LEASE_SECONDS
  }).pipe(Config.map(Option.fromNullable)),
  webhookMaxEndpointsPerPartner: engineWholeNumber("PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER"),
  webhookInFlightPerPartner: engineWholeNumber("PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER"),

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
