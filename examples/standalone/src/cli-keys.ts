/**
 * `npm run pay -- keys …` and `npm run pay -- apps keys …`: the operator's
 * hand on API keys. Unlike the partner API, the CLI may revoke a partner's
 * last active key (the way out when it leaked), and it is the only way to
 * manage wallet apps' keys. The CLI is the operator: it may give a
 * partner's key any scopes (the API holds a key to its own).
 */
import { Args, Command, Options } from "@effect/cli"
import {
  API_KEY_SCOPES,
  ApiKeyId,
  ApiKeys,
  apiKeyView,
  cliActor,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  type KeyOwner,
  type KeyRecord,
  MAX_ROTATION_OVERLAP_SECONDS,
  PartnerId,
  Partners,
  WalletAppId,
  WalletApps
} from "@pay/core"
import { Effect, type Layer, Option, Schema } from "effect"
import { invalidInput, notFound, refused } from "./cli-errors.js"

/** What cli.ts shares with these commands. */
export interface CliParts {
  readonly database: Options.Options<string>
  readonly json: Options.Options<boolean>
  readonly onDatabase: (database: string) => Layer.Layer<ApiKeys | Partners | WalletApps, unknown>
  readonly print: (asJson: boolean, value: unknown, text: string) => Effect.Effect<void>
}

const state = (key: KeyRecord, now: Date) => {
  if (key.revokedAt !== null && key.revokedAt <= now) return "revoked"
  if (key.expiresAt !== null && key.expiresAt <= now) return "expired"
  if (key.revokedAt !== null) return `active until ${key.revokedAt.toISOString()} (rotated)`
  return "active"
}

const keyLine = (key: KeyRecord, now: Date) =>
  [
    key.id,
    state(key, now),
    `created ${key.createdAt.toISOString()}`,
    `last used ${key.lastUsedAt?.toISOString() ?? "never"}`,
    ...(key.expiresAt ? [`expires ${key.expiresAt.toISOString()}`] : []),
    ...(key.ownerKind === "partner" ? [`scopes ${key.scopes.join(",")}`] : []),
    ...(key.name === null ? [] : [key.name])
  ].join("  ")

const showSecret = (what: string, key: KeyRecord, secret: string) =>
  [
    `${what} ${key.id}${key.name === null ? "" : ` (${key.name})`}${key.ownerKind === "partner" ? `, scopes ${key.scopes.join(",")}` : ""}.`,
    "API key, shown only this once, store it now:",
    "",
    `  ${secret}`,
    ""
  ].join("\n")

const isPartnerId = Schema.is(PartnerId)
const isAppId = Schema.is(WalletAppId)
const isKeyId = Schema.is(ApiKeyId)

const keyIdArg = Args.text({ name: "key-id" }).pipe(Args.withDescription("The key's id (key_…)"))

const checkedKeyId = (id: string) =>
  isKeyId(id) ? Effect.succeed(id) : Effect.fail(invalidInput(`${id} is not a key id (key_…)`))

const overlapOption = Options.integer("overlap-seconds").pipe(
  Options.withPseudoName("seconds"),
  Options.withDescription(
    `How long the rotated key stays valid beside the new one (0 to ${MAX_ROTATION_OVERLAP_SECONDS}; default ${DEFAULT_ROTATION_OVERLAP_SECONDS}, 24 h)`
  ),
  Options.withDefault(DEFAULT_ROTATION_OVERLAP_SECONDS)
)

const checkedOverlap = (seconds: number) =>
  seconds >= 0 && seconds <= MAX_ROTATION_OVERLAP_SECONDS
    ? Effect.succeed(seconds)
    : Effect.fail(
        invalidInput(`--overlap-seconds must be 0 to ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`)
      )

const scopesOption = Options.text("scopes").pipe(
  Options.withPseudoName("read,payments"),
  Options.withDescription(
    `What the key may do, comma-separated, among: ${API_KEY_SCOPES.join(", ")} (default: all of them)`
  ),
  Options.optional
)

/** `--scopes a,b` as a list; the service says what is wrong with it (InvalidInput). */
const scopesOf = (text: Option.Option<string>) =>
  Option.getOrNull(Option.map(text, (t) => t.split(",").map((s) => s.trim())))

/** The key commands for one kind of owner, found by `findOwner` from its flag. */
const ownerKeyCommands = (
  parts: CliParts,
  flag: Options.Options<string>,
  findOwner: (id: string) => Effect.Effect<KeyOwner, Error, Partners | WalletApps>
) => {
  const { database, json, onDatabase, print } = parts
  const now = Effect.map(Effect.clock, (c) => new Date(c.unsafeCurrentTimeMillis()))
  const failures = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
    Effect.catchAll(effect, (e) => {
      const tag = (e as { _tag?: string })._tag
      const keyId = (e as { keyId?: string }).keyId
      if (tag === "ApiKeyNotFound") return Effect.fail(notFound(`no key ${keyId} of this owner`))
      if (tag === "ApiKeyInactive")
        return Effect.fail(refused(`${keyId} is revoked or expired: rotate an active key`))
      if (tag === "InvalidInput") {
        // The service names its fields as the API does: `scopes: …` is `--scopes …` here.
        const message = (e as Error).message.replace(/^scopes: /, "--scopes ")
        return Effect.fail(invalidInput(message))
      }
      return Effect.fail(e)
    })

  const list = Command.make("list", { owner: flag, database, json }, (o) =>
    Effect.gen(function* () {
      const owner = yield* findOwner(o.owner)
      const keys = yield* (yield* ApiKeys).list(owner)
      const at = yield* now
      yield* print(
        o.json,
        keys.map(apiKeyView),
        keys.length === 0 ? "No keys." : keys.map((k) => keyLine(k, at)).join("\n")
      )
    }).pipe(failures, Effect.provide(onDatabase(o.database)))
  ).pipe(
    Command.withDescription("List the keys, newest first, revoked ones included (never a secret)")
  )

  const create = Command.make(
    "create",
    {
      owner: flag,
      name: Options.text("name").pipe(
        Options.withDescription("A name to tell the key by (1 to 100 characters)"),
        Options.optional
      ),
      expiresAt: Options.text("expires-at").pipe(
        Options.withPseudoName("time"),
        Options.withDescription("When the key stops working, RFC 3339 (default: never)"),
        Options.optional
      ),
      scopes: scopesOption,
      database,
      json
    },
    (o) =>
      Effect.gen(function* () {
        const owner = yield* findOwner(o.owner)
        const expiresAt = Option.map(o.expiresAt, (text) => new Date(text))
        if (Option.isSome(expiresAt) && Number.isNaN(expiresAt.value.getTime())) {
          return yield* Effect.fail(invalidInput("--expires-at must be an RFC 3339 timestamp"))
        }
        const { key, secret } = yield* (yield* ApiKeys).create(
          owner,
          {
            name: Option.getOrNull(o.name),
            expiresAt: Option.getOrNull(expiresAt),
            scopes: scopesOf(o.scopes)
          },
          { actor: cliActor }
        )
        yield* print(o.json, { ...apiKeyView(key), secret }, showSecret("Created key", key, secret))
      }).pipe(failures, Effect.provide(onDatabase(o.database)))
  ).pipe(Command.withDescription("Create a key and print it once"))

  const revoke = Command.make("revoke", { keyId: keyIdArg, owner: flag, database, json }, (o) =>
    Effect.gen(function* () {
      const owner = yield* findOwner(o.owner)
      const id = yield* checkedKeyId(o.keyId)
      // The operator may revoke the last one: the way out when it leaked.
      const outcome = yield* (yield* ApiKeys).revoke(owner, id, {
        keepOneActive: false,
        actor: cliActor
      })
      yield* print(
        o.json,
        apiKeyView(outcome.key),
        outcome._tag === "Revoked"
          ? `Revoked ${id}: refused at once here, and by every server within 5 seconds.`
          : `${id} was already revoked, at ${outcome.key.revokedAt?.toISOString()}.`
      )
    }).pipe(failures, Effect.provide(onDatabase(o.database)))
  ).pipe(Command.withDescription("Revoke a key at once (even the last active one)"))

  const rotate = Command.make(
    "rotate",
    { keyId: keyIdArg, owner: flag, overlap: overlapOption, database, json },
    (o) =>
      Effect.gen(function* () {
        const owner = yield* findOwner(o.owner)
        const id = yield* checkedKeyId(o.keyId)
        const overlap = yield* checkedOverlap(o.overlap)
        const { old, replacement, secret } = yield* (yield* ApiKeys).rotate(owner, id, overlap, {
          actor: cliActor
        })
        yield* print(
          o.json,
          { ...apiKeyView(replacement), secret, previousKey: apiKeyView(old) },
          [
            showSecret("Rotated to", replacement, secret),
            `The old key ${old.id} stays valid until ${old.revokedAt?.toISOString()}.`
          ].join("\n")
        )
      }).pipe(failures, Effect.provide(onDatabase(o.database)))
  ).pipe(
    Command.withDescription(
      "Replace a key with a new one; the old one stays valid for the overlap, then is revoked"
    )
  )

  return { create, list, revoke, rotate }
}

export const keyCommands = (parts: CliParts) => {
  const partner = Options.text("partner").pipe(
    Options.withPseudoName("ptnr_…"),
    Options.withDescription("The partner's id (ptnr_…)")
  )
  const app = Options.text("app").pipe(
    Options.withPseudoName("app_…"),
    Options.withDescription("The wallet app's id (app_…)")
  )
  const findPartner = (id: string) =>
    Effect.gen(function* () {
      if (!isPartnerId(id))
        return yield* Effect.fail(invalidInput(`${id} is not a partner id (ptnr_…)`))
      const found = yield* (yield* Partners).find(id)
      if (Option.isNone(found)) return yield* Effect.fail(notFound(`no partner ${id}`))
      return { kind: "partner", id } as const
    })
  const findApp = (id: string) =>
    Effect.gen(function* () {
      if (!isAppId(id))
        return yield* Effect.fail(invalidInput(`${id} is not a wallet app id (app_…)`))
      const found = yield* (yield* WalletApps).find(id)
      if (Option.isNone(found)) return yield* Effect.fail(notFound(`no wallet app ${id}`))
      return { kind: "wallet_app", id } as const
    })
  const partners = ownerKeyCommands(parts, partner, findPartner)
  // A wallet app gets its first key with the app (apps create); more are made by rotating.
  const apps = ownerKeyCommands(parts, app, findApp)
  return {
    partnerKeys: Command.make("keys").pipe(
      Command.withDescription("A partner's API keys"),
      Command.withSubcommands([partners.create, partners.list, partners.revoke, partners.rotate])
    ),
    appKeys: Command.make("keys").pipe(
      Command.withDescription("A wallet app's API keys"),
      Command.withSubcommands([apps.list, apps.revoke, apps.rotate])
    )
  }
}
