/**
 * vitest globalSetup (wired in vitest.config.ts): the bundles the process tests run (`main`,
 * `main.bun`, `cli`, `chain` in examples/standalone/dist), built once per run before any test
 * file starts. Files run in parallel, so none may rebuild a bundle another file's server is
 * running from; `requireBundles` (instances-support.ts) only checks they are here.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")

export default function setup() {
  const started = Date.now()
  // Under `npm run test:bun` this runs on Bun; esbuild's build script is Node's, as in `npm start`.
  const node = "Bun" in globalThis ? (process.env.npm_node_execpath ?? "node") : process.execPath
  execFileSync(node, [join(root, "examples/build.mjs"), "main", "main-bun", "cli", "chain"], {
    cwd: root,
    stdio: "inherit"
  })
  console.info(`Bundles for the process tests built in ${Date.now() - started} ms`)
}
