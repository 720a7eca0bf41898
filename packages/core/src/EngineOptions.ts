/**
 * What an embedder gives the engine, and the one check of it at start: every
 * wrong or unknown option is named in a single error, before anything opens.
 */
import { Data, Effect, Either, Layer, ParseResult, Schema } from "effect"
import type { Chain } from "./chain/Chain.js"
import { ChainWorkSettings } from "./chainwork/ChainWorkConfig.js"
import type { EnginePages } from "./EnginePages.js"
import { type FeeSchedule, FeeScheduleSchema } from "./fees/Fees.js"
import { GatewaySettings } from "./gateway/GatewayConfig.js"
import { type HttpConfigShape, HttpSettings, httpConfigOf } from "./http/HttpConfig.js"
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
import { PaymentsSettings } from "./payments/PaymentsConfig.js"
import type { Prices } from "./pricing/Pricing.js"
import { RateLimitsSettings } from "./ratelimit/RateLimitConfig.js"
import { RetentionSettings } from "./retention/RetentionConfig.js"
import type { PayStorage } from "./Storage.js"
import { decodeEngineSecret } from "./secrets/EngineSecret.js"
import type { TokenRegistry } from "./shared/TokenRegistry.js"
import { TelemetrySettings } from "./telemetry/Telemetry.js"
import type { WebhookUrlGuard } from "./webhooks/UrlGuard.js"
import type { WebhookSender } from "./webhooks/WebhookSender.js"
import { WebhookDeliverySettings } from "./webhooks/WebhookWorkConfig.js"

/** A feature's group of settings, each default applied when the group is left out. */
const group = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.optionalWith(schema, { default: () => Schema.decodeSync(schema)({} as I) })

const OnOff = Schema.Boolean.annotations({ message: () => "must be true or false" })

const EngineSecretText = Schema.String.annotations({
  message: () => "must be a string (base64)"
}).pipe(
  Schema.filter((s) =>
    Either.match(decodeEngineSecret(s), { onLeft: (m) => m, onRight: () => true })
  )
)

/**
 * The engine's settings, composed of each feature's own schema (its ranges and
 * defaults live there): decoding applies every default.
 */
export const EngineSettings = Schema.Struct({
  ...HttpSettings.fields,
  ...PaymentsSettings.fields,
  /** Quote locks and the data-collection policy of the wallet gateway. */
  gateway: group(GatewaySettings),
  /** The engine's fees, taken from each succeeded payment before it is settled. */
  fees: Schema.optionalWith(FeeScheduleSchema, { default: () => ({}) }),
  /** How the durable chain work polls and leases its jobs. */
  chainWork: group(ChainWorkSettings),
  /** How webhooks are claimed, sent and retried (the retry schedule, the limits). */
  webhookDelivery: group(WebhookDeliverySettings),
  /**
   * Rate limits, each a token bucket: `perApiKey` for partner API requests
   * (by the key they authenticate with), `perWalletApp` and `perPayment` for
   * the wallet gateway. Each is `{ perSecond, burst? }` in whole requests;
   * `burst` defaults to `perSecond`. Default: all off. A request past a limit
   * is answered 429 `rate_limited` with `Retry-After`. Instances sharing a
   * database share their buckets, synced at most once a second.
   */
  rateLimits: Schema.optionalWith(RateLimitsSettings, { default: () => ({}) }),
  /**
   * How long events, webhook deliveries, idempotency records, unpaid options
   * and (when set) the audit trail are kept, and how often the purge runs.
   */
  retention: group(RetentionSettings),
  /**
   * Whether this engine runs the background work (expiry sweep, chain jobs)
   * itself. Default true; `false` on a web tier whose work runs in worker
   * processes (`runPaymentWorkers`).
   */
  workers: Schema.optionalWith(OnOff, { default: () => true }),
  /**
   * The engine's secret (`PAY_SECRET`): 32 or more random bytes, base64, the
   * same on every instance. Default: one generated at the first start and
   * kept in the database. Webhook signing secrets are stored encrypted under it.
   */
  secret: Schema.optional(EngineSecretText),
  /**
   * Earlier engine secrets (`PAY_SECRET_PREVIOUS`), each like `secret`: they
   * still open what was sealed under them, and never seal. For a rotation:
   * drop them once `resealStoredValues` (`npm run pay -- secret reseal`) has
   * re-sealed the stored values and 48 hours have passed (idempotent replays).
   * Default none. A secret kept in the database opens too when `secret` is set.
   */
  previousSecrets: Schema.optional(
    Schema.Array(EngineSecretText).annotations({
      message: () => "must be an array of secrets (base64)"
    })
  ),
  /**
   * `GET /metrics` in the Prometheus text format (counts, durations and
   * levels; no ids, keys or amounts). Default true; false answers it 404.
   */
  metrics: Schema.optionalWith(OnOff, { default: () => true }),
  /**
   * Export a span per request and the metrics to an OpenTelemetry collector
   * over OTLP/HTTP (`{ otlpEndpoint: "http://collector:4318" }`). Default: off.
   */
  telemetry: Schema.optional(TelemetrySettings),
  // Checked on its own (loggingIssues): one line per wrong field, not one per literal.
  logging: Schema.optional(Schema.Unknown)
})

/**
 * The engine's settings as given: plain values, the same on every instance of
 * one deployment. Each is documented on its feature's schema (EngineSettings).
 */
export type PaymentEngineSettings = Omit<typeof EngineSettings.Encoded, "logging"> & {
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
  /**
   * The networks wallets pay on (`makeEvmChain` of `@pay/chain-evm`); default: none, so no
   * payment options.
   */
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

const layer = (what: string) =>
  Schema.declare((u): u is Layer.Layer<never> => Layer.isLayer(u), {
    message: () => `must be a Layer (${what})`
  })

/** The options: the settings and the layers the engine is built from. */
const Options = Schema.Struct({
  ...EngineSettings.fields,
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

const decodeOptions = Schema.decodeUnknownEither(Options, {
  errors: "all",
  onExcessProperty: "error"
})

/**
 * The engine's settings as it runs with them, each feature's group with its
 * defaults applied (what each feature's config tag holds).
 */
export interface EngineConfig {
  readonly http: HttpConfigShape
  readonly payments: PaymentsSettings
  readonly gateway: GatewaySettings
  readonly fees: FeeSchedule
  readonly chainWork: ChainWorkSettings
  readonly webhookDelivery: WebhookDeliverySettings
  readonly rateLimits: RateLimitsSettings
  readonly retention: RetentionSettings
  /**
   * The engine's mode when the settings decide it; left out, it is decided
   * once at start from its networks (`livemodeOf`).
   */
  readonly livemode?: boolean
}

const configOf = (settings: typeof EngineSettings.Type): EngineConfig => ({
  http: httpConfigOf(settings),
  payments: {
    paymentLifetimeMs: settings.paymentLifetimeMs,
    maxLongPollMs: settings.maxLongPollMs,
    maxHeldLongPolls: settings.maxHeldLongPolls,
    maxHeldPublicLongPolls: settings.maxHeldPublicLongPolls,
    maxHeldLongPollsPerPayment: settings.maxHeldLongPollsPerPayment,
    expirySweepMs: settings.expirySweepMs
  },
  gateway: settings.gateway,
  fees: settings.fees,
  chainWork: settings.chainWork,
  webhookDelivery: settings.webhookDelivery,
  rateLimits: settings.rateLimits,
  retention: settings.retention
})

/**
 * The config of settings known to be right (tests, tools): every default
 * applied; throws on a wrong one.
 */
export const engineConfig = (settings: PaymentEngineSettings): EngineConfig =>
  configOf(Schema.decodeUnknownSync(EngineSettings)(settings))

/** What the engine runs with once its options are checked. */
export interface CheckedOptions {
  readonly basePath: string
  readonly config: EngineConfig
}

/** Every issue of a failed decode, named by the option's dotted path. */
const optionIssues = (error: ParseResult.ParseError): ReadonlyArray<OptionIssue> => {
  const found = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
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
  return found.filter((issue) => !noise(issue))
}

/** Checks every option at once: the decode of the composed schemas, and its issues named. */
export const checkOptions = <E>(
  options: PaymentEngineOptions<E>
): Either.Either<CheckedOptions, PaymentEngineOptionsError> => {
  if (typeof options !== "object" || options === null) {
    return Either.left(
      new PaymentEngineOptionsError({
        issues: [
          { option: "options", message: "must be an object with at least publicUrl and storage" }
        ]
      })
    )
  }
  const decoded = decodeOptions(options)
  const issues = [
    ...(Either.isLeft(decoded) ? optionIssues(decoded.left) : []),
    ...loggingIssues(options.logging)
  ]
  if (issues.length > 0 || Either.isLeft(decoded)) {
    return Either.left(new PaymentEngineOptionsError({ issues }))
  }
  const config = configOf(decoded.right)
  return Either.right({ basePath: config.http.basePath, config })
}
