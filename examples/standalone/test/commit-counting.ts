/**
 * A SQLite connection that counts its commits that change something (each one
 * an fsync at `synchronous = FULL`; a transaction whose writes matched no row
 * writes nothing to the WAL), for tests that hold the engine to a number of
 * commits: a top-level `transaction`, an explicit `BEGIN … COMMIT` (group
 * commit's), and a write statement run outside any transaction (SQLite's
 * autocommit). A commit counts as `payment work` when one of its statements
 * changed the payments or the chain work's tables; other background work
 * (the webhook dispatcher waking on each event, say) is counted apart.
 */
import type { OpenSqliteConnection, SqliteConnection } from "@pay/storage-sqlite"

const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE|WITH)\b/i
const PAYMENT_WORK = /\b(payments|chain_jobs|chain_transfers|chain_nonces)\b/i

export interface CommitCounts {
  /** Every commit. */
  all: number
  /** Commits that wrote a payment or its chain work. */
  paymentWork: number
  /** Of each of those, the first line of each of its writes: what a failing count shows. */
  readonly writes: Array<ReadonlyArray<string>>
  /** The same of every commit (`all`), in commit order. */
  readonly everyWrite: Array<ReadonlyArray<string>>
}

export const countingCommits = (
  open: OpenSqliteConnection
): { readonly open: OpenSqliteConnection; readonly counts: CommitCounts } => {
  const counts: CommitCounts = { all: 0, paymentWork: 0, writes: [], everyWrite: [] }
  const wrap = (db: SqliteConnection): SqliteConnection => {
    let depth = 0
    let explicit = false
    let changed = false
    let touched = false
    let writes: Array<string> = []
    const committed = () => {
      if (changed) {
        counts.all++
        counts.everyWrite.push(writes)
      }
      if (touched) {
        counts.paymentWork++
        counts.writes.push(writes)
      }
      changed = false
      touched = false
      writes = []
    }
    const statementRan = (sql: string, changes: boolean) => {
      if (!WRITE.test(sql)) return
      if (changes) {
        changed = true
        writes.push(sql.trim().split("\n")[0]!)
        if (PAYMENT_WORK.test(sql)) touched = true
      }
      if (depth === 0 && !explicit) committed()
    }
    return {
      prepare: (sql) => {
        const statement = db.prepare(sql)
        return {
          run: (...params) => {
            const result = statement.run(...params)
            statementRan(sql, Number(result.changes) > 0)
            return result
          },
          // A write with RETURNING changed something when it returned a row.
          get: (...params) => {
            const result = statement.get(...params)
            statementRan(sql, result !== undefined && result !== null)
            return result
          },
          all: (...params) => {
            const result = statement.all(...params)
            statementRan(sql, result.length > 0)
            return result
          }
        }
      },
      exec: (sql) => {
        db.exec(sql)
        if (/^\s*BEGIN\b/i.test(sql)) explicit = true
        else if (/^\s*COMMIT\b/i.test(sql)) {
          explicit = false
          committed()
        } else if (/^\s*ROLLBACK\s*$/i.test(sql)) {
          explicit = false
          changed = false
          touched = false
          writes = []
        } else statementRan(sql, true)
      },
      transaction: (body) => {
        if (depth > 0 || explicit) {
          depth++
          try {
            return db.transaction(body)
          } finally {
            depth--
          }
        }
        depth++
        try {
          const result = db.transaction(body)
          depth--
          committed()
          return result
        } catch (error) {
          depth--
          changed = false
          touched = false
          writes = []
          throw error
        }
      },
      close: () => db.close()
    }
  }
  return { open: (filename) => wrap(open(filename)), counts }
}
