/**
 * API keys of every owner: minting, listing, revoking and rotating them, and
 * turning a presented key into its owner.
 *
 * Verified keys are remembered per process for `VERIFIED_KEY_TTL_MS`, never
 * past the key's own end (expiry, or a rotation's overlap), so a key revoked
 * on another instance is refused there within five seconds; the instance that
 * revokes a key forgets it at once.
 */
import { Clock, Effect, Option } from "effect"
import { type AuditActor, type AuditLog, embedderActor } from "../audit/AuditEntry.js"
import { type AuditChange, auditEntryOf, auditStamps } from "../audit/NewAuditEntry.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { PartnerId } from "../identity/Partner.js"
import {
  constantTimeEqual,
  generateApiKey,
  hashApiKey,
  looksLikeApiKey,
  lookupIdOf
} from "../shared/ApiKey.js"
import { InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import {
  type ApiKeyId,
  ApiKeyInactive,
  type ApiKeyLookupTaken,
  ApiKeyNotFound,
  isKeyActive,
  type KeyOwner,
  type KeyOwnerKind,
  KeyRecord,
  keyEndsAt,
  LastActiveApiKey,
  MAX_KEY_NAME_LENGTH
} from "./KeyRecord.js"
import { KeyStore, type Rotation } from "./KeyStore.js"
import {
  ALL_SCOPES,
  type ApiKeyScope,
  canonicalScopes,
  grantRefusal,
  type InsufficientScope,
  scopesProblem
} from "./Scopes.js"

/** Under five seconds: how long another instance may still accept a revoked key. */
export const VERIFIED_KEY_TTL_MS = 4_000
const VERIFIED_KEYS_MAX = 10_000
/** `lastUsedAt` is written at most this often per key and instance: a use is not a write. */
export const LAST_USED_PRECISION_MS = 60_000

export interface NewKeyInput {
  readonly name?: string | null | undefined
  readonly expiresAt?: Date | null | undefined
  /** What the key may do (Scopes.ts); default: every scope, or the acting key's (`create`'s `by`). */
  readonly scopes?: ReadonlyArray<string> | null | undefined
}

/**
 * What to write with a new key, made from it and its secret before the write
 * (an idempotent response with the secret sealed, say).
 */
export type WithNewKey = (
  key: KeyRecord,
  secret: string
) => Effect.Effect<{ readonly completion?: IdempotencyCompletion | undefined }>

/** What the audit trail shows of a key: never its secret or hash. */
const auditView = (key: KeyRecord) => ({
  id: key.id,
  name: key.name,
  expiresAt: key.expiresAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
  scopes: key.scopes
})

/**
 * The audit log of a key change by `actor` (the embedding platform's code
 * when none is named), its ids and time drawn now. Only partners' keys are
 * audited: an entry belongs to a partner.
 */
const auditOf = <A>(
  owner: KeyOwner,
  actor: AuditActor | undefined,
  entries: number,
  changes: (changed: A) => ReadonlyArray<Omit<AuditChange, "partnerId" | "actor">>
): Effect.Effect<AuditLog<A> | undefined> =>
  owner.kind !== "partner"
    ? Effect.succeed(undefined)
    : Effect.map(
        auditStamps(entries),
        (stamps) => (changed: A) =>
          changes(changed).map((change, i) =>
            auditEntryOf(stamps[i]!, {
              ...change,
              partnerId: owner.id as PartnerId,
              actor: actor ?? embedderActor
            })
          )
      )

/** The audit log of a new key. */
export const keyCreatedAudit = (owner: KeyOwner, actor: AuditActor | undefined) =>
  auditOf<KeyRecord>(owner, actor, 1, (key) => [
    { action: "api_key.created", subject: key.id, before: null, after: auditView(key) }
  ])

/** What a grant is checked against: the scopes and end of the key a request acts with. */
export type ActingKey = Pick<KeyRecord, "scopes" | "expiresAt" | "revokedAt">

interface Verified {
  readonly kind: KeyOwnerKind
  readonly owner: object
  readonly key: KeyRecord
  readonly until: number
}

export class ApiKeys extends Effect.Service<ApiKeys>()("@pay/core/ApiKeys", {
  effect: Effect.gen(function* () {
    const store = yield* KeyStore
    // Resolved once: a per-request service lookup costs more than the check itself.
    const clock = yield* Effect.clock
    const verified = new Map<string, Verified>()
    /**
     * The key each owner object handed to a request was verified with: the
     * audit's actor, and the scopes and end a request acting with it is held to.
     */
    const verifiedWith = new WeakMap<object, KeyRecord>()

    const forget = (keyId: ApiKeyId) => {
      for (const [presented, entry] of verified) {
        if (entry.key.id === keyId) verified.delete(presented)
      }
    }

    const checkInput = (input: NewKeyInput, now: Date) =>
      Effect.gen(function* () {
        const name = input.name?.trim() ?? null
        if (name !== null && (name.length === 0 || name.length > MAX_KEY_NAME_LENGTH)) {
          return yield* InvalidInput.of("name", `must be 1 to ${MAX_KEY_NAME_LENGTH} characters`)
        }
        const expiresAt = input.expiresAt ?? null
        if (expiresAt !== null && expiresAt <= now) {
          return yield* InvalidInput.of("expiresAt", "must be in the future")
        }
        const problem = input.scopes == null ? undefined : scopesProblem(input.scopes)
        if (problem !== undefined) return yield* InvalidInput.of("scopes", problem)
        const scopes =
          input.scopes == null ? ALL_SCOPES : canonicalScopes(input.scopes as Array<ApiKeyScope>)
        return { name, expiresAt, scopes }
      })

    /**
     * A key for `owner` and its secret, not stored: `given` is the operator's
     * own key (already validated), else one is generated.
     */
    const mint = (owner: KeyOwner, input: NewKeyInput, at: Date, given?: string | undefined) =>
      Effect.gen(function* () {
        const { name, expiresAt, scopes } = yield* checkInput(input, at)
        const generated = given === undefined ? generateApiKey() : undefined
        const secret = generated?.key ?? given!
        const key = new KeyRecord({
          id: yield* newId<ApiKeyId>("key"),
          ownerKind: owner.kind,
          ownerId: owner.id,
          name,
          // A chosen key of the generated form is found like one; any other by its hash.
          lookupId: generated?.lookupId ?? lookupIdOf(secret) ?? null,
          hash: hashApiKey(secret),
          createdAt: at,
          expiresAt,
          revokedAt: null,
          lastUsedAt: null,
          rotatedTo: null,
          scopes
        })
        return { key, secret }
      })

    /**
     * Mints and stores a key through `insert`, retried with a fresh one if its
     * random lookup id is taken (71 bits: never, in practice); a `given` key is
     * tried once. Returns the secret in clear: the only time it is seen.
     */
    const mintAndStore = <E, R>(
      owner: KeyOwner,
      input: NewKeyInput,
      insert: (key: KeyRecord, secret: string) => Effect.Effect<void, E | ApiKeyLookupTaken, R>,
      given?: string | undefined
    ) => {
      const attempt = Effect.gen(function* () {
        const at = new Date(yield* Clock.currentTimeMillis)
        const minted = yield* mint(owner, input, at, given)
        yield* insert(minted.key, minted.secret)
        return minted
      })
      return given === undefined
        ? Effect.retry(attempt, {
            times: 3,
            while: (e) => (e as { _tag?: string })?._tag === "ApiKeyLookupTaken"
          })
        : attempt
    }

    /**
     * Refuses a key (made, or a rotation's replacement) that `by`, the key a
     * request acts with, may not grant: more scopes or a later end than its own.
     */
    const checkGrant = (by: ActingKey | undefined, key: KeyRecord) => {
      const refused =
        by === undefined
          ? undefined
          : grantRefusal(
              { scopes: by.scopes, endsAt: keyEndsAt(by) },
              { scopes: key.scopes, expiresAt: key.expiresAt }
            )
      return refused === undefined ? Effect.void : Effect.fail(refused)
    }

    /**
     * A new key; `actor` (who creates it) for the audit trail, `withKey` what
     * to write with it, `by` the key the request acts with (none for the
     * operator and the embedder): the new key gets its scopes unless others
     * are asked, and never more, nor a later end.
     */
    const create = (
      owner: KeyOwner,
      input: NewKeyInput,
      options: {
        readonly actor?: AuditActor | undefined
        readonly withKey?: WithNewKey
        readonly by?: ActingKey | undefined
      } = {}
    ) =>
      mintAndStore<InsufficientScope, never>(
        owner,
        { ...input, scopes: input.scopes ?? options.by?.scopes },
        (key, secret) =>
          Effect.gen(function* () {
            yield* checkGrant(options.by, key)
            const extras = options.withKey ? yield* options.withKey(key, secret) : {}
            const audit = yield* keyCreatedAudit(owner, options.actor)
            yield* store.insert(key, { ...extras, audit })
          })
      )

    const get = (owner: KeyOwner, id: ApiKeyId) =>
      Effect.flatMap(store.find(owner, id), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.fail(new ApiKeyNotFound({ keyId: id }))
      )

    const revoke = (
      owner: KeyOwner,
      id: ApiKeyId,
      options: { readonly keepOneActive: boolean; readonly actor?: AuditActor | undefined }
    ) =>
      Effect.gen(function* () {
        const at = new Date(yield* Clock.currentTimeMillis)
        const before = Option.getOrUndefined(yield* store.find(owner, id))
        const audit = yield* auditOf<KeyRecord>(owner, options.actor, 1, (key) => [
          {
            action: "api_key.revoked",
            subject: key.id,
            before: before === undefined ? null : auditView(before),
            after: auditView(key)
          }
        ])
        const outcome = yield* store.revoke(owner, id, at, {
          keepOneActive: options.keepOneActive,
          audit
        })
        switch (outcome._tag) {
          case "NotFound":
            return yield* new ApiKeyNotFound({ keyId: id })
          case "LastActiveKey":
            return yield* new LastActiveApiKey({ keyId: id })
          case "Revoked":
            forget(id)
            return outcome
          case "AlreadyRevoked":
            return outcome
        }
      })

    /**
     * A new key for the same owner, name, expiry and scopes; the old one
     * stays accepted for `overlapSeconds`, then ends. `withKey` gets the new
     * key and the old one as the rotation leaves it; `by` is the key the
     * request acts with, which may not rotate a key into more than it holds.
     */
    const rotate = (
      owner: KeyOwner,
      id: ApiKeyId,
      overlapSeconds: number,
      options: {
        readonly actor?: AuditActor | undefined
        readonly by?: ActingKey | undefined
        readonly withKey?: (
          key: KeyRecord,
          secret: string,
          old: KeyRecord
        ) => Effect.Effect<{ readonly completion?: IdempotencyCompletion | undefined }>
      } = {}
    ) =>
      Effect.gen(function* () {
        const current = yield* get(owner, id)
        // Refused here, not by the expiry's check in `mint`: an ended key is inactive.
        if (!isKeyActive(current, new Date(yield* Clock.currentTimeMillis))) {
          return yield* new ApiKeyInactive({ keyId: id })
        }
        let old = current
        const same = { name: current.name, expiresAt: current.expiresAt, scopes: current.scopes }
        const minted = yield* mintAndStore(owner, same, (replacement, secret) =>
          Effect.gen(function* () {
            yield* checkGrant(options.by, replacement)
            const at = replacement.createdAt
            const endsAt = new Date(at.getTime() + overlapSeconds * 1000)
            // As the store ends it: never later than a revocation already pending.
            const ending = new KeyRecord({
              ...current,
              revokedAt:
                current.revokedAt !== null && current.revokedAt < endsAt
                  ? current.revokedAt
                  : endsAt,
              rotatedTo: replacement.id
            })
            const extras = options.withKey
              ? yield* options.withKey(replacement, secret, ending)
              : {}
            const audit = yield* auditOf<Rotation>(owner, options.actor, 2, (r) => [
              {
                action: "api_key.rotated",
                subject: r.old.id,
                before: { ...auditView(current), rotatedTo: current.rotatedTo },
                after: { ...auditView(r.old), rotatedTo: r.replacement.id }
              },
              {
                action: "api_key.created",
                subject: r.replacement.id,
                before: null,
                after: { ...auditView(r.replacement), rotatedFrom: r.old.id }
              }
            ])
            const rotated = yield* store.rotate(owner, id, replacement, endsAt, at, {
              ...extras,
              audit
            })
            if (rotated._tag === "NotFound") return yield* new ApiKeyNotFound({ keyId: id })
            if (rotated._tag === "Inactive") return yield* new ApiKeyInactive({ keyId: id })
            old = rotated.old
            forget(id)
          })
        )
        return { old, replacement: minted.key, secret: minted.secret }
      })

    /**
     * Turns presented keys of `kind` into their owners (`ownerOf` reads one
     * by id). Not suspended: call it when the request arrives.
     */
    const verifier = <A extends object, E>(
      kind: KeyOwnerKind,
      ownerOf: (ownerId: string) => Effect.Effect<Option.Option<A>>,
      invalid: () => E
    ) => {
      const cached = (presented: string, now: number): A | undefined => {
        const entry = verified.get(presented)
        return entry !== undefined && entry.kind === kind && entry.until > now
          ? (entry.owner as A)
          : undefined
      }
      const remember = (presented: string, key: KeyRecord, owner: A, now: number) => {
        if (verified.size >= VERIFIED_KEYS_MAX) verified.clear()
        const ends = keyEndsAt(key)?.getTime() ?? Number.POSITIVE_INFINITY
        verified.set(presented, {
          kind,
          owner,
          key,
          until: Math.min(now + VERIFIED_KEY_TTL_MS, ends)
        })
        verifiedWith.set(owner, key)
      }
      const touch = (key: KeyRecord, now: number) =>
        key.lastUsedAt !== null && key.lastUsedAt.getTime() > now - LAST_USED_PRECISION_MS
          ? Effect.void
          : store
              .touch(key.id, new Date(now), new Date(now - LAST_USED_PRECISION_MS))
              .pipe(
                Effect.catchAllCause((cause) =>
                  Effect.logWarning("recording an API key's last use failed", cause)
                )
              )

      const verify = (presented: string): Effect.Effect<A, E> => {
        const now = clock.unsafeCurrentTimeMillis()
        const hit = cached(presented, now)
        if (hit !== undefined) return Effect.succeed(hit)
        if (!looksLikeApiKey(presented)) return Effect.fail(invalid())
        const hash = hashApiKey(presented)
        const lookupId = lookupIdOf(presented)
        const found =
          lookupId === undefined ? store.findByHash(hash) : store.findByLookupId(lookupId)
        return Effect.flatMap(found, (record) => {
          if (
            Option.isNone(record) ||
            record.value.ownerKind !== kind ||
            !constantTimeEqual(record.value.hash, hash) ||
            !isKeyActive(record.value, new Date(now))
          ) {
            return Effect.fail(invalid())
          }
          const key = record.value
          return Effect.flatMap(ownerOf(key.ownerId), (owner) => {
            if (Option.isNone(owner)) return Effect.fail(invalid())
            remember(presented, key, owner.value, now)
            return Effect.as(touch(key, now), owner.value)
          })
        })
      }
      /** The owner of a key verified a moment ago, without any work; else undefined. */
      const known = (presented: string): A | undefined =>
        cached(presented, clock.unsafeCurrentTimeMillis())
      return Object.assign(verify, { known })
    }

    /** The key a verified owner object came with; undefined for one that came another way. */
    const keyOf = (owner: object): ApiKeyId | undefined => verifiedWith.get(owner)?.id

    /** The key a verified owner object came with, as verified; undefined for one that came another way. */
    const actingKey = (owner: object): KeyRecord | undefined => verifiedWith.get(owner)

    return {
      mint,
      mintAndStore,
      create,
      get,
      list: store.list,
      revoke,
      rotate,
      verifier,
      keyOf,
      actingKey
    } as const
  })
}) {}
