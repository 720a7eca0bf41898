import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * The suites that stand on the runtime, again under the real Bun binary (`bun --bun vitest`, so
 * every test worker is Bun). `npm test` runs `bunRuntimeSuites` (`npm run test:bun`): where
 * Bun's code differs from Node's, the SQLite storage contract on bun:sqlite, the logo fetcher
 * and images (node:https and sharp on Bun), the test engine (its clock waits on the event loop), the in-process server on Bun.serve (the adapter,
 * which has no tests of its own: its HTTP edges, the wallet gateway, and long-polls held,
 * woken and drained), and the server `npm run start:bun` runs, as its own process with the CLI
 * beside it. The rest of the storage and end-to-end suites on Bun run in
 * `npm run test:release` (`bunReleaseSuites`, vitest.bun-release.config.ts): their code is the
 * same on both runtimes once those parts are. Browser tests, the examples that spawn their own
 * runtimes and the test helpers' own tests run once, under Node.
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
  "examples/standalone/test/**/*.e2e.test.ts"
]

export const onBun = (include: ReadonlyArray<string>, exclude: ReadonlyArray<string> = []) =>
  defineConfig({
    ...base,
    test: {
      ...base.test,
      include: [...include],
      exclude: ["**/node_modules/**", ...exclude],
      setupFiles: [
        ...(base.test?.setupFiles ?? []),
        "examples/standalone/test/bun-runtime.setup.ts"
      ]
    }
  })

export default onBun(bunRuntimeSuites)
