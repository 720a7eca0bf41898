/**
 * Where a process's heap goes, by kind of object: a V8 .heapsnapshot's nodes aggregated by
 * type and name (for an object, its constructor; for a closure, its function; strings,
 * numbers and code by type alone), self size and count, largest first. Given two snapshots
 * (idle, then holding long-polls), also their difference, and with `--per N` the
 * difference per held request.
 *
 *   tsx bench/heap-summary.ts idle.heapsnapshot held.heapsnapshot --per 10000 [--top 20]
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: ReadonlyArray<ReadonlyArray<string> | string>
    }
  }
  readonly nodes: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

export interface Kind {
  readonly key: string
  size: number
  count: number
}

export interface HeapSummary {
  readonly kinds: Map<string, Kind>
  readonly totalSize: number
  readonly totalCount: number
}

// Their names are their contents or values: grouped by type alone.
const BY_TYPE_ONLY = new Set([
  "string",
  "concatenated string",
  "sliced string",
  "number",
  "bigint",
  "code",
  "regexp"
])

export const summarise = (path: string): HeapSummary => {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Snapshot
  const fields = parsed.snapshot.meta.node_fields
  const types = parsed.snapshot.meta.node_types[0] as ReadonlyArray<string>
  const width = fields.length
  const typeAt = fields.indexOf("type")
  const nameAt = fields.indexOf("name")
  const sizeAt = fields.indexOf("self_size")
  const kinds = new Map<string, Kind>()
  let totalSize = 0
  let totalCount = 0
  const nodes = parsed.nodes
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!] ?? "?"
    const size = nodes[i + sizeAt]!
    const name = BY_TYPE_ONLY.has(type) ? "" : (parsed.strings[nodes[i + nameAt]!] ?? "")
    const key =
      name === "" ? `(${type})` : `${type} ${name.length > 60 ? `${name.slice(0, 57)}…` : name}`
    let kind = kinds.get(key)
    if (kind === undefined) {
      kind = { key, size: 0, count: 0 }
      kinds.set(key, kind)
    }
    kind.size += size
    kind.count++
    totalSize += size
    totalCount++
  }
  return { kinds, totalSize, totalCount }
}

const n = (x: number) => Math.round(x).toLocaleString("en-US")

const table = (rows: ReadonlyArray<Kind>, per?: number) => {
  const header =
    `${"self size (B)".padStart(15)}${"count".padStart(11)}` +
    (per === undefined ? "" : `${"B/poll".padStart(9)}${"n/poll".padStart(8)}`) +
    "  type name"
  return [
    header,
    ...rows.map(
      (k) =>
        `${n(k.size).padStart(15)}${n(k.count).padStart(11)}` +
        (per === undefined
          ? ""
          : `${(k.size / per).toFixed(0).padStart(9)}${(k.count / per).toFixed(2).padStart(8)}`) +
        `  ${k.key}`
    )
  ]
}

const top = (summary: HeapSummary, count: number) =>
  [...summary.kinds.values()].sort((a, b) => b.size - a.size).slice(0, count)

export const formatSummary = (label: string, summary: HeapSummary, count: number) => [
  `${label}: ${n(summary.totalSize)} B in ${n(summary.totalCount)} nodes; top ${count} by self size`,
  ...table(top(summary, count))
]

/** What `after` holds that `before` did not, by kind, largest growth first. */
export const formatDifference = (
  before: HeapSummary,
  after: HeapSummary,
  count: number,
  per?: number
) => {
  const keys = new Set([...before.kinds.keys(), ...after.kinds.keys()])
  const diff: Array<Kind> = []
  for (const key of keys) {
    const a = before.kinds.get(key)
    const b = after.kinds.get(key)
    diff.push({
      key,
      size: (b?.size ?? 0) - (a?.size ?? 0),
      count: (b?.count ?? 0) - (a?.count ?? 0)
    })
  }
  diff.sort((x, y) => y.size - x.size)
  const grown = after.totalSize - before.totalSize
  return [
    `difference: ${n(grown)} B in ${n(after.totalCount - before.totalCount)} nodes` +
      (per === undefined ? "" : ` = ${n(grown / per)} B per poll over ${n(per)} polls`) +
      `; top ${count} by growth`,
    ...table(diff.slice(0, count), per)
  ]
}

const main = () => {
  const args = process.argv.slice(2)
  const option = (name: string) => {
    const at = args.indexOf(name)
    if (at === -1) return undefined
    const value = Number(args.splice(at, 2)[1])
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a number`)
    return value
  }
  const per = option("--per")
  const count = option("--top") ?? 20
  const [first, second] = args
  if (first === undefined)
    throw new Error(
      "usage: heap-summary before.heapsnapshot [after.heapsnapshot] [--per N] [--top N]"
    )
  const before = summarise(first)
  const lines = formatSummary(second === undefined ? first : `before (${first})`, before, count)
  if (second !== undefined) {
    const after = summarise(second)
    lines.push("", ...formatSummary(`after (${second})`, after, count))
    lines.push("", ...formatDifference(before, after, count, per))
  }
  console.log(lines.join("\n"))
}

if (process.argv[1]?.endsWith("heap-summary.ts")) main()
