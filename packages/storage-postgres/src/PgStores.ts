/**
 * Every storage port of the core on PostgreSQL, through the `SqlClient` in
 * context (a pooled PgClient). Single-row changes are single statements whose
 * WHERE clause is the rule (not deleted, still in the expected state), so
 * concurrent instances cannot both apply them; multi-row writes and the
 * idempotency record that goes with them share one transaction; uniqueness is
 * the schema's job, and its violations map to the ports' errors.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import {
  ApiKeyLookupTaken,
  AuditStore,
  type Caip10,
  type Caip19,
  ChainJobStore,
  type CryptoSettlement,
  type CryptoSettlementId,
  EngineSecretStore,
  EventStore,
  GatewayStore,
  IdempotencyStore,
  KeyStore,
  LogoStore,
  Merchant,
  type MerchantId,
  type MerchantStatus,
  MerchantStore,
  type Outbox,
  Partner,
  type PartnerId,
  PartnerStore,
  PaymentStore,
  RateLimitStore,
  RetentionStore,
  SealedValueStore,
  SettlementAssetConflict,
  SettlementStore,
  StorageProbe,
  WalletAppStore,
  WebhookDeliveryStore,
  WebhookEndpointStore
} from "@pay/core"
import { Effect, Layer, Option } from "effect"
import { makePgAuditStore, writeAudit } from "./PgAuditStore.js"
import { makePgChainJobStore } from "./PgChainJobStore.js"
import { makePgEngineSecretStore } from "./PgEngineSecretStore.js"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { makePgEventStore, writeEvents } from "./PgEventStore.js"
import { makePgGatewayStore } from "./PgGatewayStore.js"
import { makePgIdempotencyStore, writeCompletion } from "./PgIdempotencyStore.js"
import { insertKeyRow, makePgKeyStore } from "./PgKeyStore.js"
import { makePgLogoStore } from "./PgLogoStore.js"
import { makePgPaymentStore } from "./PgPaymentStore.js"
import { makePreparedStatements, PgPool, type PreparedStatements } from "./PgPrepared.js"
import { makePgRateLimitStore } from "./PgRateLimitStore.js"
import { makePgRetentionStore } from "./PgRetentionStore.js"
import { makePgSealedValueStore } from "./PgSealedValueStore.js"
import { makePgStorageProbe } from "./PgStorageProbe.js"
import { makePgWalletAppStore } from "./PgWalletAppStore.js"
import { makePgWebhookDeliveryStore } from "./PgWebhookDeliveryStore.js"
import { makePgWebhookEndpointStore } from "./PgWebhookEndpointStore.js"

interface PartnerRow {
  readonly id: string
  readonly name: string
  readonly api_version: string
  readonly created_at: Date
}
interface MerchantRow {
  readonly id: string
  readonly partner_id: string
  readonly name: string
  readonly email: string | null
  readonly icon_url: string | null
  readonly logo_name: string | null
  readonly status: string
  readonly created_at: Date
  readonly updated_at: Date
  readonly deleted_at: Date | null
}
interface SettlementRow {
  readonly id: string
  readonly merchant_id: string
  readonly asset: string
  readonly destination: string
  readonly created_at: Date
  readonly updated_at: Date
}

// PostgreSQL's own mappings (SqliteStores.ts has their twins): times are Date here, ms
// integers there, and the other columns are text read as they are: nothing to share but names.
const toPartner = (r: PartnerRow) =>
  new Partner({
    id: r.id as PartnerId,
    name: r.name,
    apiVersion: r.api_version as Partner["apiVersion"],
    createdAt: r.created_at
  })

const toMerchant = (r: MerchantRow) =>
  new Merchant({
    id: r.id as MerchantId,
    partnerId: r.partner_id as PartnerId,
    name: r.name,
    email: r.email,
    iconUrl: r.icon_url,
    logoName: r.logo_name,
    status: r.status as MerchantStatus,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at
  })

const toSettlement = (r: SettlementRow): CryptoSettlement => ({
  id: r.id as CryptoSettlementId,
  merchantId: r.merchant_id as MerchantId,
  asset: r.asset as Caip19,
  destination: r.destination as Caip10,
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

/** Case folding for search, done in JS so it agrees with the in-memory store on all of Unicode. */
const fold = (s: string) => s.toLowerCase()

const first = <R, A>(rows: ReadonlyArray<R>, f: (row: R) => A) =>
  Option.map(Option.fromNullable(rows[0]), f)

export const makePgPartnerStore = (sql: SqlClient.SqlClient) =>
  PartnerStore.of({
    insert: (partner, key, log) =>
      sql
        .withTransaction(
          Effect.all([
            sql`INSERT INTO partners (id, name, api_version, created_at)
              VALUES (${partner.id}, ${partner.name}, ${partner.apiVersion}, ${partner.createdAt})`,
            insertKeyRow(sql, key),
            writeAudit(sql, log, key)
          ])
        )
        .pipe(
          Effect.asVoid,
          onUniqueViolation("keys_lookup_id_key", () => Effect.fail(new ApiKeyLookupTaken())),
          onUniqueViolation("keys_hash_key", () => Effect.fail(new ApiKeyLookupTaken())),
          orDieSql
        ),
    find: (id) =>
      sql<PartnerRow>`SELECT * FROM partners WHERE id = ${id}`.pipe(
        Effect.map((rows) => first(rows, toPartner)),
        orDieSql
      ),
    list: sql<PartnerRow>`SELECT * FROM partners ORDER BY created_at, id`.pipe(
      Effect.map((rows) => rows.map(toPartner)),
      orDieSql
    )
  })

export const makePgMerchantStore = (sql: SqlClient.SqlClient, prepared: PreparedStatements) => {
  const one = (rows: ReadonlyArray<MerchantRow>) => first(rows, toMerchant)
  // Every payment created reads its merchant: prepared, and its columns named, so a column a
  // later version adds does not change what a running instance's prepared statement returns.
  const findPrepared = prepared.prepare<MerchantRow>(
    "pay_merchant_find",
    `SELECT id, partner_id, name, email, icon_url, logo_name, status, created_at, updated_at,
      deleted_at FROM merchants WHERE id = $1`
  )
  /** A one-row write returning the row, and the events made of it, in one transaction. */
  const changeMerchant = (
    write: Effect.Effect<ReadonlyArray<MerchantRow>, SqlError.SqlError>,
    outbox: Outbox<Merchant> | undefined
  ) =>
    (outbox === undefined
      ? Effect.map(write, one)
      : sql.withTransaction(
          Effect.gen(function* () {
            const written = one(yield* write)
            if (Option.isSome(written)) yield* writeEvents(sql, outbox, written.value)
            return written
          })
        )
    ).pipe(orDieSql)
  return MerchantStore.of({
    insert: (m, completion, outbox) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO merchants (id, partner_id, name, name_folded, email, icon_url,
                logo_name, status, created_at, updated_at, deleted_at)
              VALUES (${m.id}, ${m.partnerId}, ${m.name}, ${fold(m.name)}, ${m.email},
                ${m.iconUrl}, ${m.logoName}, ${m.status}, ${m.createdAt}, ${m.updatedAt},
                ${m.deletedAt})`
            if (completion !== undefined) yield* writeCompletion(sql, completion)
            yield* writeEvents(sql, outbox, m)
          })
        )
        .pipe(orDieSql),
    find: (id) => findPrepared([id]).pipe(Effect.map(one), orDieSql),
    list: (query) => {
      // strpos, not LIKE: the search is a literal substring, `%` and `_` included.
      const filter = sql.and([
        sql`partner_id = ${query.partnerId}`,
        sql`deleted_at IS NULL`,
        ...(query.status === undefined ? [] : [sql`status = ${query.status}`]),
        ...(query.search === undefined
          ? []
          : [
              sql`(strpos(name_folded, ${fold(query.search)}) > 0
                OR strpos(lower(id), ${fold(query.search)}) > 0)`
            ])
      ])
      const before = query.before === undefined ? sql`` : sql`AND id < ${query.before}`
      return Effect.all(
        [
          sql<MerchantRow>`SELECT * FROM merchants WHERE ${filter} ${before}
            ORDER BY id DESC LIMIT ${query.limit}`,
          sql<{ readonly n: string }>`SELECT count(*) AS n FROM merchants WHERE ${filter}`
        ],
        { concurrency: 2 }
      ).pipe(
        Effect.map(([rows, [count]]) => ({
          merchants: rows.map(toMerchant),
          totalCount: Number(count?.n ?? 0)
        })),
        orDieSql
      )
    },
    update: (id, changes, at, outbox) =>
      changeMerchant(
        sql<MerchantRow>`UPDATE merchants SET
          name = coalesce(${changes.name ?? null}, name),
          name_folded = coalesce(${changes.name === undefined ? null : fold(changes.name)},
            name_folded),
          email = coalesce(${changes.email ?? null}, email),
          icon_url = CASE WHEN ${changes.logo !== undefined}::boolean
            THEN ${changes.logo?.iconUrl ?? null} ELSE icon_url END,
          logo_name = CASE WHEN ${changes.logo !== undefined}::boolean
            THEN ${changes.logo?.logoName ?? null} ELSE logo_name END,
          updated_at = ${at}
        WHERE id = ${id} AND deleted_at IS NULL RETURNING *`,
        outbox
      ),
    setStatus: (id, status, at, outbox) =>
      changeMerchant(
        sql<MerchantRow>`UPDATE merchants SET status = ${status}, updated_at = ${at}
          WHERE id = ${id} AND deleted_at IS NULL RETURNING *`,
        outbox
      ),
    markDeleted: (id, at, outbox) =>
      Effect.flatMap(
        changeMerchant(
          sql<MerchantRow>`UPDATE merchants SET deleted_at = ${at}
            WHERE id = ${id} AND deleted_at IS NULL RETURNING *`,
          outbox
        ),
        // Deleted before: the first time stands, and nothing is written.
        (deleted) =>
          Option.isSome(deleted)
            ? Effect.succeed(deleted)
            : sql<MerchantRow>`SELECT * FROM merchants WHERE id = ${id}`.pipe(
                Effect.map(one),
                orDieSql
              )
      )
  })
}

export const makePgSettlementStore = (sql: SqlClient.SqlClient) =>
  SettlementStore.of({
    insertAll: (rows, completion, outbox, audit) => {
      // One row at a time, so a clash names the asset that caused it.
      const inserts = Effect.forEach(
        rows,
        (s) =>
          sql`INSERT INTO crypto_settlements (id, merchant_id, asset, destination, created_at,
              updated_at)
            VALUES (${s.id}, ${s.merchantId}, ${s.asset}, ${s.destination}, ${s.createdAt},
              ${s.updatedAt})`.pipe(
            onUniqueViolation("crypto_settlements_live_asset", () =>
              Effect.fail(new SettlementAssetConflict({ asset: s.asset, merchantId: s.merchantId }))
            )
          ),
        { discard: true }
      )
      // All or none, with the completion, the events and the audit entries if any.
      return sql
        .withTransaction(
          Effect.gen(function* () {
            yield* inserts
            if (completion !== undefined) yield* writeCompletion(sql, completion)
            yield* writeEvents(sql, outbox, rows)
            yield* writeAudit(sql, audit, rows)
          })
        )
        .pipe(orDieSql)
    },
    listByMerchant: (merchantId) =>
      sql<SettlementRow>`SELECT * FROM crypto_settlements
        WHERE merchant_id = ${merchantId} AND deleted_at IS NULL ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(toSettlement)),
        orDieSql
      ),
    updateDestination: (merchantId, id, destination, at, outbox, audit) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            // The row as it was, locked until the commit, for the audit entry.
            const before =
              audit === undefined
                ? Option.none<CryptoSettlement>()
                : first(
                    yield* sql<SettlementRow>`SELECT * FROM crypto_settlements
                      WHERE id = ${id} AND merchant_id = ${merchantId} AND deleted_at IS NULL
                      FOR UPDATE`,
                    toSettlement
                  )
            const updated = first(
              yield* sql<SettlementRow>`UPDATE crypto_settlements
                SET destination = ${destination}, updated_at = ${at}
                WHERE id = ${id} AND merchant_id = ${merchantId} AND deleted_at IS NULL
                RETURNING *`,
              toSettlement
            )
            if (Option.isSome(updated)) {
              yield* writeEvents(sql, outbox, updated.value)
              if (Option.isSome(before)) {
                yield* writeAudit(sql, audit, { before: before.value, after: updated.value })
              }
            }
            return updated
          })
        )
        .pipe(orDieSql),
    remove: (merchantId, id, at, outbox, audit) =>
      Effect.gen(function* () {
        const removed = yield* sql.withTransaction(
          Effect.gen(function* () {
            // Asset and destination are as they were: the settlement before its removal.
            const rows = yield* sql<SettlementRow>`UPDATE crypto_settlements
              SET deleted_at = ${at}, updated_at = ${at}
              WHERE id = ${id} AND merchant_id = ${merchantId} AND deleted_at IS NULL
              RETURNING *`
            if (rows.length === 1) {
              yield* writeEvents(sql, outbox, id)
              yield* writeAudit(sql, audit, toSettlement(rows[0]!))
            }
            return rows
          })
        )
        if (removed.length === 1) return "removed" as const
        // A concurrent remove waited on our row lock and saw it deleted: already_removed.
        const existing = yield* sql`SELECT 1 AS found FROM crypto_settlements
          WHERE id = ${id} AND merchant_id = ${merchantId}`
        return existing.length === 1 ? ("already_removed" as const) : ("not_found" as const)
      }).pipe(orDieSql)
  })

/** The stores on the `SqlClient` in context. */
export const PgStores = Layer.unwrapEffect(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const prepared = makePreparedStatements(
      sql,
      Option.getOrUndefined(yield* Effect.serviceOption(PgPool))
    )
    return Layer.mergeAll(
      Layer.succeed(AuditStore, makePgAuditStore(sql)),
      Layer.succeed(RateLimitStore, makePgRateLimitStore(sql)),
      Layer.succeed(LogoStore, makePgLogoStore(sql)),
      Layer.succeed(EngineSecretStore, makePgEngineSecretStore(sql)),
      Layer.succeed(SealedValueStore, makePgSealedValueStore(sql)),
      Layer.succeed(EventStore, makePgEventStore(sql)),
      Layer.succeed(WebhookDeliveryStore, makePgWebhookDeliveryStore(sql)),
      Layer.succeed(WebhookEndpointStore, makePgWebhookEndpointStore(sql)),
      Layer.succeed(PaymentStore, makePgPaymentStore(sql, prepared)),
      Layer.succeed(ChainJobStore, makePgChainJobStore(sql)),
      Layer.succeed(GatewayStore, makePgGatewayStore(sql)),
      Layer.succeed(PartnerStore, makePgPartnerStore(sql)),
      Layer.succeed(WalletAppStore, makePgWalletAppStore(sql)),
      Layer.succeed(KeyStore, makePgKeyStore(sql)),
      Layer.succeed(MerchantStore, makePgMerchantStore(sql, prepared)),
      Layer.succeed(SettlementStore, makePgSettlementStore(sql)),
      Layer.succeed(IdempotencyStore, makePgIdempotencyStore(sql)),
      Layer.succeed(RetentionStore, makePgRetentionStore(sql)),
      Layer.succeed(StorageProbe, makePgStorageProbe(sql))
    )
  })
)
