import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "packages/*/test/**/*.test.ts",
      "examples/**/*.test.ts"
    ],
    globalSetup: ["packages/storage-postgres/test/globalSetup.ts"],
    // Records the engine's answers over loopback and checks them (examples/standalone/test/wire-check.ts).
    setupFiles: ["examples/standalone/test/wire-check.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
