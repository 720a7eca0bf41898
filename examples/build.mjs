// Bundles the standalone server and the CLI into plain ESM for Node: one file each,
// only the code they use, so they start fast and keep a small footprint (no loader at
// run time). `node examples/build.mjs main`, `cli` or `chain` (the sandbox chain as its own
// process); no argument builds them all.
import { build } from "esbuild"

const entries = {
  main: "examples/standalone/src/main.ts",
  cli: "examples/standalone/src/cli.ts",
  chain: "packages/sandbox-chain/src/chain-main.ts"
}
const wanted = process.argv.slice(2)
const names = wanted.length === 0 ? Object.keys(entries) : wanted

for (const name of names) {
  const entry = entries[name]
  if (entry === undefined) throw new Error(`unknown entry ${name}; known: ${Object.keys(entries)}`)
  await build({
    entryPoints: [entry],
    outfile: `examples/standalone/dist/${name}.mjs`,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The workspace's packages from their TypeScript sources (their exports' first condition),
    // as everywhere in the repo: the bundle needs no `npm run build` first.
    conditions: ["@pay/source"],
    sourcemap: true,
    // Native addons: loaded from node_modules at run time.
    external: ["better-sqlite3", "@nomicfoundation/edr"],
    // Bundled CommonJS dependencies still call require().
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
}
