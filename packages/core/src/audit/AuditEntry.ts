/**
 * The audit trail: who changed a partner's credentials or where its
 * merchants' money goes, when, and from what to what. An entry is written in
 * the same database transaction as the change it records (as events are:
 * events/Event.ts), so a committed change always has its entry and a
 * rolled-back one never does. Entries are never changed, and the engine never
 * purges them (docs/operations.md: kept at least a year).
 *
 * `before` and `after` are JSON snapshots of what changed (null when there
 * was nothing before, or is nothing after). Secrets never go in: a key's
 * public id, name or expiry may, never the key, its hash or a signing secret.
 */
import { Schema } from "effect"
import { PartnerId } from "../identity/Partner.js"
import { prefixedId } from "../shared/Ids.js"

export const AuditEntryId = prefixedId("aud", "AuditEntryId")
export type AuditEntryId = typeof AuditEntryId.Type

/**
 * Who made the change:
 * - `api_key`: a partner API request; `keyId` is the public id of the key it
 *   carried (`key_…`; absent only for a request whose key is not known by id);
 * - `cli`: an operator through `npm run pay`;
 * - `embedder`: the embedding platform's own code, calling the engine's services;
 * - `engine`: the engine itself (the first partner's key, at the first start).
 */
export const AuditActor = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("api_key"), keyId: Schema.optional(Schema.String) }),
  Schema.Struct({ kind: Schema.Literal("cli") }),
  Schema.Struct({ kind: Schema.Literal("embedder") }),
  Schema.Struct({ kind: Schema.Literal("engine") })
)
export type AuditActor = typeof AuditActor.Type
export type AuditActorKind = AuditActor["kind"]

export const apiKeyActor = (keyId?: string | undefined): AuditActor =>
  keyId === undefined ? { kind: "api_key" } : { kind: "api_key", keyId }
export const cliActor: AuditActor = { kind: "cli" }
export const embedderActor: AuditActor = { kind: "embedder" }
export const engineActor: AuditActor = { kind: "engine" }

/** The actor as one short word for people: `key key_…`, `key` (no id known), `cli`, … */
export const actorLabel = (actor: AuditActor): string =>
  actor.kind === "api_key"
    ? actor.keyId === undefined
      ? "api key"
      : `key ${actor.keyId}`
    : actor.kind

export const AUDIT_ACTIONS = [
  "settlement.created",
  "settlement.updated",
  "settlement.deleted",
  "api_key.created",
  "api_key.rotated",
  "api_key.revoked",
  /** An operator sent a payment's settlement elsewhere than where it was due (`pay payments settle --destination`). */
  "payment.settlement_redirected"
] as const
export const AuditAction = Schema.Literal(...AUDIT_ACTIONS)
export type AuditAction = typeof AuditAction.Type

export class AuditEntry extends Schema.Class<AuditEntry>("AuditEntry")({
  id: AuditEntryId,
  /** When the change was made. */
  at: Schema.DateFromSelf,
  /** The partner whose credentials or merchants it changed. */
  partnerId: PartnerId,
  actor: AuditActor,
  action: AuditAction,
  /** The resource changed: a settlement's id, a key's public id. */
  subject: Schema.String,
  merchantId: Schema.NullOr(Schema.String),
  /** JSON: what it was, or null (a creation). */
  before: Schema.Unknown,
  /** JSON: what it became, or null (a removal). */
  after: Schema.Unknown
}) {}

/**
 * The entries a store write adds in its own transaction, made from what it
 * changed: called only when the write changed something, so a refused or
 * repeated change (an idempotent replay, a second removal) records nothing.
 */
export type AuditLog<A> = (changed: A) => ReadonlyArray<AuditEntry>

/** The stored form of `before` and `after`: JSON text, or null. */
export const auditValueToJson = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value)

export const auditValueFromJson = (text: string | null): unknown =>
  text === null ? null : JSON.parse(text)
