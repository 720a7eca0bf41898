// `npm run build`: builds every package under packages/ to JavaScript in its dist/ (ESM, .d.ts,
// declaration maps, source maps with the sources inlined), tests left out, with `tsc -b` on each
// package's tsconfig.build.json: project references put them in dependency order, and a package
// whose inputs did not change is not rebuilt. A file in dist/ that no source emits any more (a
// source deleted or renamed since) is removed, so dist/ holds what a clean build would. Then
// every built entry point is loaded in plain node, as a platform would. `--clean` empties each
// dist/ first.
//
// Inside the repo nothing needs this: tests, `npm start` and the scripts run the TypeScript
// sources through the `@pay/source` export condition.
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative } from "node:path"
import ts from "typescript"
import { builtExports, ROOT, workspacePackages } from "./workspace-packages.mjs"

const clean = process.argv.includes("--clean")
const packages = workspacePackages()
const problems = []

const parse = (/** @type {string} */ config) =>
  ts.getParsedCommandLineOfConfigFile(
    config,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        problems.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      }
    }
  )

const builds = packages.flatMap((p) => {
  const config = join(p.dir, "tsconfig.build.json")
  if (!existsSync(config)) {
    problems.push(`${p.path}: no tsconfig.build.json (copy another package's)`)
    return []
  }
  const parsed = parse(config)
  if (parsed === undefined) return []
  // tsc -b orders the builds by these references: each workspace dependency must be one.
  const referenced = new Set((parsed.projectReferences ?? []).map((ref) => ref.path))
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
  return [{ package: p, config, parsed }]
})
const fail = () => {
  console.error(problems.join("\n"))
  process.exit(1)
}
if (problems.length > 0) fail()

if (clean) for (const p of packages) rmSync(join(p.dir, "dist"), { recursive: true, force: true })

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
try {
  execFileSync(process.execPath, [tsc, "-b", ...builds.map((b) => relative(ROOT, b.config))], {
    cwd: ROOT,
    stdio: "inherit"
  })
} catch {
  process.exit(1)
}

/** Removes the files under `dir` that are not in `keep`, and the folders left empty. */
const prune = (/** @type {string} */ dir, /** @type {Set<string>} */ keep) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      prune(path, keep)
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true })
    } else if (!keep.has(path)) {
      rmSync(path)
    }
  }
}
for (const { parsed } of builds) {
  const outDir = parsed.options.outDir
  if (outDir === undefined || !existsSync(outDir)) continue
  const keep = new Set(
    parsed.fileNames.flatMap((file) => ts.getOutputFileNames(parsed, file, false))
  )
  const buildInfo = ts.getTsBuildInfoEmitOutputFilePath(parsed.options)
  if (buildInfo !== undefined) keep.add(buildInfo)
  prune(outDir, keep)
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
if (problems.length > 0) fail()
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
console.error(`built ${packages.map((p) => p.name).join(", ")}`)
