import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * The suites that stand on the runtime, again under the real Bun binary (`bun --bun vitest`, so
 * every test worker is Bun). `npm test` runs `bunRuntimeSuites` (`npm run test:bun`): where
 * Bun's code differs from Node's, the SQLite storage contract on bun:sqlite, the logo fetcher
 * and images (node:https and sharp on Bun), the test engine (its clock waits on the event loop), the in-process server on Bun.serve (the adapter,
 * which has no tests of its own: its HTTP edges, the wallet gateway, and long-polls held,
 * woken and drained), and the server `npm run start:bun` runs, as its own process with the CLI
 * beside it. `npm run test:release` adds `bunReleaseSuites` (vitest.bun-release.config.ts):
 * the rest of what runs on a runtime part Bun provides itself, the PostgreSQL driver on Bun's
 * sockets (the storage contract, several instances, LISTEN/NOTIFY), the chain's native EVM
 * (N-API) and its JSON-RPC over Bun's fetch (the chain work, smart accounts), and webhooks
 * sent with Bun's fetch. The other end-to-end suites run under Node only: above those parts
 * their code is the same module graph on both runtimes, and running them twice doubled the
 * suite's time for no code of Bun's. Browser tests, the examples that spawn their own runtimes
 * and the test helpers' own tests run once, under Node.
 */
export const bunRuntimeSuites = [
  "packages/storage-sqlite/src/**/*.test.ts",
  "packages/logos/src/**/*.test.ts",
  // The test engine's clock waits on the runtime's event loop (setImmediate) and scheduler.
  "packages/testing/src/**/*.test.ts",
  "examples/standalone/test/http-edges.e2e.test.ts",
  "examples/standalone/test/gateway.e2e.test.ts",
  "examples/standalone/test/payments-status.e2e.test.ts",
  "examples/standalone/test/process.e2e.test.ts",
  "examples/standalone/test/process-settings.e2e.test.ts"
]

export const bunReleaseSuites = [
  "packages/storage-postgres/src/**/*.test.ts",
  "examples/standalone/test/multi-instance.e2e.test.ts",
  "examples/standalone/test/chain-work.e2e.test.ts",
  "examples/standalone/test/smart-accounts.e2e.test.ts",
  "examples/standalone/test/permit2.e2e.test.ts",
  "examples/standalone/test/native.e2e.test.ts",
  "examples/standalone/test/webhook-delivery.e2e.test.ts"
]

export const onBun = (include: ReadonlyArray<string>, exclude: ReadonlyArray<string> = []) =>
  defineConfig({
    ...base,
    test: {
      ...base.test,
      include: [...include],
      exclude: ["**/node_modules/**", ...exclude],
      // Bun has no VM modules for vmForks: a process per file.
      pool: "forks",
      poolMatchGlobs: [],
      setupFiles: [
        ...(base.test?.setupFiles ?? []),
        "examples/standalone/test/bun-runtime.setup.ts"
      ]
    }
  })

export default onBun(bunRuntimeSuites)
