import { defineConfig } from "vitest/config"
import base, { releaseSuites } from "./vitest.config.js"

// `npm run test:release` (with `npm test`, what CI runs: `npm run test:all`): the checks of what
// is built and shipped rather than of the engine's behaviour, which a change to the engine rarely
// affects and which take minutes: the packed packages installed from their tarballs, the
// launcher that builds the bundles (`npm run pay`), the Solidity artifact, and the examples
// (embedding in Express, Hono, Bun, plain Node, the two-tier deployment, the example wallet).
export default defineConfig({
  ...base,
  // A process per file: these install, build and spawn, and their modules are few.
  test: { ...base.test, pool: "forks", include: [...releaseSuites], exclude: [] }
})
