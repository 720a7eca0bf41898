/**
 * The schema's migrations, statically imported so bundlers and embedders get
 * them without a migrations folder on disk, and run over the same synchronous
 * connection as the stores: one migrator for every driver (better-sqlite3 on
 * Node, bun:sqlite on Bun). The `pay_migrations` table keeps the layout of the
 * @effect/sql Migrator that applied them before, so a database made by an
 * earlier version upgrades in place.
 */
import initial from "./migrations/0001_initial.js"
import payments from "./migrations/0002_payments.js"
import idempotencyLease from "./migrations/0003_idempotency_lease.js"
import paymentAggregates from "./migrations/0004_payment_aggregates.js"
import walletApps from "./migrations/0005_wallet_apps.js"
import gateway from "./migrations/0006_gateway.js"
import optionClientId from "./migrations/0007_option_client_id.js"
import chainWork from "./migrations/0008_chain_work.js"
import logos from "./migrations/0009_logos.js"
import merchantLogo from "./migrations/0010_merchant_logo.js"
import engineSecret from "./migrations/0011_engine_secret.js"
import events from "./migrations/0012_events.js"
import webhookEndpoints from "./migrations/0013_webhook_endpoints.js"
import webhookDeliveries from "./migrations/0014_webhook_deliveries.js"
import webhookDeliveryWork from "./migrations/0015_webhook_delivery_work.js"
import paymentFilters from "./migrations/0016_payment_filters.js"
import apiKeys from "./migrations/0017_api_keys.js"
import paymentLivemode from "./migrations/0018_payment_livemode.js"
import auditLog from "./migrations/0019_audit_log.js"
import optionPurge from "./migrations/0020_option_purge.js"
import rateLimits from "./migrations/0021_rate_limits.js"
import settlementHeld from "./migrations/0022_settlement_held.js"
import chainJobFailing from "./migrations/0023_chain_job_failing.js"
import deployJobs from "./migrations/0024_deploy_jobs.js"
import optionMethod from "./migrations/0025_option_method.js"
import nativeCoin from "./migrations/0026_native_coin.js"
import keyScopes from "./migrations/0027_key_scopes.js"
import appStatus from "./migrations/0028_app_status.js"
import retention from "./migrations/0029_retention.js"
import type { SqliteConnection } from "./SqliteDatabase.js"

export interface SqliteMigration {
  readonly id: number
  readonly name: string
  readonly apply: (db: SqliteConnection) => void
}

/** In the order they apply; ids never change once released. */
export const migrations: ReadonlyArray<SqliteMigration> = [
  { id: 1, name: "initial", apply: initial },
  { id: 2, name: "payments", apply: payments },
  { id: 3, name: "idempotency_lease", apply: idempotencyLease },
  { id: 4, name: "payment_aggregates", apply: paymentAggregates },
  { id: 5, name: "wallet_apps", apply: walletApps },
  { id: 6, name: "gateway", apply: gateway },
  { id: 7, name: "option_client_id", apply: optionClientId },
  { id: 8, name: "chain_work", apply: chainWork },
  { id: 9, name: "logos", apply: logos },
  { id: 10, name: "merchant_logo", apply: merchantLogo },
  { id: 11, name: "engine_secret", apply: engineSecret },
  { id: 12, name: "events", apply: events },
  { id: 13, name: "webhook_endpoints", apply: webhookEndpoints },
  { id: 14, name: "webhook_deliveries", apply: webhookDeliveries },
  { id: 15, name: "webhook_delivery_work", apply: webhookDeliveryWork },
  { id: 16, name: "payment_filters", apply: paymentFilters },
  { id: 17, name: "api_keys", apply: apiKeys },
  { id: 18, name: "payment_livemode", apply: paymentLivemode },
  { id: 19, name: "audit_log", apply: auditLog },
  { id: 20, name: "option_purge", apply: optionPurge },
  { id: 21, name: "rate_limits", apply: rateLimits },
  { id: 22, name: "settlement_held", apply: settlementHeld },
  { id: 23, name: "chain_job_failing", apply: chainJobFailing },
  { id: 24, name: "deploy_jobs", apply: deployJobs },
  { id: 25, name: "option_method", apply: optionMethod },
  { id: 26, name: "native_coin", apply: nativeCoin },
  { id: 27, name: "key_scopes", apply: keyScopes },
  { id: 28, name: "app_status", apply: appStatus },
  { id: 29, name: "retention", apply: retention }
]

/** A migration applied by this call: its id and name. */
export type AppliedMigration = readonly [id: number, name: string]

/**
 * Applies every migration not yet applied, in one transaction, and names them.
 * Safe from several processes at once: `BEGIN IMMEDIATE` takes the write lock
 * before reading which migrations are applied (a second process waits on the
 * busy timeout, then finds them all applied); a failing migration rolls back
 * with everything before it in the same call.
 */
export const applyMigrations = (
  db: SqliteConnection,
  all: ReadonlyArray<SqliteMigration> = migrations
): ReadonlyArray<AppliedMigration> => {
  db.exec(`CREATE TABLE IF NOT EXISTS pay_migrations (
    migration_id integer PRIMARY KEY NOT NULL,
    created_at datetime NOT NULL DEFAULT current_timestamp,
    name VARCHAR(255) NOT NULL
  )`)
  db.exec("BEGIN IMMEDIATE")
  try {
    const latest = db.prepare("SELECT max(migration_id) AS id FROM pay_migrations").get() as
      | { readonly id: number | null }
      | undefined
    const pending = all.filter((m) => m.id > (latest?.id ?? 0))
    const record = db.prepare("INSERT INTO pay_migrations (migration_id, name) VALUES (?, ?)")
    for (const migration of pending) {
      migration.apply(db)
      record.run(migration.id, migration.name)
    }
    db.exec("COMMIT")
    return pending.map((m): AppliedMigration => [m.id, m.name])
  } catch (error) {
    // SQLite may already have rolled back (a full disk does): then there is nothing to undo.
    try {
      db.exec("ROLLBACK")
    } catch {}
    throw error
  }
}
