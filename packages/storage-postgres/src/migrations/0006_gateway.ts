/**
 * The gateway's payment options (the exact EIP-3009 authorization offered to
 * one buyer account) and the data buyers enter. The authorization's numbers
 * are uint256: `numeric(78,0)`, exact up to 2^256 - 1. Addresses and the
 * nonce are kept as given (hex case included). Collected data is one row per
 * payment and account, replaced by a later save.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE payment_options (
    id text COLLATE "C" PRIMARY KEY,
    payment_id text COLLATE "C" NOT NULL REFERENCES payments (id),
    account text COLLATE "C" NOT NULL,
    asset text NOT NULL,
    value numeric(78, 0) NOT NULL,
    auth_from text NOT NULL,
    auth_to text NOT NULL,
    valid_after numeric(78, 0) NOT NULL,
    valid_before numeric(78, 0) NOT NULL,
    nonce text NOT NULL,
    expires_at timestamptz NOT NULL,
    quoted boolean NOT NULL,
    collect_data boolean NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX payment_options_by_payment ON payment_options (payment_id)`,
  `CREATE TABLE collected_data (
    payment_id text COLLATE "C" NOT NULL REFERENCES payments (id),
    account text COLLATE "C" NOT NULL,
    data jsonb NOT NULL,
    collected_at timestamptz NOT NULL,
    PRIMARY KEY (payment_id, account)
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
