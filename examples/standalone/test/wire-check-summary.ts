/**
 * Folds the files a `WIRE_CHECK=report` run wrote to .tmp/wire-check into one
 * list. The recorded responses are checked again with the current checker
 * and documents (so a change to the rules, the deviation table or the engine's
 * document needs no new run), then printed: each mismatch once, with the
 * suites that produced it, and what was observed per route.
 *
 *   WIRE_CHECK=report npx vitest run
 *   npx tsx examples/standalone/test/wire-check-summary.ts [--json]
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { openApiDocument } from "@pay/core"
import {
  bodyCode,
  DEFAULT_REFERENCE_VERSION,
  groupMismatches,
  loadReferences,
  makeChecker,
  type WireRecord
} from "./wire-check.js"

const dir = join(process.cwd(), ".tmp", "wire-check")
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as { records: Array<WireRecord> })
const records = files.flatMap((f) => f.records)

const checker = makeChecker({
  engine: openApiDocument(),
  references: loadReferences(),
  defaultVersion: DEFAULT_REFERENCE_VERSION
})
const mismatches = records.flatMap((r) => checker.check(r))
const groups = groupMismatches(mismatches)

if (process.argv.includes("--json")) {
  console.log(JSON.stringify(groups, null, 1))
} else {
  const lines: Array<string> = []
  lines.push(
    `${files.length} test files, ${records.length} records, ` +
      `${mismatches.length} mismatches in ${groups.length} groups`,
    ""
  )
  for (const g of groups) {
    lines.push(
      `- [${g.check}] ${g.method} ${g.template} ${g.status} ${g.code ?? "(no code)"}: ${g.problem}`,
      `    ${g.count}x, Pay-Version ${g.versions.join(", ")}; suites: ${g.suites.join(", ")}`,
      `    e.g. "${g.tests[0] ?? ""}"`,
      `    body: ${g.excerpt}`
    )
  }
  lines.push("", "Observed (method template status code: count):")
  const observed = new Map<string, number>()
  for (const r of records) {
    const key = `${r.method} ${r.template} ${r.status} ${bodyCode(r.body) ?? "-"}`
    observed.set(key, (observed.get(key) ?? 0) + 1)
  }
  for (const [key, count] of [...observed].sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`  ${key}: ${count}`)
  console.log(lines.join("\n"))
}
