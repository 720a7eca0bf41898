/**
 * A third kind of chain job, `deploy` (core chainwork/DeployStep.ts): a
 * buyer's account not deployed yet, deployed by the network's deployer before
 * it is collected. The kind's CHECK (named by PostgreSQL for its column, as
 * 0008 declared it inline) is replaced in one statement, so no moment allows
 * any other kind; existing rows are all `collect` or `settle`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chain_jobs
    DROP CONSTRAINT chain_jobs_kind_check,
    ADD CONSTRAINT chain_jobs_kind_check CHECK (kind IN ('collect', 'settle', 'deploy'))`
})
