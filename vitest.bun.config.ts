import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

// `npm run test:bun`: the suites that stand on the runtime, again under the real Bun binary
// (`bun --bun vitest`, so every test worker is Bun): the SQLite storage contract on bun:sqlite,
// the PostgreSQL storage on Bun, the adapter, the logo fetcher (node:https on Bun), and the
// end-to-end suites against the server on Bun.serve (in process, and as its own
// `npm run start:bun` process) on both stores. Browser tests, the examples that spawn their own
// runtimes and the test helpers' own tests run once, under Node.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      "packages/storage-sqlite/src/**/*.test.ts",
      "packages/storage-postgres/src/**/*.test.ts",
      "packages/adapter-bun/src/**/*.test.ts",
      "packages/logos/src/**/*.test.ts",
      "examples/standalone/test/**/*.e2e.test.ts"
    ],
    setupFiles: [...(base.test?.setupFiles ?? []), "examples/standalone/test/bun-runtime.setup.ts"]
  }
})
