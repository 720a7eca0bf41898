/**
 * For the tests that run a module of this package in a thread or process of its own: the module
 * bundled once per test file with esbuild, as the standalone server ships its own (examples/build.mjs).
 * Node runs the bundle at once, where running the TypeScript sources through tsx took 2.5 s a
 * start on an idle machine and 10 s on a loaded one. Built inside the package (in `.tmp/`, left
 * out of git), so the bundle finds better-sqlite3 in node_modules; removed after the file. Kept
 * out of src/: nothing shipped imports a test runner (core's ImportGraph.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { afterAll, beforeAll } from "vitest"

/** The path `entry` (a file of the package's src/) will be bundled to, before the file's tests run. */
export const bundledForTests = (entry: string): string => {
  const tmp = fileURLToPath(new URL("../.tmp/", import.meta.url))
  mkdirSync(tmp, { recursive: true })
  const dir = mkdtempSync(join(tmp, "bundle-"))
  const outfile = join(dir, entry.replace(/\.ts$/, ".mjs"))
  beforeAll(async () => {
    await build({
      entryPoints: [fileURLToPath(new URL(`../src/${entry}`, import.meta.url))],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["@pay/source"],
      // Native, or Bun's own (the runtime's driver is chosen when the bundle runs).
      external: ["better-sqlite3", "bun:sqlite"],
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
      },
      logLevel: "warning"
    })
  }, 60_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  return outfile
}
