/**
 * Scalar's standalone browser bundle, as its npm package ships it
 * (`@scalar/api-reference/dist/browser/standalone.js`): found once, read on
 * first use and kept, so the page works with no CDN and no network.
 */
import { readFileSync } from "node:fs"
// Aliased: the bundled server (examples/build.mjs) already declares `createRequire` at its top.
import { createRequire as requireFrom } from "node:module"
import { dirname, join } from "node:path"

export interface ScalarBundle {
  /** The package's version: part of the script's URL, so an upgrade is not served from a cache. */
  readonly version: string
  /** The script's text (about 4 MB), read on first call. */
  readonly source: () => string
}

const resolveHere = requireFrom(import.meta.url)

/**
 * Finds the bundle of the installed `@scalar/api-reference`. Its `exports` name
 * no browser files, so the folder is found from the package's main entry
 * (`dist/index.js`); the bundle and `package.json` sit beside it.
 */
export const scalarBundle = (): ScalarBundle => {
  const dist = dirname(resolveHere.resolve("@scalar/api-reference"))
  const file = join(dist, "browser", "standalone.js")
  const manifest = JSON.parse(readFileSync(join(dist, "..", "package.json"), "utf8")) as {
    readonly version: string
  }
  let source: string | undefined
  return {
    version: manifest.version,
    source: () => {
      source ??= readFileSync(file, "utf8")
      return source
    }
  }
}
