/**
 * The storage port for API keys of every owner. The rules that must hold
 * under concurrency are the store's, each in one transaction: a revocation
 * that must leave the owner another key checks and writes together (two
 * requests revoking a partner's last two keys at once cannot both win), and a
 * rotation ends the old key only if it is still active.
 */
import { Context, type Effect, type Option } from "effect"
import type { AuditLog } from "../audit/AuditEntry.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { ApiKeyId, ApiKeyLookupTaken, KeyOwner, KeyRecord } from "./KeyRecord.js"

/** What is written in the same transaction as a key change, if it changes anything. */
export interface KeyChangeExtras<Changed = KeyRecord> {
  /** The idempotent response of the request that made the change. */
  readonly completion?: IdempotencyCompletion | undefined
  /** The audit entries of the change, made from what it changed. */
  readonly audit?: AuditLog<Changed> | undefined
}

/** What a rotation changed: the old key as it now ends, and its replacement. */
export interface Rotation {
  readonly old: KeyRecord
  readonly replacement: KeyRecord
}

export type RevokeOutcome =
  | { readonly _tag: "Revoked"; readonly key: KeyRecord }
  /** It had already stopped: nothing changed. */
  | { readonly _tag: "AlreadyRevoked"; readonly key: KeyRecord }
  | { readonly _tag: "NotFound" }
  /** `keepOneActive` and no other key of the owner would be left. */
  | { readonly _tag: "LastActiveKey" }

export type RotateOutcome =
  | { readonly _tag: "Rotated"; readonly old: KeyRecord; readonly replacement: KeyRecord }
  | { readonly _tag: "NotFound" }
  /** Revoked or expired already: a rotation would revive nothing. */
  | { readonly _tag: "Inactive" }

export class KeyStore extends Context.Tag("@pay/core/KeyStore")<
  KeyStore,
  {
    /** A new key of an existing owner; a taken lookup id or hash stores nothing. */
    readonly insert: (
      key: KeyRecord,
      extras?: KeyChangeExtras
    ) => Effect.Effect<void, ApiKeyLookupTaken>
    /** The key whose generated form carries this lookup id, whatever its state. */
    readonly findByLookupId: (lookupId: string) => Effect.Effect<Option.Option<KeyRecord>>
    /** The key with this hash (a key the operator chose has no lookup id). */
    readonly findByHash: (hash: string) => Effect.Effect<Option.Option<KeyRecord>>
    /** The owner's key with this id; another owner's is none. */
    readonly find: (owner: KeyOwner, id: ApiKeyId) => Effect.Effect<Option.Option<KeyRecord>>
    /** The owner's keys, newest first, revoked ones included. */
    readonly list: (owner: KeyOwner) => Effect.Effect<ReadonlyArray<KeyRecord>>
    /**
     * Ends the key at `at`. With `keepOneActive`, only if the owner keeps
     * another key that is active at `at` with no revocation pending.
     */
    readonly revoke: (
      owner: KeyOwner,
      id: ApiKeyId,
      at: Date,
      options: { readonly keepOneActive: boolean } & KeyChangeExtras
    ) => Effect.Effect<RevokeOutcome>
    /**
     * Stores `replacement` and ends the old key at `oldEndsAt` (or earlier, if
     * it was to end earlier already), if it is active at `at`.
     */
    readonly rotate: (
      owner: KeyOwner,
      id: ApiKeyId,
      replacement: KeyRecord,
      oldEndsAt: Date,
      at: Date,
      extras?: KeyChangeExtras<Rotation>
    ) => Effect.Effect<RotateOutcome, ApiKeyLookupTaken>
    /** Records a use at `at`, when the last one recorded is before `staleBefore` or none. */
    readonly touch: (id: ApiKeyId, at: Date, staleBefore: Date) => Effect.Effect<void>
  }
>() {}
