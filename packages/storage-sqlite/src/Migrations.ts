/**
 * The schema's migrations, statically imported so bundlers and embedders get
 * them without a migrations folder on disk. Run with the @effect/sql Migrator
 * on whichever SqlClient the runtime provides (Node or Bun).
 */
import { Migrator } from "@effect/sql"
import initial from "./migrations/0001_initial.js"
import payments from "./migrations/0002_payments.js"
import idempotencyLease from "./migrations/0003_idempotency_lease.js"
import paymentAggregates from "./migrations/0004_payment_aggregates.js"
import walletApps from "./migrations/0005_wallet_apps.js"
import gateway from "./migrations/0006_gateway.js"
import optionClientId from "./migrations/0007_option_client_id.js"
import chainWork from "./migrations/0008_chain_work.js"

export const migrations = Migrator.fromRecord({
  "0001_initial": initial,
  "0002_payments": payments,
  "0003_idempotency_lease": idempotencyLease,
  "0004_payment_aggregates": paymentAggregates,
  "0005_wallet_apps": walletApps,
  "0006_gateway": gateway,
  "0007_option_client_id": optionClientId,
  "0008_chain_work": chainWork
})

/** Applies every migration not yet applied; safe to run from several processes. */
export const migrate = Migrator.make({})({ loader: migrations, table: "pay_migrations" })
