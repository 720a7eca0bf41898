// The packages under packages/, found from their package.json files (so a new package needs no
// entry here), in dependency order: each one after the workspace packages it depends on.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))

/**
 * @typedef {{ name: string, version: string, exports?: Record<string, unknown>,
 *   dependencies?: Record<string, string>, peerDependencies?: Record<string, string> }} Manifest
 * @typedef {{ name: string, dir: string, path: string, manifest: Manifest,
 *   internal: Array<string> }} WorkspacePackage
 */

/** @returns {Array<WorkspacePackage>} */
export const workspacePackages = () => {
  const found = readdirSync(join(ROOT, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join("packages", entry.name))
    .filter((path) => existsSync(join(ROOT, path, "package.json")))
    .map((path) => {
      /** @type {Manifest} */
      const manifest = JSON.parse(readFileSync(join(ROOT, path, "package.json"), "utf8"))
      return { name: manifest.name, dir: join(ROOT, path), path, manifest }
    })
  const names = new Set(found.map((p) => p.name))
  const withInternal = found.map((p) => ({
    ...p,
    // What it needs at run time from the workspace (devDependencies are the repo's business).
    internal: Object.keys({ ...p.manifest.dependencies, ...p.manifest.peerDependencies }).filter(
      (name) => names.has(name)
    )
  }))
  const ordered = []
  const placed = new Set()
  const place = (p, path = []) => {
    if (placed.has(p.name)) return
    if (path.includes(p.name))
      throw new Error(`dependency cycle: ${[...path, p.name].join(" -> ")}`)
    for (const name of p.internal) {
      place(
        withInternal.find((q) => q.name === name),
        [...path, p.name]
      )
    }
    placed.add(p.name)
    ordered.push(p)
  }
  for (const p of withInternal) place(p)
  return ordered
}

/**
 * The built files a package's `exports` name (every condition but the sources'), by subpath;
 * subpaths with only the sources' condition (test support) are the repo's only and not listed.
 * @param {Manifest} manifest
 * @returns {Array<{ subpath: string, types: string, default: string }>}
 */
export const builtExports = (manifest) =>
  Object.entries(manifest.exports ?? {}).flatMap(([subpath, target]) => {
    if (typeof target !== "object" || target === null) {
      throw new Error(`${manifest.name}: exports["${subpath}"] must be a conditions object`)
    }
    const conditions = /** @type {Record<string, string>} */ (target)
    if (conditions.default === undefined) return []
    if (conditions.types === undefined) {
      throw new Error(`${manifest.name}: exports["${subpath}"] has a default but no types`)
    }
    return [{ subpath, types: conditions.types, default: conditions.default }]
  })
