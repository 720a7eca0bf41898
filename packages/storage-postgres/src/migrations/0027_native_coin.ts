/**
 * The network's own coin as a payment option (core chainwork/NativeCollect.ts):
 *
 * - `payment_options.method` takes `native` beside `eip3009` and `permit2`:
 *   its CHECK (named by PostgreSQL for its column, as 0026 declared it inline)
 *   is replaced in one statement, so no moment allows any other method.
 * - `chain_transfers.value`: the coin a transfer sends, in wei, `numeric(78,0)`
 *   as `gas` is (0 for the contract calls recorded before: a constant default
 *   rewrites no rows).
 * - `payments.fee_network`: a native payment's settlement gas, in the coin
 *   (null for a token, and for every payment before).
 * - A buyer's transfer is claimed by one payment only: a unique index on the
 *   collect jobs' `paid.hash` per chain (the gateway lowercases the hash); a
 *   second payment's job naming it is refused (`TransactionClaimed`).
 * - `returnable_funds`: coin that reached the collector without paying for
 *   anything, once per transaction, listed newest first and summed by asset.
 * - The ledger's sum (`owedIn`): the settlement amounts of succeeded payments
 *   not settled yet, found by asset through a partial index (a small part of
 *   the payments).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `ALTER TABLE payment_options
    DROP CONSTRAINT payment_options_method_check,
    ADD CONSTRAINT payment_options_method_check
      CHECK (method IN ('eip3009', 'permit2', 'native'))`,
  "ALTER TABLE chain_transfers ADD COLUMN value numeric(78, 0) NOT NULL DEFAULT 0",
  "ALTER TABLE payments ADD COLUMN fee_network numeric(78, 0)",
  `CREATE UNIQUE INDEX chain_jobs_claimed_transfer
    ON chain_jobs (chain_id, (payload -> 'paid' ->> 'hash'))
    WHERE kind = 'collect' AND (payload -> 'paid' ->> 'hash') IS NOT NULL`,
  `CREATE TABLE returnable_funds (
    chain_id text COLLATE "C" NOT NULL,
    tx_hash text COLLATE "C" NOT NULL,
    payment_id text COLLATE "C" NOT NULL REFERENCES payments (id),
    asset text NOT NULL,
    from_address text NOT NULL,
    value numeric(78, 0) NOT NULL,
    reason text NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (chain_id, tx_hash)
  )`,
  "CREATE INDEX returnable_funds_newest ON returnable_funds (recorded_at, chain_id, tx_hash)",
  "CREATE INDEX returnable_funds_by_asset ON returnable_funds (asset)",
  `CREATE INDEX payments_owed ON payments (token_asset)
    WHERE status = 'succeeded' AND settlement_status IN ('pending', 'no_destination')`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
