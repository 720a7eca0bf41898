/**
 * `npm run pay -- <command>`: the operator's CLI. It works on the same
 * database as the server (PAY_DATABASE: a SQLite file or a postgres:// URL),
 * also while the server runs, and applies pending migrations first, as the
 * server does, with the server's engine secrets (PAY_SECRET,
 * PAY_SECRET_PREVIOUS). Text for people; `--json` for scripts. Each command
 * that opened the database names it on stderr (`Database: ./data/pay.sqlite`),
 * so a CLI pointed at another database than the server's shows at once.
 */
import { existsSync } from "node:fs"
import { Args, Command, Options, Span } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  API_VERSIONS,
  AuditEntryId,
  AuditStore,
  ChainJobStore,
  ChainWork,
  cliActor,
  type InvalidInput,
  MerchantId,
  MerchantStatus,
  Merchants,
  PartnerId,
  Partners,
  PaymentId,
  Payments,
  parseCaip10,
  type ResealReport,
  resealStoredValues,
  type WalletAppStatus,
  WalletApps
} from "@pay/core"
import {
  Config,
  type ConfigError,
  Console,
  Effect,
  Either,
  Layer,
  Logger,
  LogLevel,
  Option,
  Schema
} from "effect"
import { engineLayer, migrateDatabase } from "./app.js"
import { auditJson, auditText } from "./auditView.js"
import {
  CliError,
  errorCode,
  errorJson,
  errorMessage,
  invalidInput,
  notFound,
  refused
} from "./cli-errors.js"
import { keyCommands } from "./cli-keys.js"
import { lookupCommands } from "./cli-lookups.js"
import { cliConsole, colourWanted } from "./cli-output.js"
import {
  DEFAULT_DATABASE,
  describeDatabase,
  engineSecretsConfig,
  isPostgresUrl,
  isValidDatabase
} from "./config.js"
import { nodeHost } from "./host-node.js"

const database = Options.text("database").pipe(
  Options.withPseudoName("file|url"),
  Options.withDescription(
    "The SQLite file or a postgres:// URL (default: PAY_DATABASE, else ./data/pay.sqlite)"
  ),
  Options.withFallbackConfig(Config.string("PAY_DATABASE")),
  Options.withDefault(DEFAULT_DATABASE)
)
const DATABASE_REQUIRED =
  "--database (or PAY_DATABASE) must be the path of a SQLite file or a postgres:// (postgresql://) URL"
const json = Options.boolean("json").pipe(
  Options.withDescription("Print JSON for scripts (a refusal too: one object on stderr)")
)

/** What a configuration error says, without its nesting. */
const configMessage = (e: ConfigError.ConfigError): string =>
  e._op === "And" || e._op === "Or"
    ? `${configMessage(e.left)}; ${configMessage(e.right)}`
    : e.message

/** PAY_SECRET and PAY_SECRET_PREVIOUS, read as the server reads them; a wrong one is one line. */
const engineSecrets = Effect.mapError(engineSecretsConfig, (e) => invalidInput(configMessage(e)))

/** A SQLite file that is not there: a mistyped path, which must not become a new, empty database. */
const isMissingFile = (database: string) =>
  !isPostgresUrl(database) && database !== ":memory:" && !existsSync(database)

const missingDatabase = (database: string) =>
  new CliError(
    "database_missing",
    `no database at ${database} (PAY_DATABASE/--database); the server creates it on its first start (or \`pay migrate\`), or check the path`
  )

/** The database could not be opened or migrated: said in one line, naming it. */
const databaseError = (database: string) => (e: unknown) => {
  if (e instanceof CliError) return e
  const message = errorMessage(e).split("\n")[0]!
  // SQLite's errors already name the file and the cause.
  if (message.startsWith("SQLite database")) return new CliError("database_error", message)
  // The driver's cause (`connect ECONNREFUSED 127.0.0.1:5432`; an AggregateError has only a code).
  const cause = (e as { cause?: { message?: string; code?: string } }).cause
  const why = cause?.message || cause?.code
  return new CliError(
    "database_error",
    `database ${describeDatabase(database)} (PAY_DATABASE/--database): ${message}${why && !message.includes(why) ? `: ${why}` : ""}`
  )
}

/**
 * The database the command opened (as `describeDatabase` shows it: no
 * password), and whether stderr has named it yet. One command runs per process.
 */
const opened: { database: string | undefined; said: boolean } = {
  database: undefined,
  said: false
}

const databaseOpened = (database: string) =>
  Effect.sync(() => {
    opened.database = describeDatabase(database)
  })

/** `Database: …` on stderr, once, before the answer: stdout stays the answer alone. */
const sayDatabase = Effect.sync(() => {
  if (opened.database === undefined || opened.said) return
  opened.said = true
  process.stderr.write(`Database: ${opened.database}\n`)
})

/**
 * The engine's services on the database; nothing is served. With the
 * server's engine secrets, so what a command seals or opens is the server's.
 */
const onDatabase = (database: string) =>
  isValidDatabase(database)
    ? Layer.unwrapEffect(
        Effect.gen(function* () {
          // A wrong secret is said first: it is wrong whatever the database.
          const secrets = yield* engineSecrets
          if (isMissingFile(database)) return yield* Effect.fail(missingDatabase(database))
          return engineLayer(nodeHost, {
            database,
            // The CLI serves no requests: the engine's default body limit.
            publicUrl: "http://localhost",
            // A command reads little, on its own: no worker thread to start (and load) for it.
            sqliteReadWorker: false,
            ...secrets
          }).pipe(
            Layer.mapError(databaseError(database)),
            Layer.tap(() => databaseOpened(database))
          )
        })
      )
    : Layer.fail(invalidInput(DATABASE_REQUIRED))

/**
 * A command's output, on stdout as it is (not through @effect/cli's console, which tidies
 * help), after the database's line on stderr.
 */
const print = (asJson: boolean, value: unknown, text: string) =>
  Effect.zipRight(
    sayDatabase,
    Effect.sync(() => {
      process.stdout.write(`${asJson ? JSON.stringify(value, null, 2) : text}\n`)
    })
  )

const partnersCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(Options.withDescription("The partner's display name")),
    version: Options.choice("version", API_VERSIONS).pipe(
      Options.withDescription("The API version pinned for this partner"),
      Options.optional
    ),
    database,
    json
  },
  ({ name, version, database, json }) =>
    Effect.gen(function* () {
      const trimmed = name.trim()
      if (trimmed.length === 0 || trimmed.length > 256) {
        return yield* Effect.fail(invalidInput("--name must be 1 to 256 characters"))
      }
      const { partner, apiKey } = yield* (yield* Partners).create({
        name: trimmed,
        apiVersion: version._tag === "Some" ? version.value : undefined,
        actor: cliActor
      })
      yield* print(
        json,
        { id: partner.id, name: partner.name, apiVersion: partner.apiVersion, apiKey },
        [
          `Created partner ${partner.id} (${partner.name}), API version ${partner.apiVersion}.`,
          "API key, shown only this once, store it now:",
          "",
          `  ${apiKey}`,
          ""
        ].join("\n")
      )
    }).pipe(Effect.provide(onDatabase(database)))
).pipe(Command.withDescription("Create a partner account and print its API key once"))

const partnersList = Command.make("list", { database, json }, ({ database, json }) =>
  Effect.gen(function* () {
    const partners = yield* (yield* Partners).list
    yield* print(
      json,
      partners.map((p) => ({
        id: p.id,
        name: p.name,
        apiVersion: p.apiVersion,
        createdAt: p.createdAt.toISOString()
      })),
      partners.length === 0
        ? "No partners yet."
        : partners
            .map((p) => `${p.id}  ${p.apiVersion}  ${p.createdAt.toISOString()}  ${p.name}`)
            .join("\n")
    )
  }).pipe(Effect.provide(onDatabase(database)))
).pipe(Command.withDescription("List partner accounts, oldest first"))

/** A refused input as one line, naming the flags rather than the fields. */
const FLAGS: Record<string, string> = { name: "--name", iconUrl: "--icon-url" }
const refusedInput = (e: InvalidInput) =>
  invalidInput(e.issues.map((i) => `${FLAGS[i.field] ?? i.field} ${i.message}`).join("; "))

const appsCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(
      Options.withDescription(
        "The app's name, shown to buyers as their wallet (1 to 256 characters)"
      )
    ),
    iconUrl: Options.text("icon-url").pipe(
      Options.withPseudoName("url"),
      Options.withDescription("The app's icon, an https:// URL, shown to buyers beside its name"),
      Options.optional
    ),
    database,
    json
  },
  ({ name, iconUrl, database, json }) =>
    Effect.gen(function* () {
      const { app, apiKey } = yield* (yield* WalletApps).create({
        name,
        iconUrl: Option.getOrNull(iconUrl)
      })
      yield* print(
        json,
        { id: app.id, name: app.name, iconUrl: app.iconUrl, appId: app.id, apiKey },
        [
          `Created wallet app ${app.id} (${app.name}).`,
          "App-Id (public; a wallet may send it instead of the key):",
          "",
          `  ${app.id}`,
          "",
          "Api-Key, shown only this once, store it now:",
          "",
          `  ${apiKey}`,
          ""
        ].join("\n")
      )
    }).pipe(
      Effect.catchTag("InvalidInput", (e) => Effect.fail(refusedInput(e))),
      Effect.provide(onDatabase(database))
    )
).pipe(
  Command.withDescription(
    "Create a wallet app (a wallet calling the gateway) and print its App-Id and its Api-Key once"
  )
)

const appsList = Command.make("list", { database, json }, ({ database, json }) =>
  Effect.gen(function* () {
    const apps = yield* (yield* WalletApps).list
    yield* print(
      json,
      apps.map((a) => ({
        id: a.id,
        name: a.name,
        iconUrl: a.iconUrl,
        createdAt: a.createdAt.toISOString(),
        status: a.status,
        lastUsedAt: a.lastUsedAt?.toISOString() ?? null
      })),
      apps.length === 0
        ? "No wallet apps yet."
        : apps
            .map((a) =>
              [
                a.id,
                a.status,
                a.createdAt.toISOString(),
                // Written at most once a minute per app: to the minute.
                `last used ${a.lastUsedAt?.toISOString() ?? "never"}`,
                a.name,
                ...(a.iconUrl ? [a.iconUrl] : [])
              ].join("  ")
            )
            .join("\n")
    )
  }).pipe(Effect.provide(onDatabase(database)))
).pipe(
  Command.withDescription(
    "List wallet apps, oldest first, with their status and last use (to the minute)"
  )
)

/**
 * `apps disable` and `apps enable`: the operator's switch. A running server (every instance)
 * refuses or serves the app again within 5 s: it remembers an app's status no longer.
 */
const appsSetStatus = (command: "disable" | "enable", status: WalletAppStatus) =>
  Command.make(
    command,
    {
      appId: Args.text({ name: "app-id" }).pipe(Args.withDescription("The wallet app (app_…)")),
      database,
      json
    },
    ({ appId, database, json }) =>
      Effect.gen(function* () {
        const app = yield* (yield* WalletApps).setStatus(appId, status)
        yield* print(
          json,
          { id: app.id, name: app.name, status: app.status },
          `Wallet app ${app.id} (${app.name}) is now ${app.status}${
            status === "disabled"
              ? ": the gateway refuses its Api-Key and its App-Id (403 app_disabled) within 5 s."
              : ": the gateway serves it again within 5 s."
          }`
        )
      }).pipe(
        Effect.catchTag("WalletAppNotFound", (e) =>
          Effect.fail(notFound(`No wallet app ${e.appId}`))
        ),
        Effect.provide(onDatabase(database))
      )
  ).pipe(
    Command.withDescription(
      status === "disabled"
        ? "Disable a wallet app: the gateway refuses its keys and its App-Id (operators only)"
        : "Enable a disabled wallet app again"
    )
  )

const merchantsSetStatus = Command.make(
  "set-status",
  {
    merchantId: Args.text({ name: "merchant-id" }).pipe(
      Args.withSchema(MerchantId),
      Args.withDescription("The merchant (mrch_…)")
    ),
    status: Args.choice(
      MerchantStatus.literals.map((s) => [s, s] as const),
      { name: "status" }
    ).pipe(Args.withDescription("Its new status")),
    database,
    json
  },
  ({ merchantId, status, database, json }) =>
    Effect.gen(function* () {
      const merchant = yield* (yield* Merchants).setStatus(merchantId, status)
      // Active again: its settlements held meanwhile are queued (idempotent: running the
      // command again after a crash queues what is left).
      const resumed = status === "active" ? yield* (yield* ChainWork).resumeHeld(merchant.id) : 0
      yield* print(
        json,
        {
          id: merchant.id,
          name: merchant.name,
          status: merchant.status,
          ...(status === "active" ? { settlementsResumed: resumed } : {})
        },
        `Merchant ${merchant.id} (${merchant.name}) is now ${merchant.status}.${resumed > 0 ? ` ${resumed} held settlement(s) queued: a running server sends them.` : ""}`
      )
    }).pipe(
      Effect.catchTag("MerchantNotFound", (e) =>
        Effect.fail(notFound(`No merchant ${e.merchantId} (or it is deleted)`))
      ),
      Effect.provide(onDatabase(database))
    )
).pipe(Command.withDescription("Set a merchant's status (operators only; PATCH never changes it)"))

const paymentsSettle = Command.make(
  "settle",
  {
    paymentId: Args.text({ name: "payment-id" }).pipe(
      Args.withSchema(PaymentId),
      Args.withDescription("The succeeded payment (pay_…) whose funds stayed with the engine")
    ),
    destination: Options.text("destination").pipe(
      Options.withPseudoName("eip155:…:0x…"),
      Options.withDescription(
        "Send it here (a CAIP-10 account on the asset's chain) instead of where it was due when the payment succeeded; recorded in the audit trail"
      ),
      Options.optional
    ),
    database,
    json
  },
  ({ paymentId, destination, database, json }) =>
    Effect.gen(function* () {
      const noPayment = () => notFound(`No payment ${paymentId}`)
      const given = Option.getOrUndefined(destination)?.trim()
      // Checked before the database is opened: a malformed account touches nothing.
      const parsed = given === undefined ? undefined : parseCaip10(given)
      if (parsed !== undefined && Either.isLeft(parsed)) {
        return yield* Effect.fail(
          invalidInput(`--destination ${parsed.left}, not ${JSON.stringify(given)}`)
        )
      }
      const to = parsed === undefined ? undefined : Either.getOrThrow(parsed).value
      const queued = yield* (yield* ChainWork)
        .settleAgain(paymentId, to === undefined ? undefined : { destination: to, actor: cliActor })
        .pipe(
          Effect.catchTag("PaymentNotFound", () => Effect.fail(noPayment())),
          Effect.catchTag("InvalidInput", (e) =>
            Effect.fail(invalidInput(`--destination ${e.message.replace(/^destination:? ?/, "")}`))
          )
        )
      if (!queued) {
        const payment = yield* (yield* Payments)
          .find(paymentId)
          .pipe(Effect.catchTag("PaymentNotFound", () => Effect.fail(noPayment())))
        return yield* Effect.fail(
          refused(
            `Payment ${paymentId} has nothing to settle again (status ${payment.status}, settlement ${payment.settlement?.status ?? "none"}): only a succeeded payment whose settlement is no_destination or held can be`
          )
        )
      }
      yield* print(
        json,
        { paymentId, queued: true, ...(to === undefined ? {} : { destination: to }) },
        to === undefined
          ? `Settlement of ${paymentId} queued: a running server sends it to the destination it was due to when the payment succeeded (the merchant's current one if it had none then).`
          : `Settlement of ${paymentId} queued to ${to} (recorded in the audit trail): a running server sends it.`
      )
    }).pipe(Effect.provide(onDatabase(database)))
).pipe(
  Command.withDescription(
    "Settle again a succeeded payment whose merchant had no settlement for the asset paid (after adding one), or whose settlement is held while its merchant is not active; --destination sends it elsewhere, audited"
  )
)

const RETURNABLE_LIMIT_MAX = 1000

/**
 * Coin that reached the collector without paying for anything (a native transfer mined
 * otherwise than its option asked): the operator sends it back to its sender by hand.
 */
const fundsReturnable = Command.make(
  "returnable",
  {
    limit: Options.integer("limit").pipe(
      Options.withPseudoName("count"),
      Options.withDescription(
        `At most this many records (1 to ${RETURNABLE_LIMIT_MAX}, default 50)`
      ),
      Options.withDefault(50)
    ),
    database,
    json
  },
  ({ limit, database, json }) =>
    Effect.gen(function* () {
      if (!Number.isInteger(limit) || limit < 1 || limit > RETURNABLE_LIMIT_MAX) {
        return yield* Effect.fail(invalidInput(`--limit must be 1 to ${RETURNABLE_LIMIT_MAX}`))
      }
      const funds = yield* Effect.flatMap(ChainJobStore, (store) => store.returnable(limit)).pipe(
        Effect.provide(onDatabase(database))
      )
      yield* print(
        json,
        funds.map((f) => ({
          chainId: f.chainId,
          txHash: f.txHash,
          paymentId: f.paymentId,
          asset: f.asset,
          from: f.from,
          value: f.value.toString(),
          reason: f.reason,
          recordedAt: f.recordedAt.toISOString()
        })),
        funds.length === 0
          ? "No returnable funds."
          : funds
              .map(
                (f) =>
                  `${f.recordedAt.toISOString()}  ${f.value} of ${f.asset} from ${f.from}  tx ${f.txHash}  payment ${f.paymentId} (${f.reason})`
              )
              .join("\n")
      )
    })
).pipe(
  Command.withDescription(
    "List funds that reached the collector without paying for anything (a native transfer of another value, say), newest first: send them back to their sender"
  )
)

const AUDIT_LIMIT_MAX = 1000
const isPartnerId = Schema.is(PartnerId)
const isAuditEntryId = Schema.is(AuditEntryId)

const auditCommand = Command.make(
  "audit",
  {
    partner: Options.text("partner").pipe(
      Options.withPseudoName("ptnr_…"),
      Options.withDescription("Only this partner's entries (ptnr_…)"),
      Options.optional
    ),
    limit: Options.integer("limit").pipe(
      Options.withPseudoName("count"),
      Options.withDescription(`At most this many entries (1 to ${AUDIT_LIMIT_MAX}, default 50)`),
      Options.withDefault(50)
    ),
    before: Options.text("before").pipe(
      Options.withPseudoName("aud_…"),
      Options.withDescription("Only entries older than this one (aud_…): the next page"),
      Options.optional
    ),
    database,
    json
  },
  ({ partner, limit, before, database, json }) =>
    Effect.gen(function* () {
      // The flags are checked before the database is opened: a bad one touches nothing.
      const partnerId = Option.getOrUndefined(partner)?.trim()
      if (partnerId !== undefined && !isPartnerId(partnerId)) {
        return yield* Effect.fail(
          invalidInput(
            `--partner must be a partner id (ptnr_...), not ${JSON.stringify(partnerId)}`
          )
        )
      }
      if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_LIMIT_MAX) {
        return yield* Effect.fail(invalidInput(`--limit must be 1 to ${AUDIT_LIMIT_MAX}`))
      }
      const beforeId = Option.getOrUndefined(before)?.trim()
      if (beforeId !== undefined && !isAuditEntryId(beforeId)) {
        return yield* Effect.fail(
          invalidInput(
            `--before must be an audit entry id (aud_...), not ${JSON.stringify(beforeId)}`
          )
        )
      }
      const entries = yield* Effect.gen(function* () {
        if (partnerId !== undefined && Option.isNone(yield* (yield* Partners).find(partnerId))) {
          return yield* Effect.fail(notFound(`No partner ${partnerId}`))
        }
        return yield* (yield* AuditStore).list({ partnerId, before: beforeId, limit })
      }).pipe(Effect.provide(onDatabase(database)))
      const more =
        entries.length === limit
          ? [`(more: --before ${entries[entries.length - 1]!.id})`]
          : ([] as Array<string>)
      yield* print(
        json,
        entries.map(auditJson),
        entries.length === 0
          ? `No audit entries${partnerId === undefined ? "" : ` for ${partnerId}`}${beforeId === undefined ? "" : ` before ${beforeId}`}.`
          : [...entries.map(auditText), ...more].join("\n")
      )
    })
).pipe(
  Command.withDescription(
    "List the audit trail, newest first: API key and settlement changes, who made them, old and new values"
  )
)

/** The re-seal's report for people. */
const resealText = (report: ResealReport, current: string, previous: number) =>
  [
    `Re-sealed ${report.resealed} stored value(s) under ${current}; ${report.current} already were.`,
    ...Object.entries(report.fields).map(
      ([field, counts]) =>
        `  ${field}: ${counts.resealed} re-sealed, ${counts.current} already current` +
        (counts.unopenable > 0 ? `, ${counts.unopenable} opened by no configured secret` : "")
    ),
    ...(report.unopenableValues.length === 0
      ? []
      : [
          "Opened by no configured secret, left as they are:",
          ...report.unopenableValues.map((v) => `  ${v.id}  ${v.field}`)
        ]),
    ...(report.changing.length === 0
      ? []
      : [
          "Rewritten by others at every try (run the command again):",
          ...report.changing.map((v) => `  ${v.id}  ${v.field}`)
        ]),
    ...(report.unopenable === 0 && report.changing.length === 0
      ? [
          "Every stored sealed value is under the current secret." +
            (previous > 0
              ? " Drop PAY_SECRET_PREVIOUS 48 hours after the rotation (idempotent replays made before it expire then): see docs/operations.md."
              : "")
        ]
      : [])
  ].join("\n")

const secretReseal = Command.make("reseal", { database, json }, ({ database, json }) =>
  Effect.gen(function* () {
    const { secret, previousSecrets } = yield* engineSecrets
    const report = yield* resealStoredValues
    yield* print(
      json,
      report,
      resealText(
        report,
        Option.isSome(secret) ? "PAY_SECRET" : "the engine secret kept in the database",
        previousSecrets.length
      )
    )
    if (report.unopenable > 0) {
      return yield* Effect.fail(
        refused(
          `${report.unopenable} stored value(s) open under no configured secret (listed above), left as they are: add the secret they were sealed with to PAY_SECRET_PREVIOUS and run again; if it is lost, those webhook endpoints' secrets must be rotated (docs/operations.md)`
        )
      )
    }
    if (report.changing.length > 0) {
      return yield* Effect.fail(
        refused(`${report.changing.length} value(s) kept changing meanwhile: run it again`)
      )
    }
  }).pipe(Effect.provide(onDatabase(database)))
).pipe(
  Command.withDescription(
    "Re-seal every stored sealed value (webhook signing secrets) under the current engine secret (PAY_SECRET), after a rotation; safe while servers run, and again"
  )
)

const migrateCommand = Command.make("migrate", { database, json }, ({ database, json }) =>
  Effect.gen(function* () {
    if (!isValidDatabase(database)) {
      return yield* Effect.fail(invalidInput(DATABASE_REQUIRED))
    }
    // The one command that may create the SQLite file, and it says so.
    const created = isMissingFile(database)
    const applied = yield* migrateDatabase(nodeHost, database).pipe(
      Effect.mapError(databaseError(database))
    )
    yield* databaseOpened(database)
    yield* print(
      json,
      { applied, ...(created ? { created: database } : {}) },
      [
        ...(created ? [`Created the database ${database}.`] : []),
        applied.length === 0
          ? "The database is up to date; no migration to apply."
          : `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join("\n")}`
      ].join("\n")
    )
  })
).pipe(
  Command.withDescription(
    "Apply pending migrations, creating the SQLite file if there is none (the server and every command also migrate before their first use)"
  )
)

const { partnerKeys, appKeys } = keyCommands({ database, json, onDatabase, print })
const { merchantsList, paymentsGet } = lookupCommands({ database, json, onDatabase, print })

const pay = Command.make("pay").pipe(
  Command.withDescription(
    "The operator's commands on the server's database: PAY_DATABASE (or --database), which must be the one the server was given. Each command names the database it used on stderr."
  ),
  Command.withSubcommands([
    migrateCommand,
    auditCommand,
    Command.make("partners").pipe(
      Command.withDescription("Partner accounts: the platforms that call the API"),
      Command.withSubcommands([partnersCreate, partnersList])
    ),
    partnerKeys,
    Command.make("merchants").pipe(
      Command.withDescription(
        "A partner's merchants, and their status, which only the operator sets"
      ),
      Command.withSubcommands([merchantsList, merchantsSetStatus])
    ),
    Command.make("payments").pipe(
      Command.withDescription("One payment's details, and settling one again"),
      Command.withSubcommands([paymentsGet, paymentsSettle])
    ),
    Command.make("funds").pipe(
      Command.withDescription("Funds the collector holds that pay for nothing"),
      Command.withSubcommands([fundsReturnable])
    ),
    Command.make("apps").pipe(
      Command.withDescription("Wallet apps (wallets calling the gateway) and their keys"),
      Command.withSubcommands([
        appsCreate,
        appsList,
        appsSetStatus("disable", "disabled"),
        appsSetStatus("enable", "active"),
        appKeys
      ])
    ),
    Command.make("secret").pipe(
      Command.withDescription("The engine secret that seals stored values"),
      Command.withSubcommands([secretReseal])
    )
  ])
)

const ROOT = "pay"
const run = Command.run(pay, {
  name: ROOT,
  version: "0.1.0",
  summary: Span.text("the pay engine's operator CLI (npm run pay -- <command>)")
})
const args = process.argv.slice(2)
const asJson = args.includes("--json")

/**
 * A refusal: one line on stderr, or one JSON object with `--json`; exit code 1. One that
 * depends on what the database holds (not found, refused) names the database, unless the
 * command's answer already did.
 */
const refuse = (e: unknown) =>
  Effect.sync(() => {
    const code = errorCode(e)
    const database =
      !opened.said && (code === "not_found" || code === "refused") ? opened.database : undefined
    if (asJson) process.stderr.write(`${errorJson(e, database)}\n`)
    else if (code === "usage") {
      process.stderr.write(`error: ${errorMessage(e)} (--help shows the usage)\n`)
    } else {
      const where = database === undefined ? "" : ` (database: ${database})`
      process.stderr.write(`error: ${errorMessage(e)}${where}\n`)
    }
    process.exitCode = 1
  })

/**
 * The engine's log lines, should a command's work write any, go to stderr at warning and
 * above: stdout is the command's answer (one JSON document with --json).
 */
const cliLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.prettyLogger({ stderr: true, colors: false })
)

const program = run(process.argv).pipe(
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(cliLogger),
  Effect.catchAll(refuse),
  // A bug: with --json still one object (code `internal`), else the whole report with its trace.
  Effect.catchAllDefect((defect) =>
    asJson ? refuse(new CliError("internal", errorMessage(defect))) : Effect.die(defect)
  )
)

Console.consoleWith((base) =>
  Console.withConsole(
    program,
    cliConsole(base, {
      args,
      root: ROOT,
      colourOut: colourWanted(process.env, process.stdout.isTTY === true)
    })
  )
).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain({ disableErrorReporting: false }))
