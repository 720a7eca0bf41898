/**
 * The schema's migrations, statically imported so bundlers and embedders get
 * them without a migrations folder on disk, run with the @effect/sql Migrator
 * into the schema the connection's `search_path` names.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"
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
import referenceStatistics from "./migrations/0024_reference_statistics.js"
import deployJobs from "./migrations/0025_deploy_jobs.js"
import optionMethod from "./migrations/0026_option_method.js"
import nativeCoin from "./migrations/0027_native_coin.js"
import keyScopes from "./migrations/0028_key_scopes.js"
import appStatus from "./migrations/0029_app_status.js"
import retention from "./migrations/0030_retention.js"

const byName = {
  "0001_initial": initial,
  "0002_payments": payments,
  "0003_idempotency_lease": idempotencyLease,
  "0004_payment_aggregates": paymentAggregates,
  "0005_wallet_apps": walletApps,
  "0006_gateway": gateway,
  "0007_option_client_id": optionClientId,
  "0008_chain_work": chainWork,
  "0009_logos": logos,
  "0010_merchant_logo": merchantLogo,
  "0011_engine_secret": engineSecret,
  "0012_events": events,
  "0013_webhook_endpoints": webhookEndpoints,
  "0014_webhook_deliveries": webhookDeliveries,
  "0015_webhook_delivery_work": webhookDeliveryWork,
  "0016_payment_filters": paymentFilters,
  "0017_api_keys": apiKeys,
  "0018_payment_livemode": paymentLivemode,
  "0019_audit_log": auditLog,
  "0020_option_purge": optionPurge,
  "0021_rate_limits": rateLimits,
  "0022_settlement_held": settlementHeld,
  "0023_chain_job_failing": chainJobFailing,
  "0024_reference_statistics": referenceStatistics,
  "0025_deploy_jobs": deployJobs,
  "0026_option_method": optionMethod,
  "0027_native_coin": nativeCoin,
  "0028_key_scopes": keyScopes,
  "0029_app_status": appStatus,
  "0030_retention": retention
}

export const migrations = Migrator.fromRecord(byName)

/** The ids of the migrations this code knows ("0022_settlement_held" is 22), in order. */
export const knownMigrationIds: ReadonlyArray<number> = Object.keys(byName).map((name) =>
  Number.parseInt(name, 10)
)

const TABLE = "pay_migrations"
/** Any constant shared by every instance: it only names the advisory lock. */
const CREATE_TABLE_LOCK = 7_305_417_001

/**
 * The Migrator checks for its table and then creates it, which two instances
 * starting at once can both try; creating it first under an advisory lock
 * closes that race. Its own table lock then serialises the migrations.
 */
const ensureTable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(${CREATE_TABLE_LOCK})`,
      sql`CREATE TABLE IF NOT EXISTS ${sql(TABLE)} (
        migration_id integer PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
    )
  )
})

/** Applies every migration not yet applied; safe to run from several instances at once. */
export const migrate = Effect.zipRight(
  ensureTable,
  Migrator.make({})({ loader: migrations, table: TABLE })
)
