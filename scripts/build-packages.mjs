// `npm run build`: builds every package under packages/ to JavaScript in its dist/ (ESM, .d.ts,
// declaration maps, source maps with the sources inlined), tests left out, with `tsc -b` on each
// package's tsconfig.build.json (project references put them in dependency order; an unchanged
// package is not rebuilt). Then loads every built entry point in plain node, as a platform
// would. `--clean` empties each dist/ first (the pack script does, so no stale file ships).
//
// Inside the repo nothing needs this: tests, `npm start` and the scripts run the TypeScript
// sources through the `@pay/source` export condition.
import { execFileSync } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative, resolve } from "node:path"
import ts from "typescript"
import { builtExports, ROOT, workspacePackages } from "./workspace-packages.mjs"

const clean = process.argv.includes("--clean")
const packages = workspacePackages()
const problems = []

const configs = packages.map((p) => {
  const config = join(p.dir, "tsconfig.build.json")
  if (!existsSync(config)) {
    problems.push(`${p.path}: no tsconfig.build.json (copy another package's)`)
    return config
  }
  const read = ts.readConfigFile(config, ts.sys.readFile)
  if (read.error) {
    problems.push(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"))
    return config
  }
  // tsc -b orders the builds by these references: each workspace dependency must be one.
  const referenced = new Set(
    (read.config.references ?? []).map((/** @type {{ path: string }} */ ref) => {
      const target = resolve(p.dir, ref.path)
      return target.endsWith(".json") ? target : join(target, "tsconfig.json")
    })
  )
  for (const name of p.internal) {
    const dependency = packages.find((q) => q.name === name)
    if (dependency === undefined) continue
    const expected = join(dependency.dir, "tsconfig.build.json")
    if (!referenced.has(expected)) {
      problems.push(
        `${relative(ROOT, config)}: depends on ${name}, so its "references" need ` +
          `{ "path": "${relative(p.dir, expected)}" }`
      )
    }
  }
  return config
})
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}

if (clean) for (const p of packages) rmSync(join(p.dir, "dist"), { recursive: true, force: true })

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
try {
  execFileSync(process.execPath, [tsc, "-b", ...configs.map((c) => relative(ROOT, c))], {
    cwd: ROOT,
    stdio: "inherit"
  })
} catch {
  process.exit(1)
}

// Every file the exports name must exist, and every entry must load in plain node (no loader,
// no source condition): a missing `.js` suffix or a CommonJS import Node cannot name fails here.
const entries = []
for (const p of packages) {
  for (const entry of builtExports(p.manifest)) {
    for (const file of [entry.types, entry.default]) {
      if (!existsSync(join(p.dir, file))) problems.push(`${p.path}: ${file} was not built`)
    }
    entries.push(entry.subpath === "." ? p.name : `${p.name}${entry.subpath.slice(1)}`)
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}
const load = entries.map((entry) => `await import(${JSON.stringify(entry)})`).join("\n")
try {
  execFileSync(process.execPath, ["--input-type=module", "--eval", load], {
    cwd: ROOT,
    // Not a `--conditions=@pay/source` a caller may have set: that would load the sources.
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: "inherit"
  })
} catch {
  console.error("a built entry point does not load in plain node (above)")
  process.exit(1)
}
console.log(`built ${packages.map((p) => p.name).join(", ")}`)
