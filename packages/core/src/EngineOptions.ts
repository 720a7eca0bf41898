/**
 * What an embedder gives the engine, and the one check of it at start: every
 * wrong or unknown option is named in a single error, before anything opens.
 */
import { Data, Effect, Either, Layer, ParseResult, Schema } from "effect"
import {
  MAX_EXPIRY_SWEEP_MS,
  MAX_PAYMENT_LIFETIME_MS,
  MIN_EXPIRY_SWEEP_MS,
  type PayConfigShape
} from "./Config.js"
import type { Chain } from "./chain/Chain.js"
import type { ChainWorkSettings } from "./chainwork/ChainWorkConfig.js"
import type { EnginePages } from "./EnginePages.js"
import { decodeFeeSchedule, type FeeSchedule } from "./fees/Fees.js"
import type { GatewaySettings } from "./gateway/GatewayConfig.js"
import { DEFAULT_MAX_BODY_BYTES } from "./http/Engine.js"
import type { Route } from "./http/Route.js"
import type { LogoCapture } from "./merchants/Logo.js"
import {
  isLogFormat,
  isLogLevelName,
  LOG_FORMATS,
  LOG_LEVELS,
  type LoggingSettings
} from "./observability/Logging.js"
import type { PaymentEvents } from "./payments/PaymentEvents.js"
import type { Prices } from "./pricing/Pricing.js"
import type { RateLimitsSettings } from "./ratelimit/RateLimitConfig.js"
import type { PayStorage } from "./Storage.js"
import { decodeEngineSecret } from "./secrets/EngineSecret.js"
import type { TokenRegistry } from "./shared/TokenRegistry.js"
import type { TelemetrySettings } from "./telemetry/Telemetry.js"
import type { WebhookUrlGuard } from "./webhooks/UrlGuard.js"
import type { WebhookSender } from "./webhooks/WebhookSender.js"
import type { WebhookDeliverySettings } from "./webhooks/WebhookWorkConfig.js"

/** The engine's settings: plain values, the same on every instance of one deployment. */
export interface PaymentEngineSettings {
  /**
   * The engine's full external URL, with the path it is mounted under
   * (`https://shop.example/pay`): buyer links are `{publicUrl}/pay_<id>`,
   * data-collection pages `{publicUrl}/collect/…`.
   */
  readonly publicUrl: string
  /**
   * The path prefix requests reach the engine with. Default: `publicUrl`'s path
   * (`/pay` above). `""` when a proxy in front strips the prefix.
   */
  readonly basePath?: string
  /** Request bodies larger than this are refused with 413. Default 256 KiB. */
  readonly maxBodyBytes?: number
  /** Lifetime of a payment created without `expiresAt`. Default 5 minutes. */
  readonly paymentLifetimeMs?: number
  /** The longest a status request is held (`maxPollMs` above it is capped). Default 30 s. */
  readonly maxLongPollMs?: number
  /**
   * The most status long-polls this engine holds at once; one more is answered
   * 503 `too_many_long_polls` with `Retry-After`. Default 20,000.
   */
  readonly maxHeldLongPolls?: number
  /**
   * How often the expiry sweep runs: it records each payment whose time has
   * passed unpaid as expired (with its `payment.expired` event), so an expiry
   * is written at most this long after it is due. Every instance sweeps; each
   * expiry is recorded once. Default 5,000 ms; 100 to 3,600,000.
   */
  readonly expirySweepMs?: number
  /** Quote locks and the data-collection policy of the wallet gateway. */
  readonly gateway?: GatewaySettings
  /** The engine's fees, taken from each succeeded payment before it is settled. */
  readonly fees?: FeeSchedule
  /** How the durable chain work polls and leases its jobs. */
  readonly chainWork?: ChainWorkSettings
  /** How webhooks are claimed, sent and retried (the retry schedule, the limits). */
  readonly webhookDelivery?: WebhookDeliverySettings
  /**
   * Rate limits, each a token bucket: `perApiKey` for partner API requests
   * (by the key they authenticate with), `perWalletApp` and `perPayment` for
   * the wallet gateway. Each is `{ perSecond, burst? }` in whole requests;
   * `burst` defaults to `perSecond`. Default: all off. A request past a limit
   * is answered 429 `rate_limited` with `Retry-After`. Instances sharing a
   * database share their buckets, synced at most once a second.
   */
  readonly rateLimits?: RateLimitsSettings
  /**
   * Whether this engine runs the background work (expiry sweep, chain jobs)
   * itself. Default true; `false` on a web tier whose work runs in worker
   * processes (`runPaymentWorkers`).
   */
  readonly workers?: boolean
  /**
   * The engine's secret (`PAY_SECRET`): 32 or more random bytes, base64, the
   * same on every instance. Default: one generated at the first start and
   * kept in the database. Webhook signing secrets are stored encrypted under it.
   */
  readonly secret?: string
  /**
   * Earlier engine secrets (`PAY_SECRET_PREVIOUS`), each like `secret`: they
   * still open what was sealed under them, and never seal. For a rotation:
   * drop them once `resealStoredValues` (`npm run pay -- secret reseal`) has
   * re-sealed the stored values and 48 hours have passed (idempotent replays).
   * Default none. A secret kept in the database opens too when `secret` is set.
   */
  readonly previousSecrets?: ReadonlyArray<string>
  /**
   * `GET /metrics` in the Prometheus text format (counts, durations and
   * levels; no ids, keys or amounts). Default true; false answers it 404.
   */
  readonly metrics?: boolean
  /**
   * Export a span per request and the metrics to an OpenTelemetry collector
   * over OTLP/HTTP (`{ otlpEndpoint: "http://collector:4318" }`). Default: off.
   */
  readonly telemetry?: TelemetrySettings
  /**
   * The engine's log lines (requests, payments, chain work, webhooks): `level`
   * trace, debug, info, warning, error or none (default info), `format` json
   * (one object per line, default) or pretty. `false`: the engine leaves the
   * current Effect logger and level alone (an embedder's own, e.g. `Logger.replace`
   * around `makePaymentEngine`).
   */
  readonly logging?: LoggingSettings | false
}

/** The settings and the parts the engine is built from. */
export interface PaymentEngineOptions<E = never> extends PaymentEngineSettings {
  /** Every storage port: `@pay/storage-sqlite`'s or `@pay/storage-postgres`'s layer. */
  readonly storage: Layer.Layer<PayStorage, E>
  /** Known tokens and networks; default: well-known stablecoins (`defaultTokenRegistry`). */
  readonly tokens?: Layer.Layer<TokenRegistry>
  /** Where payment status changes travel; default: within this process. */
  readonly events?: Layer.Layer<PaymentEvents, E>
  /** The networks wallets pay on (`makeEvmChain`); default: none, so no payment options. */
  readonly chain?: Layer.Layer<Chain, E>
  /** Fiat-to-token rates; default: each currency at 1:1 with itself only. */
  readonly prices?: Layer.Layer<Prices>
  /**
   * Fetches and checks merchant logos: `logoCaptureLayer()` of `@pay/logos`.
   * Default: none, and a merchant `iconUrl` is refused (`icon_unreachable`,
   * naming this option).
   */
  readonly logos?: Layer.Layer<LogoCapture, E>
  /**
   * Which webhook endpoint URLs may be registered: `webhookUrlGuardLayer()`
   * from `@pay/logos` (https://, public addresses). Default: https:// only,
   * the addresses unchecked at registration.
   */
  readonly webhookUrls?: Layer.Layer<WebhookUrlGuard, E>
  /**
   * Sends webhook deliveries: `webhookSenderLayer()` from `@pay/logos` (the
   * checked address is the one connected to, at every send). Default: the
   * runtime's `fetch`, no address check.
   */
  readonly webhookSender?: Layer.Layer<WebhookSender, E>
  /** More routes served beside the engine's own, under the same base path. */
  readonly routes?: ReadonlyArray<Route<never>>
  /**
   * Pages made from the engine's services, served after its API and before
   * `routes`: `checkoutPages` from `@pay/checkout` (the buyer's page at
   * `{publicUrl}/pay_<id>`, the data-collection pages at `{publicUrl}/collect/…`).
   * Default: none: those URLs answer 404.
   */
  readonly pages?: EnginePages
}

export interface OptionIssue {
  /** The option's path, e.g. `publicUrl` or `chainWork.leaseMs`. */
  readonly option: string
  readonly message: string
}

/** Options that cannot start an engine: every wrong one, named. */
export class PaymentEngineOptionsError extends Data.TaggedError("PaymentEngineOptionsError")<{
  readonly issues: ReadonlyArray<OptionIssue>
}> {
  override get message() {
    return `Invalid payment engine options:\n${this.issues.map((i) => `  - ${i.option}: ${i.message}`).join("\n")}`
  }
}

const int = (from: number, to: number, unit: string) => {
  const message = () => `must be a whole number of ${unit} from ${from} to ${to}`
  return Schema.Number.annotations({ message }).pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= from && n <= to, { message })
  )
}

const layer = (what: string) =>
  Schema.declare((u): u is Layer.Layer<never> => Layer.isLayer(u), {
    message: () => `must be a Layer (${what})`
  })

const isHttpUrl = (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)

const PublicUrl = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (!isHttpUrl(s)) return false
      const url = new URL(s)
      return url.search === "" && url.hash === "" && url.username === "" && url.password === ""
    },
    {
      message: () =>
        "must be an absolute http:// or https:// URL without query, fragment or credentials, e.g. https://shop.example/pay"
    }
  )
)

/** "" or a path like `/pay`: "/"-led segments of URL path characters, no trailing "/". */
export const isBasePath = (s: string): boolean =>
  s === "" || /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(s)

const BasePath = Schema.String.pipe(
  Schema.filter(isBasePath, {
    message: () => 'must be "" or a path like /pay (starting with "/", no trailing "/")'
  })
)

const EngineSecretText = Schema.String.annotations({
  message: () => "must be a string (base64)"
}).pipe(
  Schema.filter((s) =>
    Either.match(decodeEngineSecret(s), { onLeft: (m) => m, onRight: () => true })
  )
)

const RateLimit = Schema.Struct({
  perSecond: int(0, 1_000_000, "requests a second"),
  burst: Schema.optional(int(0, 1_000_000, "requests"))
})

const Settings = Schema.Struct({
  publicUrl: PublicUrl,
  basePath: Schema.optional(BasePath),
  maxBodyBytes: Schema.optional(int(1024, 100 * 1024 * 1024, "bytes")),
  paymentLifetimeMs: Schema.optional(int(1000, MAX_PAYMENT_LIFETIME_MS, "milliseconds")),
  maxLongPollMs: Schema.optional(int(0, 120_000, "milliseconds")),
  maxHeldLongPolls: Schema.optional(int(1, 10_000_000, "long-polls")),
  expirySweepMs: Schema.optional(int(MIN_EXPIRY_SWEEP_MS, MAX_EXPIRY_SWEEP_MS, "milliseconds")),
  gateway: Schema.optional(
    Schema.Struct({
      quoteLockMs: Schema.optional(int(100, 3_600_000, "milliseconds")),
      buyerDataRetentionMs: Schema.optional(int(86_400_000, 3650 * 86_400_000, "milliseconds")),
      collectData: Schema.optional(
        Schema.Struct({
          always: Schema.optional(Schema.Boolean),
          atLeast: Schema.optional(Schema.Array(Schema.Unknown))
        })
      )
    })
  ),
  fees: Schema.optional(Schema.Unknown),
  chainWork: Schema.optional(
    Schema.Struct({
      pollMs: Schema.optional(int(10, 60_000, "milliseconds")),
      leaseMs: Schema.optional(int(100, 600_000, "milliseconds")),
      concurrency: Schema.optional(int(1, 1000, "jobs")),
      backoffCapMs: Schema.optional(int(100, 3_600_000, "milliseconds")),
      stuckAfterMs: Schema.optional(int(1_000, 7 * 86_400_000, "milliseconds")),
      stuckAfterFailures: Schema.optional(int(1, 1_000_000, "failures"))
    })
  ),
  webhookDelivery: Schema.optional(
    Schema.Struct({
      pollMs: Schema.optional(int(10, 60_000, "milliseconds")),
      leaseMs: Schema.optional(int(1_000, 600_000, "milliseconds")),
      concurrency: Schema.optional(int(1, 1000, "deliveries")),
      perEndpoint: Schema.optional(int(1, 1000, "deliveries")),
      retryScheduleMs: Schema.optional(
        Schema.Array(int(0, 7 * 86_400_000, "milliseconds")).pipe(
          Schema.maxItems(50, { message: () => "must have at most 50 waits" })
        )
      ),
      disableAfterMs: Schema.optional(int(1_000, 90 * 86_400_000, "milliseconds")),
      timeoutMs: Schema.optional(int(100, 120_000, "milliseconds"))
    })
  ),
  rateLimits: Schema.optional(
    Schema.Struct({
      perApiKey: Schema.optional(RateLimit),
      perWalletApp: Schema.optional(RateLimit),
      perPayment: Schema.optional(RateLimit)
    })
  ),
  workers: Schema.optional(Schema.Boolean.annotations({ message: () => "must be true or false" })),
  secret: Schema.optional(EngineSecretText),
  previousSecrets: Schema.optional(
    Schema.Array(EngineSecretText).annotations({
      message: () => "must be an array of secrets (base64)"
    })
  ),
  metrics: Schema.optional(Schema.Boolean.annotations({ message: () => "must be true or false" })),
  telemetry: Schema.optional(
    Schema.Struct({
      otlpEndpoint: Schema.String.pipe(
        Schema.filter((s) => isHttpUrl(s) && new URL(s).search === "", {
          message: () =>
            "must be the collector's http:// or https:// OTLP base URL, e.g. http://127.0.0.1:4318"
        })
      ),
      serviceName: Schema.optional(
        Schema.String.pipe(
          Schema.filter((s) => s.trim() !== "" && s.length <= 256, {
            message: () => "must be a name of 1 to 256 characters"
          })
        )
      ),
      headers: Schema.optional(
        Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
          message: () => "must be an object of header names to string values"
        })
      ),
      exportIntervalMs: Schema.optional(int(100, 600_000, "milliseconds"))
    })
  ),
  // Checked on its own (loggingIssues): one line per wrong field, not one per literal.
  logging: Schema.optional(Schema.Unknown),
  storage: layer("every storage port, e.g. @pay/storage-sqlite's layer({ filename })"),
  tokens: Schema.optional(layer("a TokenRegistry")),
  events: Schema.optional(layer("PaymentEvents")),
  chain: Schema.optional(layer("a Chain, e.g. from makeEvmChain")),
  prices: Schema.optional(layer("Prices")),
  logos: Schema.optional(layer("a LogoCapture, e.g. @pay/logos's logoCaptureLayer()")),
  webhookSender: Schema.optional(layer("a WebhookSender, e.g. @pay/logos's webhookSenderLayer()")),
  webhookUrls: Schema.optional(
    layer("a WebhookUrlGuard, e.g. @pay/logos's webhookUrlGuardLayer()")
  ),
  routes: Schema.optional(
    Schema.Array(Schema.Unknown).annotations({ message: () => "must be an array of routes" })
  ),
  pages: Schema.optional(
    Schema.declare((u): u is EnginePages => Effect.isEffect(u), {
      message: () => "must be an Effect of routes, e.g. @pay/checkout's checkoutPages"
    })
  )
})

/** `logging`: false, or `{ level?, format? }` of the known values. */
const loggingIssues = (logging: unknown): ReadonlyArray<OptionIssue> => {
  if (logging === undefined || logging === false) return []
  if (typeof logging !== "object" || logging === null || Array.isArray(logging)) {
    return [{ option: "logging", message: "must be false or { level?, format? }" }]
  }
  const found: Array<OptionIssue> = []
  for (const [key, value] of Object.entries(logging)) {
    if (key === "level") {
      if (value !== undefined && !isLogLevelName(value)) {
        found.push({ option: "logging.level", message: `must be one of ${LOG_LEVELS.join(", ")}` })
      }
    } else if (key === "format") {
      if (value !== undefined && !isLogFormat(value)) {
        found.push({
          option: "logging.format",
          message: `must be one of ${LOG_FORMATS.join(", ")}`
        })
      }
    } else found.push({ option: `logging.${key}`, message: "is not a known option" })
  }
  return found
}

const UNDEFINED_BRANCH = /^Expected undefined, actual /

const decodeSettings = Schema.decodeUnknownEither(Settings, {
  errors: "all",
  onExcessProperty: "error"
})

/** What the engine runs with once its options are checked. */
export interface CheckedOptions {
  readonly basePath: string
  readonly config: PayConfigShape
}

/**
 * Checks every option at once. `basePath` defaults to `publicUrl`'s path; the
 * URL is kept without a trailing "/" so links join with one.
 */
export const checkOptions = <E>(
  options: PaymentEngineOptions<E>
): Either.Either<CheckedOptions, PaymentEngineOptionsError> => {
  const issues: Array<OptionIssue> = []
  if (typeof options !== "object" || options === null) {
    return Either.left(
      new PaymentEngineOptionsError({
        issues: [
          { option: "options", message: "must be an object with at least publicUrl and storage" }
        ]
      })
    )
  }
  const decoded = decodeSettings(options)
  if (Either.isLeft(decoded)) {
    const found = ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => ({
      option: issue.path.length === 0 ? "options" : issue.path.map(String).join("."),
      message:
        issue._tag === "Unexpected"
          ? "is not a known option"
          : issue._tag === "Missing"
            ? "is required"
            : issue.message
    }))
    // An optional option's other branch ("Expected undefined") says nothing when the option has its own issue.
    const noise = (issue: OptionIssue) =>
      UNDEFINED_BRANCH.test(issue.message) &&
      found.some(
        (other) =>
          other !== issue &&
          !UNDEFINED_BRANCH.test(other.message) &&
          (other.option === issue.option || other.option.startsWith(`${issue.option}.`))
      )
    issues.push(...found.filter((issue) => !noise(issue)))
  }
  if (options.fees !== undefined) {
    const fees = decodeFeeSchedule(options.fees)
    if (Either.isLeft(fees)) {
      for (const issue of fees.left.issues) {
        const option = issue.field === "fees" ? "fees" : `fees.${issue.field}`
        issues.push({ option, message: issue.message })
      }
    }
  }
  issues.push(...loggingIssues(options.logging))
  const limits = Either.isRight(decoded) ? (decoded.right.rateLimits ?? {}) : {}
  for (const [name, limit] of Object.entries(limits)) {
    // A burst alone would read as a limit that is not there.
    if (limit !== undefined && (limit.burst ?? 0) > 0 && limit.perSecond === 0) {
      issues.push({
        option: `rateLimits.${name}.burst`,
        message: "is set but perSecond is 0 (off): give perSecond too"
      })
    }
  }
  if (issues.length > 0) return Either.left(new PaymentEngineOptionsError({ issues }))

  const publicUrl = options.publicUrl.replace(/\/+$/, "")
  const basePath = options.basePath ?? new URL(publicUrl).pathname.replace(/\/+$/, "")
  const config: PayConfigShape = {
    publicUrl,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    ...(options.paymentLifetimeMs === undefined
      ? {}
      : { paymentLifetimeMs: options.paymentLifetimeMs }),
    ...(options.maxLongPollMs === undefined ? {} : { maxLongPollMs: options.maxLongPollMs }),
    ...(options.maxHeldLongPolls === undefined
      ? {}
      : { maxHeldLongPolls: options.maxHeldLongPolls }),
    ...(options.expirySweepMs === undefined ? {} : { expirySweepMs: options.expirySweepMs }),
    ...(options.gateway === undefined ? {} : { gateway: options.gateway }),
    ...(options.fees === undefined ? {} : { fees: options.fees }),
    ...(options.chainWork === undefined ? {} : { chainWork: options.chainWork }),
    ...(options.webhookDelivery === undefined ? {} : { webhookDelivery: options.webhookDelivery }),
    ...(options.rateLimits === undefined ? {} : { rateLimits: options.rateLimits })
  }
  return Either.right({ basePath, config })
}
