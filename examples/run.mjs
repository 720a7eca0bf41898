// `npm start`, `npm run pay` and `npm run chain`: runs a bundle of examples/build.mjs,
// building it first only when it is missing or older than anything it is built from
// (a rebuild takes seconds; the check, a few milliseconds). `node examples/run.mjs
// [--build-only] [--outdir <dir>] <target> [its arguments…]`: `--build-only` stops
// after the check (`npm run start:bun`, whose bundle Bun runs), `--outdir` checks and
// runs the bundles of that folder (a test's own).
import { readdirSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildTargets, targets } from "./build.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** What the bundles are built from: the workspace's sources, the build itself, the locked dependencies. */
export const SOURCES = [
  "packages",
  "examples/standalone/src",
  "examples/two-tier",
  "examples/build.mjs",
  "package-lock.json"
]
const SKIPPED = new Set(["node_modules", "dist", "coverage"])

/** The newest modification time under `path` (a file or a folder), and the file that has it. */
export const newestSource = (path) => {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return { mtimeMs: 0, file: undefined }
  if (!stat.isDirectory()) return { mtimeMs: stat.mtimeMs, file: path }
  let newest = { mtimeMs: 0, file: undefined }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith(".")) continue
    if (entry.isFile() && /\.test\.ts$/.test(entry.name)) continue
    const found = newestSource(join(path, entry.name))
    if (found.mtimeMs > newest.mtimeMs) newest = found
  }
  return newest
}

/**
 * Why the bundles `files` must be built again (a missing one, or the source newer
 * than the oldest of them), or undefined when they are up to date.
 */
export const staleReason = (files, sources) => {
  let oldest = Number.POSITIVE_INFINITY
  for (const file of files) {
    const stat = statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return `${relative(root, file)} is missing`
    oldest = Math.min(oldest, stat.mtimeMs)
  }
  for (const source of sources) {
    const newest = newestSource(source)
    if (newest.mtimeMs > oldest) return `${relative(root, newest.file)} changed`
  }
  return undefined
}

const main = async () => {
  const args = process.argv.slice(2)
  const buildOnly = args[0] === "--build-only" ? Boolean(args.shift()) : false
  const outdirAt = args[0] === "--outdir" ? args.splice(0, 2)[1] : undefined
  const name = args.shift()
  const target = targets[name]
  if (target === undefined) {
    console.error(
      `usage: node examples/run.mjs [--build-only] [--outdir <dir>] <${Object.keys(targets).join("|")}> [arguments…]`
    )
    process.exit(2)
  }
  const outdir = join(root, outdirAt ?? target.outdir)
  const bundles = Object.keys(target.entries).map((entry) => join(outdir, `${entry}.mjs`))
  const reason = staleReason(
    bundles,
    SOURCES.map((source) => join(root, source))
  )
  if (reason !== undefined) {
    // On stderr, so that a script reading a command's --json output is not disturbed.
    console.error(`(building ${name}: ${reason})`)
    await buildTargets([name], outdir)
  }
  if (buildOnly) return
  // Run in this process, as `node --enable-source-maps <bundle> …` would: one Node start, not two.
  process.setSourceMapsEnabled(true)
  process.argv = [process.argv[0], bundles[0], ...args]
  await import(pathToFileURL(bundles[0]).href)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main()
}
