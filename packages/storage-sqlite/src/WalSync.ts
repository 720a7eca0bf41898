/**
 * The fsync of a SQLite file's write-ahead log, off the event loop.
 *
 * With `synchronous = FULL` SQLite fsyncs the WAL inside COMMIT, on the thread
 * that commits: the engine's. On a shared or slow disk one fsync can take
 * hundreds of milliseconds, and every request in flight waits for it
 * (bench/soak.ts found stalls of 0.5 s). The group commit instead commits with
 * `synchronous = NORMAL` (the frames are written to the WAL, not synced) and
 * then asks for this fsync, which runs on libuv's thread pool; its writes are
 * answered only once it is done. An acknowledged write is on disk exactly as
 * with FULL: FULL's commit is "write the frames, fsync the WAL" too, and
 * fsync flushes the file whichever descriptor wrote it.
 *
 * Opening and closing the `-wal` file here is safe where the `-shm` is not:
 * closing a descriptor drops the process's POSIX locks on that file, and SQLite
 * locks the database and the `-shm` file, never the WAL.
 *
 * One fsync covers every commit made before it started, so concurrent asks
 * share one: an ask made while an fsync runs waits for the next, which starts
 * when that one ends.
 */
import { open } from "node:fs/promises"
import { dirname } from "node:path"

export interface WalSync {
  /** Resolves once everything committed before the call is on disk. */
  readonly afterCommit: () => Promise<void>
}

const fsyncFile = async (path: string) => {
  const handle = await open(path, "r+")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** The directory's entry for the WAL, once: a new WAL file is durable only with it. */
const fsyncDirectory = async (path: string) => {
  try {
    const handle = await open(path, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // Windows cannot open a directory: NTFS journals the entry itself.
  }
}

export const makeWalSync = (
  databaseFile: string,
  // The tests' way to count and hold the fsyncs.
  fsync: (path: string) => Promise<void> = fsyncFile
): WalSync => {
  const walFile = `${databaseFile}-wal`
  let directorySynced = false
  // The fsync running now, and the one asked for while it runs (it starts when this ends).
  let running: Promise<void> | undefined
  let next: Promise<void> | undefined

  const start = (): Promise<void> => {
    const syncing = (async () => {
      // Opened per fsync: the WAL keeps its inode while a connection is open, but a path costs
      // nothing to reopen and never names a file that was replaced.
      await fsync(walFile)
      if (!directorySynced) {
        await fsyncDirectory(dirname(walFile))
        directorySynced = true
      }
    })()
    running = syncing
    const clear = () => {
      if (running === syncing) running = undefined
    }
    syncing.then(clear, clear)
    return syncing
  }

  const afterCommit = (): Promise<void> => {
    if (running === undefined) return start()
    if (next === undefined) {
      const after = running.then(
        () => undefined,
        () => undefined
      )
      next = after.then(() => {
        next = undefined
        return start()
      })
    }
    return next
  }

  return { afterCommit }
}
