// `npm run pack -- [folder] [--clean]`: builds every package under packages/
// (scripts/build-packages.mjs: what changed, or everything with --clean), packs each with
// `npm pack` into the folder (default .tmp/packages/), checks what each tarball holds (dist,
// README.md, LICENSE, package.json; no sources, tests or build info), and prints the tarballs'
// absolute paths, one a line. A platform installs them with `npm install <tarballs>` and runs
// them on plain node (examples/packed/packed.test.ts does).
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { builtExports, ROOT, workspacePackages } from "./workspace-packages.mjs"

const args = process.argv.slice(2)
const folder = args.find((arg) => !arg.startsWith("--"))
const destination = resolve(folder ?? join(ROOT, ".tmp", "packages"))
const packages = workspacePackages()

// Every package ships the root's LICENSE: a new package gets a copy (to commit), a stale one fails.
const license = readFileSync(join(ROOT, "LICENSE"), "utf8")
const problems = []
for (const p of packages) {
  const own = join(p.dir, "LICENSE")
  if (!existsSync(own)) {
    copyFileSync(join(ROOT, "LICENSE"), own)
    console.error(`copied LICENSE into ${p.path}: commit it`)
  } else if (readFileSync(own, "utf8") !== license) {
    problems.push(`${p.path}/LICENSE differs from the root's LICENSE`)
  }
  if (!existsSync(join(p.dir, "README.md"))) problems.push(`${p.path}: no README.md`)
}
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}

const build = [join(ROOT, "scripts", "build-packages.mjs"), ...args.filter((a) => a === "--clean")]
try {
  // The build's own output goes to stderr: stdout is the tarballs' list.
  execFileSync(process.execPath, build, { cwd: ROOT, stdio: ["ignore", 2, 2] })
} catch {
  process.exit(1)
}

mkdirSync(destination, { recursive: true })
const packed = JSON.parse(
  execFileSync(
    "npm",
    [
      "pack",
      "--json",
      "--pack-destination",
      destination,
      ...packages.flatMap((p) => ["--workspace", p.path])
    ],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }
  )
)

/** Files a tarball may hold outside dist/. */
const TOP_LEVEL = new Set(["package.json", "README.md", "LICENSE"])
const tarballs = []
for (const p of packages) {
  const entry = packed.find((e) => e.name === p.name)
  if (entry === undefined) {
    problems.push(`${p.name}: npm pack did not pack it`)
    continue
  }
  const files = new Set(entry.files.map((f) => f.path))
  // A command's launcher (`bin`) is shipped beside dist/, and must be.
  const bins = Object.values(p.manifest.bin ?? {}).map((b) => b.replace(/^\.\//, ""))
  for (const bin of bins) {
    if (!files.has(bin)) problems.push(`${entry.filename}: has no ${bin} (its bin names it)`)
  }
  for (const file of files) {
    const stray =
      (!file.startsWith("dist/") && !TOP_LEVEL.has(file) && !bins.includes(file)) ||
      /\.test\.|\.tsbuildinfo$|(^|\/)test\//.test(file)
    if (stray) problems.push(`${entry.filename}: should not hold ${file}`)
  }
  for (const file of TOP_LEVEL) {
    if (!files.has(file)) problems.push(`${entry.filename}: has no ${file}`)
  }
  for (const exported of builtExports(p.manifest)) {
    for (const file of [exported.types, exported.default]) {
      const path = file.replace(/^\.\//, "")
      if (!files.has(path)) problems.push(`${entry.filename}: has no ${path} (its exports name it)`)
    }
  }
  tarballs.push(join(destination, entry.filename))
}
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}
for (const tarball of tarballs) console.log(tarball)
