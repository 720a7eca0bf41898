/**
 * The one entry point for embedders: an engine made from checked options,
 * answering web-standard requests (`fetch`) and the adapters' own exchange
 * (`handle`), its background work started with it and stopped with it, or run
 * by worker processes instead (`workers: false` and `runPaymentWorkers`).
 * `createPaymentEngine` and `runPaymentWorkers` are the Promise forms for
 * platforms that do not use Effect.
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { WalletApps } from "./apps/WalletApps.js"
import {
  forkBackgroundWork,
  makePayHandler,
  type PayEngineContext,
  payEngineLayer
} from "./Engine.js"
import { checkOptions, type PaymentEngineOptions } from "./EngineOptions.js"
import { toFieldIssues } from "./http/Decode.js"
import type { EngineHandler } from "./http/Engine.js"
import { toFetchHandler } from "./http/Fetch.js"
import { withEngineLogging } from "./observability/Logging.js"
import { Partners } from "./partners/Partners.js"
import { Payments } from "./payments/Payments.js"
import { type ResealReport, resealStoredValues } from "./secrets/Reseal.js"
import { validateCustomApiKey } from "./shared/ApiKey.js"
import { DEFAULT_API_VERSION, isApiVersion } from "./shared/ApiVersion.js"
import { type EffectRunner, startInOwnScope } from "./shared/OwnScope.js"
import { DisplayName } from "./shared/Text.js"
import { startTelemetry } from "./telemetry/Telemetry.js"

const decodePartnerName = Schema.decodeUnknownEither(Schema.compose(Schema.Trim, DisplayName))

export interface PaymentEngineService {
  /** Web standard: `Request` in, `Response` out (Bun, Deno, Hono, any fetch-style framework). */
  readonly fetch: (request: Request) => Promise<Response>
  /** The runtime-neutral exchange the server adapters call (`@pay/adapter-node`). */
  readonly handle: EngineHandler
  /** The engine's external URL, without a trailing "/". */
  readonly publicUrl: string
  /** The prefix requests arrive with (`/pay`), or "". */
  readonly basePath: string
  /** The engine's services (Partners, Merchants, Payments, …) and what they stand on. */
  readonly context: Context.Context<PayEngineContext>
  /**
   * Begins a shutdown: every held status long-poll is answered now with the
   * payment's current status, and later ones at once. Call it when your server
   * stops accepting, before waiting for in-flight requests (the adapters'
   * `serve` does); requests go on being answered. Idempotent.
   */
  readonly drain: () => void
}

export class PaymentEngine extends Context.Tag("@pay/core/PaymentEngine")<
  PaymentEngine,
  PaymentEngineService
>() {
  /** The engine as a layer: `PaymentEngine` and its services, released with the layer. */
  static layer = <E>(options: PaymentEngineOptions<E>) =>
    Layer.scopedContext(
      Effect.map(makePaymentEngine(options), (engine) =>
        Context.add(engine.context, PaymentEngine, engine)
      )
    )
}

/**
 * The engine in the current scope: options checked, storage opened (and
 * migrated), handler made, background work forked unless `workers: false`.
 * Closing the scope stops the work and releases everything.
 */
export const makePaymentEngine = <E>(options: PaymentEngineOptions<E>) =>
  Effect.flatMap(checkOptions(options), ({ basePath, config }) =>
    // Under the engine's logging: its layers' fibers, the handler's runtime, the background work.
    withEngineLogging(options.logging)(
      Effect.gen(function* () {
        const context = yield* Layer.build(payEngineLayer({ ...options, config }))
        const telemetry =
          options.telemetry === undefined ? undefined : yield* startTelemetry(options.telemetry)
        const handle = yield* Effect.provide(
          makePayHandler(
            options.routes ?? [],
            basePath,
            {
              ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
              ...(telemetry === undefined ? {} : { observers: [telemetry.requestSpans] })
            },
            options.pages
          ),
          context
        )
        if (options.workers !== false) yield* forkBackgroundWork(context)
        const payments = Context.get(context, Payments)
        return {
          fetch: toFetchHandler(handle),
          handle,
          publicUrl: config.http.publicUrl,
          basePath,
          context,
          drain: () => Effect.runSync(payments.drain)
        } satisfies PaymentEngineService
      })
    )
  )

/**
 * The background work alone, for a worker tier: the same options as the web
 * tier's engines (the same storage and events), no requests served.
 */
export const makePaymentWorkers = <E>(options: PaymentEngineOptions<E>) =>
  Effect.flatMap(checkOptions(options), ({ config }) =>
    withEngineLogging(options.logging)(
      Effect.gen(function* () {
        const context = yield* Layer.build(payEngineLayer({ ...options, config }))
        // A worker serves no requests: its metrics are exported, no spans.
        if (options.telemetry !== undefined) yield* startTelemetry(options.telemetry)
        yield* forkBackgroundWork(context)
        return { context }
      })
    )
  )

export interface CreatedPartner {
  readonly partnerId: string
  readonly name: string
  /** The key in clear: shown only here, store it now. */
  readonly apiKey: string
}

export interface CreatedWalletApp {
  readonly walletAppId: string
  readonly name: string
  /** The key in clear: shown only here. */
  readonly apiKey: string
}

/** A running engine for platforms that do not use Effect. */
export interface EmbeddedPaymentEngine extends Omit<PaymentEngineService, "context"> {
  /** Partner accounts: the API keys merchants' platforms call the partner API with. */
  readonly partners: {
    readonly create: (input: {
      readonly name: string
      /** Use this key instead of a generated one (`pk_…`, 32+ characters). */
      readonly apiKey?: string
      readonly apiVersion?: string
    }) => Promise<CreatedPartner>
    readonly list: () => Promise<ReadonlyArray<{ readonly id: string; readonly name: string }>>
  }
  /** Wallet apps: the keys wallets call the gateway with. */
  readonly walletApps: {
    readonly create: (input: {
      readonly name: string
      readonly iconUrl?: string | null
    }) => Promise<CreatedWalletApp>
  }
  /** The engine's secret (the `secret` and `previousSecrets` options). */
  readonly secrets: {
    /**
     * After a rotation: every stored sealed value re-sealed under the current
     * secret (`npm run pay -- secret reseal`); safe while other instances run.
     */
    readonly reseal: () => Promise<ResealReport>
  }
  /** Stops the background work, lets go of the database and everything else. Idempotent. */
  readonly close: () => Promise<void>
}

/**
 * Starts an engine and returns its handlers, a few administrative calls and
 * `close`. Throws `PaymentEngineOptionsError` (naming every wrong option) or
 * the storage's error when it cannot start.
 */
export const createPaymentEngine = <E>(
  options: PaymentEngineOptions<E>
): Promise<EmbeddedPaymentEngine> =>
  embedPaymentEngine(options, (effect) => effect).then(
    ({ context: _, run: __, ...engine }) => engine
  )

/** What `embedPaymentEngine` gives beside the embedded engine. */
export interface EngineInternals {
  readonly context: Context.Context<PayEngineContext>
  /** Runs an effect on the engine's services, within its runner and under its logging. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, PayEngineContext>) => Promise<A>
}

/**
 * `createPaymentEngine`, with the engine's start, its calls and its stop run
 * `within` the caller's services: `@pay/testing` gives a clock the test moves
 * and a supervisor that sees when the engine is idle. The handler's requests
 * and the background work inherit them from the start.
 */
export const embedPaymentEngine = async <E>(
  options: PaymentEngineOptions<E>,
  within: EffectRunner
): Promise<EmbeddedPaymentEngine & EngineInternals> => {
  const { value: engine, close } = await startInOwnScope(makePaymentEngine(options), within)
  const { context, ...handlers } = engine
  // Under the engine's logging too, as its own fibers are: a line logged here is one of its lines.
  const logged = withEngineLogging(options.logging)
  const run = <A, Err>(effect: Effect.Effect<A, Err, PayEngineContext>) =>
    Effect.runPromise(within(logged(Effect.provide(effect, context))))
  return {
    ...handlers,
    context,
    run,
    partners: {
      create: (input) =>
        run(
          Effect.gen(function* () {
            // The rule of every display name (wallet apps', merchants'): 1 to 256 characters, not blank.
            const named = decodePartnerName(input.name)
            if (Either.isLeft(named)) {
              return yield* Effect.fail(
                new Error(`name ${toFieldIssues(named.left, "name")[0]?.message}`)
              )
            }
            const name = named.right
            if (input.apiKey !== undefined) {
              const valid = validateCustomApiKey(input.apiKey)
              if (Either.isLeft(valid)) return yield* Effect.fail(new Error(valid.left))
            }
            if (input.apiVersion !== undefined && !isApiVersion(input.apiVersion)) {
              return yield* Effect.fail(
                new Error(`apiVersion ${input.apiVersion} is not a known API version`)
              )
            }
            const partners = yield* Partners
            const created = yield* partners.create({
              name,
              apiKey: input.apiKey,
              apiVersion:
                input.apiVersion !== undefined && isApiVersion(input.apiVersion)
                  ? input.apiVersion
                  : DEFAULT_API_VERSION
            })
            return {
              partnerId: created.partner.id,
              name: created.partner.name,
              apiKey: created.apiKey
            }
          })
        ),
      list: () =>
        run(
          Effect.map(
            Effect.flatMap(Partners, (partners) => partners.list),
            (all) => all.map((p) => ({ id: p.id, name: p.name }))
          )
        )
    },
    walletApps: {
      create: (input) =>
        run(
          Effect.map(
            Effect.flatMap(WalletApps, (apps) => apps.create(input)),
            ({ app, apiKey }) => ({ walletAppId: app.id, name: app.name, apiKey })
          )
        )
    },
    secrets: { reseal: () => run(resealStoredValues) },
    // Held long-polls are answered with their status rather than cut off.
    close: () => {
      engine.drain()
      return close()
    }
  }
}

/**
 * The background work alone, for a worker process of a two-tier deployment
 * (the web tier's engines run with `workers: false`). `close` stops it.
 */
export const runPaymentWorkers = async <E>(
  options: PaymentEngineOptions<E>
): Promise<{ readonly close: () => Promise<void> }> => {
  const { close } = await startInOwnScope(makePaymentWorkers(options))
  return { close }
}
