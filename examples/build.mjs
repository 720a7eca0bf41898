// Bundles the standalone server and the CLI into plain ESM for Node: one file each,
// only the code they use, so they start fast and keep a small footprint (no loader at
// run time). `node examples/build.mjs main`, `main-bun` (the server for Bun), `cli`, `chain` (the sandbox chain as its own
// process) or `two-tier` (examples/two-tier's web and worker processes, in one build:
// they share nearly all their code); no argument builds them all. `--outdir <dir>` puts
// them all there instead (a test's own copies, which no other test's build overwrites
// while it runs them); keep it inside the repository, where node_modules is found.
// examples/run.mjs (`npm start`, `npm run pay`, `npm run chain`) builds through
// `buildTargets` only when a bundle is missing or older than its sources.
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

export const targets = {
  main: {
    outdir: "examples/standalone/dist",
    // The SQLite listings' worker thread (packages/storage-sqlite/src/SqliteReadWorker.ts),
    // which the server finds beside itself.
    entries: {
      main: "examples/standalone/src/main.ts",
      "sqlite-read-worker": "packages/storage-sqlite/src/read-worker-node.ts"
    }
  },
  // The same server on Bun (`npm run start:bun`): run with `bun`, which reads this Node-style ESM.
  "main-bun": {
    outdir: "examples/standalone/dist",
    entries: { "main.bun": "examples/standalone/src/main.bun.ts" }
  },
  cli: { outdir: "examples/standalone/dist", entries: { cli: "examples/standalone/src/cli.ts" } },
  chain: {
    outdir: "examples/standalone/dist",
    entries: { chain: "packages/sandbox-chain/src/chain-main.ts" }
  },
  "two-tier": {
    outdir: "examples/two-tier/dist",
    entries: { web: "examples/two-tier/web.ts", worker: "examples/two-tier/worker.ts" }
  }
}

/** Builds the named targets (every one when none is named), into `outdir` when given. */
export const buildTargets = async (names, outdir) => {
  // Loaded here, not at the top: examples/run.mjs imports this file and mostly builds nothing.
  const { build } = await import("esbuild")
  for (const name of names.length === 0 ? Object.keys(targets) : names) {
    const target = targets[name]
    if (target === undefined)
      throw new Error(`unknown entry ${name}; known: ${Object.keys(targets)}`)
    await build({
      entryPoints: target.entries,
      outdir: outdir ?? target.outdir,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      // The workspace's packages from their TypeScript sources (their exports' first condition),
      // as everywhere in the repo: the bundle needs no `npm run build` first.
      conditions: ["@pay/source"],
      sourcemap: true,
      // Native addons: loaded from node_modules at run time.
      external: ["better-sqlite3", "@nomicfoundation/edr", "sharp"],
      // Bundled CommonJS dependencies still call require().
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
      },
      logLevel: "warning"
    })
  }
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
) {
  const args = process.argv.slice(2)
  const at = args.indexOf("--outdir")
  const outdir = at === -1 ? undefined : args.splice(at, 2)[1]
  await buildTargets(args, outdir)
}
