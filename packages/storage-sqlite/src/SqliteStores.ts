/**
 * Every storage port of the core on one SQLite connection. Statements are
 * prepared once; multi-row writes and the idempotency record that goes with
 * them share one transaction; uniqueness is enforced by the schema's indexes.
 */
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
  IdempotencyClaimLost,
  type IdempotencyCompletion,
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
import { makeGroupCommit } from "./GroupCommit.js"
import { makeSqliteAuditLog } from "./SqliteAuditStore.js"
import { makeSqliteChainJobStore } from "./SqliteChainJobStore.js"
import { type SqliteConnection, SqliteDatabase, type SqliteValue } from "./SqliteDatabase.js"
import { makeSqliteEngineSecretStore } from "./SqliteEngineSecretStore.js"
import { isUniqueViolation } from "./SqliteErrors.js"
import { makeSqliteEventStore } from "./SqliteEventStore.js"
import { makeSqliteGatewayStore } from "./SqliteGatewayStore.js"
import { makeSqliteKeyStore } from "./SqliteKeyStore.js"
import { makeSqliteLogoStore } from "./SqliteLogoStore.js"
import { makeSqlitePaymentStore } from "./SqlitePaymentStore.js"
import { localPurges, SqlitePurgeWorker } from "./SqlitePurge.js"
import { makeSqliteRateLimitStore } from "./SqliteRateLimitStore.js"
import { SqlitePaymentReads } from "./SqliteReadWorker.js"
import { makeSqliteRetentionStore } from "./SqliteRetentionStore.js"
import { makeSqliteSealedValueStore } from "./SqliteSealedValueStore.js"
import { makeSqliteStorageProbe } from "./SqliteStorageProbe.js"
import { makeSqliteWalletAppStore } from "./SqliteWalletAppStore.js"
import { makeSqliteWebhookDeliveryStore } from "./SqliteWebhookDeliveryStore.js"
import { makeSqliteWebhookEndpointStore } from "./SqliteWebhookEndpointStore.js"
import { makeWalSync } from "./WalSync.js"

interface PartnerRow {
  id: string
  name: string
  api_version: string
  created_at: number
}
interface MerchantRow {
  id: string
  partner_id: string
  name: string
  email: string | null
  icon_url: string | null
  logo_name: string | null
  status: string
  created_at: number
  updated_at: number
  deleted_at: number | null
}
interface SettlementRow {
  id: string
  merchant_id: string
  asset: string
  destination: string
  created_at: number
  updated_at: number
  deleted_at: number | null
}
interface IdempotencyRow {
  fingerprint: string
  locked_at: number
  created_at: number
  response_status: number | null
  response_body: string | null
}

// SQLite's own mappings (PgStores.ts has their twins): times are ms integers here, Date
// there, and the other columns are text read as they are: nothing to share but names.
const toPartner = (r: PartnerRow) =>
  new Partner({
    id: r.id as PartnerId,
    name: r.name,
    apiVersion: r.api_version as Partner["apiVersion"],
    createdAt: new Date(r.created_at)
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
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    deletedAt: r.deleted_at === null ? null : new Date(r.deleted_at)
  })

const toSettlement = (r: SettlementRow): CryptoSettlement => ({
  id: r.id as CryptoSettlementId,
  merchantId: r.merchant_id as MerchantId,
  asset: r.asset as Caip19,
  destination: r.destination as Caip10,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at)
})

/** Case folding for search, done in JS so it covers all of Unicode, not only ASCII. */
const fold = (s: string) => s.toLowerCase()

export const makeSqliteStores = (
  db: SqliteConnection,
  /** Where listings and statistics run instead of `db` (SqliteReadWorker.ts), if anywhere. */
  reads?: SqlitePaymentReads["Type"],
  /** Where the purge's deletes run instead of `db` (SqlitePurge.ts), if anywhere. */
  purgeWorker?: SqlitePurgeWorker["Type"]
) => {
  const purges = purgeWorker ?? localPurges(db)
  const q = (sql: string) => db.prepare(sql)
  const one = <R>(stmt: ReturnType<typeof q>, ...params: ReadonlyArray<SqliteValue>) =>
    stmt.get(...params) as R | undefined

  /**
   * The audit trail: `audit(log, changed)` (or `insertAuditEntries(entries)`) inside a
   * write's transaction records the entries of what it changed (SqliteAuditStore.ts).
   */
  const auditLog = makeSqliteAuditLog(db)
  const { audit } = auditLog

  // The frequent writes (idempotency claims and answers, payment creates, transitions,
  // refunds, chain jobs, options, webhook deliveries) share commits when concurrent
  // (GroupCommit.ts); on a file their fsync runs off the event loop (WalSync.ts). The rare
  // ones (partners, merchants, keys, endpoints) commit on their own, fsync included.
  const onFile = db.filename !== undefined && db.filename !== "" && db.filename !== ":memory:"
  const writes = makeGroupCommit(db, {
    walSync: onFile ? makeWalSync(db.filename) : undefined
  })

  const partnerSql = {
    insert: q("INSERT INTO partners (id, name, api_version, created_at) VALUES (?, ?, ?, ?)"),
    byId: q("SELECT * FROM partners WHERE id = ?"),
    all: q("SELECT * FROM partners ORDER BY created_at, id")
  }

  const partners = PartnerStore.of({
    insert: (partner, key, log) =>
      Effect.suspend(() => {
        try {
          db.transaction(() => {
            partnerSql.insert.run(
              partner.id,
              partner.name,
              partner.apiVersion,
              partner.createdAt.getTime()
            )
            keys.insertRow(key)
            audit(log, key)
          })
          return Effect.void
        } catch (error) {
          if (isUniqueViolation(error)) return Effect.fail(new ApiKeyLookupTaken())
          throw error
        }
      }),
    find: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(one<PartnerRow>(partnerSql.byId, id)), toPartner)
      ),
    list: Effect.sync(() => (partnerSql.all.all() as Array<PartnerRow>).map(toPartner))
  })

  const completeSql = q(`UPDATE idempotency_keys SET response_status = ?, response_body = ?
    WHERE partner_id = ? AND route = ? AND key = ? AND claim_token = ? AND response_status IS NULL`)
  /** Inside the work's transaction: a claim no longer held throws, and the work rolls back. */
  const complete = (completion: IdempotencyCompletion | undefined) => {
    if (completion === undefined) return
    const { scope, token, response } = completion
    const written = completeSql.run(
      response.status,
      response.body,
      scope.partnerId,
      scope.route,
      scope.key,
      token
    )
    if (Number(written.changes) !== 1) throw new IdempotencyClaimLost({ scope })
  }
  const keys = makeSqliteKeyStore(db, writes, complete, audit)

  const merchantSql = {
    insert: q(`INSERT INTO merchants (id, partner_id, name, name_folded, email, icon_url,
      logo_name, status, created_at, updated_at, deleted_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    byId: q("SELECT * FROM merchants WHERE id = ?"),
    // Plain `?` only: better-sqlite3 and bun:sqlite read numbered parameters differently.
    update: q(`UPDATE merchants SET
        name = coalesce(?, name),
        name_folded = coalesce(?, name_folded),
        email = coalesce(?, email),
        icon_url = CASE WHEN ? = 1 THEN ? ELSE icon_url END,
        logo_name = CASE WHEN ? = 1 THEN ? ELSE logo_name END,
        updated_at = ?
      WHERE id = ? AND deleted_at IS NULL`),
    setStatus: q(
      "UPDATE merchants SET status = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL"
    ),
    markDeleted: q("UPDATE merchants SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL")
  }
  // The filter is built from fixed fragments; values are always bound parameters.
  const listFilter = `FROM merchants WHERE partner_id = ? AND deleted_at IS NULL
    AND (? IS NULL OR status = ?)
    AND (? IS NULL OR instr(name_folded, ?) > 0 OR instr(lower(id), ?) > 0)`
  const listPage = q(`SELECT * ${listFilter} AND (? IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`)
  const listCount = q(`SELECT count(*) AS n ${listFilter}`)

  const findMerchant = (id: string) =>
    Option.map(Option.fromNullable(one<MerchantRow>(merchantSql.byId, id)), toMerchant)

  const events = makeSqliteEventStore(db)
  /** Inside the write's transaction: the events its outbox makes of what it wrote. */
  const publish = <A>(outbox: Outbox<A> | undefined, written: A) => {
    if (outbox) events.writeEvents(outbox(written))
  }
  /** A one-row merchant write, then the row as written and its events, in one transaction. */
  const changeMerchant = (
    id: MerchantId,
    write: () => { readonly changes: number | bigint },
    outbox: Outbox<Merchant> | undefined
  ) =>
    Effect.sync(() =>
      db.transaction(() => {
        if (Number(write().changes) !== 1) return Option.none<Merchant>()
        const written = findMerchant(id)
        if (Option.isSome(written)) publish(outbox, written.value)
        return written
      })
    )

  const merchants = MerchantStore.of({
    insert: (m, completion, outbox) =>
      Effect.sync(() =>
        db.transaction(() => {
          merchantSql.insert.run(
            m.id,
            m.partnerId,
            m.name,
            fold(m.name),
            m.email,
            m.iconUrl,
            m.logoName,
            m.status,
            m.createdAt.getTime(),
            m.updatedAt.getTime(),
            m.deletedAt?.getTime() ?? null
          )
          complete(completion)
          publish(outbox, m)
        })
      ),
    find: (id) => Effect.sync(() => findMerchant(id)),
    list: (query) =>
      Effect.sync(() => {
        const status = query.status ?? null
        const search = query.search === undefined ? null : fold(query.search)
        const filter = [query.partnerId, status, status, search, search, search]
        const before = query.before ?? null
        const rows = listPage.all(...filter, before, before, query.limit) as Array<MerchantRow>
        const { n } = listCount.get(...filter) as { n: number }
        return { merchants: rows.map(toMerchant), totalCount: n }
      }),
    update: (id, changes, at, outbox) =>
      changeMerchant(
        id,
        () =>
          merchantSql.update.run(
            changes.name ?? null,
            changes.name === undefined ? null : fold(changes.name),
            changes.email ?? null,
            changes.logo === undefined ? 0 : 1,
            changes.logo?.iconUrl ?? null,
            changes.logo === undefined ? 0 : 1,
            changes.logo?.logoName ?? null,
            at.getTime(),
            id
          ),
        outbox
      ),
    setStatus: (id, status, at, outbox) =>
      changeMerchant(id, () => merchantSql.setStatus.run(status, at.getTime(), id), outbox),
    markDeleted: (id, at, outbox) =>
      Effect.flatMap(
        changeMerchant(id, () => merchantSql.markDeleted.run(at.getTime(), id), outbox),
        // Deleted before: the first time stands, and nothing is written.
        (deleted) =>
          Option.isSome(deleted) ? Effect.succeed(deleted) : Effect.sync(() => findMerchant(id))
      )
  })

  const settlementSql = {
    insert: q(`INSERT INTO crypto_settlements (id, merchant_id, asset, destination, created_at,
      updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, NULL)`),
    live: q(`SELECT * FROM crypto_settlements WHERE merchant_id = ? AND deleted_at IS NULL
      ORDER BY id`),
    byId: q("SELECT * FROM crypto_settlements WHERE id = ? AND merchant_id = ?"),
    update: q(`UPDATE crypto_settlements SET destination = ?, updated_at = ?
      WHERE id = ? AND merchant_id = ? AND deleted_at IS NULL`),
    remove: q(`UPDATE crypto_settlements SET deleted_at = ?, updated_at = ?
      WHERE id = ? AND merchant_id = ? AND deleted_at IS NULL`)
  }

  const settlements = SettlementStore.of({
    insertAll: (rows, completion, outbox, log) =>
      Effect.suspend(() => {
        let current: CryptoSettlement | undefined
        try {
          db.transaction(() => {
            for (const s of rows) {
              current = s
              settlementSql.insert.run(
                s.id,
                s.merchantId,
                s.asset,
                s.destination,
                s.createdAt.getTime(),
                s.updatedAt.getTime()
              )
            }
            complete(completion)
            publish(outbox, rows)
            audit(log, rows)
          })
          return Effect.void
        } catch (error) {
          if (isUniqueViolation(error) && current !== undefined) {
            return Effect.fail(
              new SettlementAssetConflict({ asset: current.asset, merchantId: current.merchantId })
            )
          }
          throw error
        }
      }),
    listByMerchant: (merchantId) =>
      Effect.sync(() =>
        (settlementSql.live.all(merchantId) as Array<SettlementRow>).map(toSettlement)
      ),
    updateDestination: (merchantId, id, destination, at, outbox, log) =>
      Effect.sync(() =>
        db.transaction(() => {
          const before = one<SettlementRow>(settlementSql.byId, id, merchantId)
          const { changes } = settlementSql.update.run(destination, at.getTime(), id, merchantId)
          if (before === undefined || Number(changes) !== 1) return Option.none()
          const updated = toSettlement(one<SettlementRow>(settlementSql.byId, id, merchantId)!)
          publish(outbox, updated)
          audit(log, { before: toSettlement(before), after: updated })
          return Option.some(updated)
        })
      ),
    remove: (merchantId, id, at, outbox, log) =>
      Effect.sync(() =>
        db.transaction(() => {
          const row = one<SettlementRow>(settlementSql.byId, id, merchantId)
          if (row === undefined) return "not_found" as const
          if (row.deleted_at !== null) return "already_removed" as const
          settlementSql.remove.run(at.getTime(), at.getTime(), id, merchantId)
          publish(outbox, id)
          audit(log, toSettlement(row))
          return "removed" as const
        })
      )
  })

  const idempotencySql = {
    claim: q(`INSERT INTO idempotency_keys
        (partner_id, route, key, fingerprint, claim_token, locked_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
    read: q(`SELECT fingerprint, locked_at, created_at, response_status, response_body
      FROM idempotency_keys WHERE partner_id = ? AND route = ? AND key = ?`),
    // A finished key past its replay window, claimed as new: compare-and-set on its time.
    renewal: q(`UPDATE idempotency_keys SET fingerprint = ?, claim_token = ?, locked_at = ?,
        created_at = ?, response_status = NULL, response_body = NULL
      WHERE partner_id = ? AND route = ? AND key = ? AND response_status IS NOT NULL
        AND created_at = ?`),
    takeOver: q(`UPDATE idempotency_keys SET claim_token = ?, locked_at = ?
      WHERE partner_id = ? AND route = ? AND key = ? AND response_status IS NULL AND locked_at = ?`),
    renew: q(`UPDATE idempotency_keys SET locked_at = ?
      WHERE partner_id = ? AND route = ? AND key = ? AND claim_token = ?
        AND response_status IS NULL`),
    release: q(`DELETE FROM idempotency_keys
      WHERE partner_id = ? AND route = ? AND key = ? AND claim_token = ?
        AND response_status IS NULL`)
  }

  const idempotency = IdempotencyStore.of({
    claim: (scope, fingerprint, token, now, staleBefore, replayableSince) =>
      writes.write(() => {
        const key = [scope.partnerId, scope.route, scope.key] as const
        const at = now.getTime()
        const inserted = idempotencySql.claim.run(...key, fingerprint, token, at, at)
        if (Number(inserted.changes) === 1) return { _tag: "Claimed" } as const
        const row = one<IdempotencyRow>(idempotencySql.read, ...key)
        // Released between our insert and read: the caller tries again.
        if (row === undefined) return { _tag: "InProgress" } as const
        if (
          row.response_status !== null &&
          replayableSince !== undefined &&
          row.created_at < replayableSince.getTime()
        ) {
          const renewed = idempotencySql.renewal.run(
            fingerprint,
            token,
            at,
            at,
            ...key,
            row.created_at
          )
          return Number(renewed.changes) === 1
            ? ({ _tag: "Claimed" } as const)
            : ({ _tag: "InProgress" } as const)
        }
        if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
        if (row.response_status !== null) {
          return {
            _tag: "Replay",
            response: { status: row.response_status, body: row.response_body ?? "" }
          } as const
        }
        if (row.locked_at < staleBefore.getTime()) {
          const taken = idempotencySql.takeOver.run(token, at, ...key, row.locked_at)
          if (Number(taken.changes) === 1) return { _tag: "Claimed" } as const
        }
        return { _tag: "InProgress" } as const
      }),
    renew: (scope, token, now) =>
      writes.write(
        () =>
          Number(
            idempotencySql.renew.run(now.getTime(), scope.partnerId, scope.route, scope.key, token)
              .changes
          ) === 1
      ),
    complete: (completion) => writes.write(() => complete(completion)),
    release: (scope, token) =>
      writes.write(() => {
        idempotencySql.release.run(scope.partnerId, scope.route, scope.key, token)
      }),
    purge: (before, limit) => purges.run("idempotencyKeys", before.getTime(), limit)
  })

  const chainJobs = makeSqliteChainJobStore(
    db,
    writes,
    events.writeEvents,
    auditLog.insertAuditEntries
  )

  return Layer.mergeAll(
    Layer.succeed(RateLimitStore, makeSqliteRateLimitStore(db, writes)),
    Layer.succeed(AuditStore, auditLog.store),
    Layer.succeed(LogoStore, makeSqliteLogoStore(db)),
    Layer.succeed(EngineSecretStore, makeSqliteEngineSecretStore(db)),
    Layer.succeed(SealedValueStore, makeSqliteSealedValueStore(db)),
    Layer.succeed(EventStore, events.store),
    Layer.succeed(
      WebhookDeliveryStore,
      makeSqliteWebhookDeliveryStore(db, writes, events.insertEvent)
    ),
    Layer.succeed(WebhookEndpointStore, makeSqliteWebhookEndpointStore(db, complete)),
    Layer.succeed(PaymentStore, {
      ...makeSqlitePaymentStore(db, complete, chainJobs, publish, writes),
      ...reads
    }),
    Layer.succeed(ChainJobStore, chainJobs.store),
    Layer.succeed(GatewayStore, makeSqliteGatewayStore(db, writes, purges)),
    Layer.succeed(PartnerStore, partners),
    Layer.succeed(WalletAppStore, makeSqliteWalletAppStore(db, keys.insertRow)),
    Layer.succeed(KeyStore, keys.store),
    Layer.succeed(MerchantStore, merchants),
    Layer.succeed(SettlementStore, settlements),
    Layer.succeed(IdempotencyStore, idempotency),
    Layer.succeed(RetentionStore, makeSqliteRetentionStore(db, purges)),
    Layer.succeed(StorageProbe, makeSqliteStorageProbe(db))
  )
}

/**
 * The stores on the connection in context; listings and statistics on SqlitePaymentReads,
 * the purge's deletes on SqlitePurgeWorker, each if given.
 */
export const SqliteStores = Layer.unwrapEffect(
  Effect.map(
    Effect.all([
      SqliteDatabase,
      Effect.serviceOption(SqlitePaymentReads),
      Effect.serviceOption(SqlitePurgeWorker)
    ]),
    ([db, reads, purges]) =>
      makeSqliteStores(db, Option.getOrUndefined(reads), Option.getOrUndefined(purges))
  )
)
