import { defineConfig } from "vitest/config"

// The workspace's packages from their TypeScript sources: `@pay/source` is the first condition
// of their exports (the built `dist` comes after it, for installs from a tarball), so tests need
// no build. Tests load modules as the server side (ssr), whose conditions are set apart from the
// client's; vitest adds its defaults (node, development|production) after these.
const conditions = ["@pay/source"]

/**
 * What `npm run test:release` runs instead (vitest.release.config.ts): builds, packages and
 * examples, not the engine's behaviour.
 */
export const releaseSuites = [
  "examples/packed/**/*.test.ts",
  "examples/standalone/test/cli-process.test.ts",
  "packages/sandbox-chain/src/TestUSDC.artifact.test.ts",
  "examples/{bun,embed-node,express,hono,two-tier,wallet}/**/*.test.ts",
  // Twenty restarts of a server process under load: minutes of one worker, so it runs in the
  // release pass (a process of its own), not in `npm test`'s feedback loop.
  "examples/standalone/test/crash-postgres.e2e.test.ts"
]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "packages/*/test/**/*.test.ts",
      "examples/**/*.test.ts",
      // Examples in plain JavaScript (examples/test-engine-shop), run as a platform would.
      "examples/**/*.test.mjs"
    ],
    exclude: ["**/node_modules/**", ...releaseSuites],
    globalSetup: [
      "packages/storage-postgres/test/globalSetup.ts",
      "examples/standalone/test/bundles.globalSetup.ts"
    ],
    // Records the engine's answers over loopback and checks them (examples/standalone/test/wire-check.ts).
    // The engine's log lines held back and shown for a failing test (log-capture.setup.ts).
    setupFiles: [
      "examples/standalone/test/log-capture.setup.ts",
      "examples/standalone/test/wire-check.setup.ts"
    ],
    // Each file in a fresh VM context of a long-lived worker process: its modules are its
    // own, as in a process of its own, but the worker and what it compiled stay, so a file
    // no longer pays for a process and its imports' compilation (measured 2026-11-29: the
    // whole pass 17 min 9 s with a process per file, 12 min 43 s so).
    pool: "vmForks",
    // In a process of their own: a worker thread's answers, built in the process's own realm,
    // compared with toStrictEqual against the file's (a VM context's objects have other
    // prototypes), and a plain JavaScript file a platform would run, which a VM context would
    // not load as a module.
    poolMatchGlobs: [
      ["**/packages/storage-sqlite/src/SqliteReadWorker.test.ts", "forks"],
      ["**/examples/**/*.test.mjs", "forks"]
    ],
    // Files run in parallel: most of an e2e file's time is spent waiting on servers, chains,
    // timers and child processes, not on the CPU, so four workers share two cores well.
    // Each file has its own ports, SQLite files and PostgreSQL schemas.
    maxWorkers: 4,
    minWorkers: 1,
    // Console output is shown for a failing test only.
    silent: "passed-only",
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
