import { defineConfig } from "vitest/config"

// The workspace's packages from their TypeScript sources: `@pay/source` is the first condition
// of their exports (the built `dist` comes after it, for installs from a tarball), so tests need
// no build. Tests load modules as the server side (ssr), whose conditions are set apart from the
// client's; vitest adds its defaults (node, development|production) after these.
const conditions = ["@pay/source"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "packages/*/test/**/*.test.ts",
      "examples/**/*.test.ts"
    ],
    globalSetup: [
      "packages/storage-postgres/test/globalSetup.ts",
      "examples/standalone/test/bundles.globalSetup.ts"
    ],
    // Records the engine's answers over loopback and checks them (examples/standalone/test/wire-check.ts).
    setupFiles: ["examples/standalone/test/wire-check.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
