/**
 * The shape of the house, read from the import graph of every package's shipped
 * sources (type-only imports count: a circle of types is still a circle a reader
 * must hold in their head): no module imports itself through others; core's
 * folders form a ladder (docs/architecture.md#the-ladder), each importing only
 * from its own floor or below, with no circle between folders; and core imports
 * no Node module (it runs wherever `Request` and `Response` do).
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const PACKAGES = resolve(dirname(fileURLToPath(import.meta.url)), "../..")

const sourcesOf = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourcesOf(path)
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : []
  })

const IMPORT = /^\s*(?:import|export)\b[^"']*?from\s+["'](\.{1,2}\/[^"']+)["']/gm

/** Each shipped module and the modules of its own package it imports. */
export const importGraph = (root: string): Map<string, Array<string>> => {
  const graph = new Map<string, Array<string>>()
  for (const pkg of readdirSync(root)) {
    const src = join(root, pkg, "src")
    if (!statSync(join(root, pkg)).isDirectory()) continue
    let files: Array<string>
    try {
      files = sourcesOf(src)
    } catch {
      continue
    }
    for (const file of files) {
      const text = readFileSync(file, "utf8")
      const targets = [...text.matchAll(IMPORT)].map((m) =>
        resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"))
      )
      graph.set(file, targets)
    }
  }
  return graph
}

/** The folders as a graph of their own, from the folder-level imports. */
export const folderGraph = (edges: Map<string, Array<string>>): Map<string, Array<string>> => {
  const graph = new Map<string, Array<string>>()
  for (const edge of edges.keys()) {
    const [from, to] = edge.split(" → ").map((f) => f.slice(0, -1)) as [string, string]
    graph.set(from, [...(graph.get(from) ?? []), to])
    if (!graph.has(to)) graph.set(to, [])
  }
  return graph
}

/** Every circle, each as the path of modules that closes it. */
export const circlesOf = (graph: Map<string, Array<string>>): Array<Array<string>> => {
  const circles: Array<Array<string>> = []
  const state = new Map<string, "open" | "done">()
  const stack: Array<string> = []
  const visit = (node: string) => {
    state.set(node, "open")
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      const seen = state.get(next)
      if (seen === "open") circles.push([...stack.slice(stack.indexOf(next)), next])
      else if (seen === undefined) visit(next)
    }
    stack.pop()
    state.set(node, "done")
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return circles
}

/** A core module's folder: its first path segment, or "" for the assembly's files at the root. */
const folderOf = (core: string, file: string): string => {
  const path = relative(core, file)
  return path.includes("/") ? path.slice(0, path.indexOf("/")) : ""
}

/** Core's folders by floor, from the ground up, as docs/architecture.md#the-ladder lists them. */
export const ladderOf = (markdown: string): ReadonlyArray<ReadonlyArray<string>> => {
  const section = markdown.split(/^## The ladder$/m)[1]?.split(/^## /m)[0] ?? ""
  // Each item is `N. **name**: `folder/`, …: what they hold`, wrapped over lines.
  return section
    .split(/^\d+\. /m)
    .slice(1)
    .map((item) => {
      const folders = item.replace(/\s+/g, " ").split("**: ")[1]?.split(": ")[0] ?? ""
      return [...folders.matchAll(/`([a-z]*)\/`/g)].map((folder) => folder[1]!)
    })
}

/** Each folder-level import of `graph` under `core`, with the files that make it. */
export const folderEdges = (
  core: string,
  graph: Map<string, Array<string>>
): Map<string, Array<string>> => {
  const edges = new Map<string, Array<string>>()
  for (const [file, targets] of graph) {
    if (!file.startsWith(`${core}/`)) continue
    for (const target of targets) {
      if (!target.startsWith(`${core}/`)) continue
      const from = folderOf(core, file)
      const to = folderOf(core, target)
      if (from === to) continue
      const key = `${from}/ → ${to}/`
      edges.set(key, [
        ...(edges.get(key) ?? []),
        `${relative(core, file)} → ${relative(core, target)}`
      ])
    }
  }
  return edges
}

/** The imports that climb: from a folder to one on a higher floor, or to a folder on none. */
export const climbing = (
  edges: Map<string, Array<string>>,
  floors: ReadonlyArray<ReadonlyArray<string>>
): Array<string> => {
  const floorOf = new Map(floors.flatMap((folders, i) => folders.map((f) => [f, i] as const)))
  return [...edges].flatMap(([edge, files]) => {
    const [from, to] = edge.split(" → ").map((f) => f.slice(0, -1))
    const up = (floorOf.get(to!) ?? Infinity) > (floorOf.get(from!) ?? -1)
    return up ? files : []
  })
}

describe("the import graph of the shipped sources", () => {
  it("finds a circle when there is one (the check can fail)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]]
    ])
    expect(circlesOf(graph)).toEqual([["a", "b", "c", "a"]])
  })

  it("has no circle", () => {
    const graph = importGraph(PACKAGES)
    expect(graph.size).toBeGreaterThan(100)
    const circles = circlesOf(graph).map((c) => c.map((f) => relative(PACKAGES, f)).join(" → "))
    expect(circles).toEqual([])
  })

  it("finds an import from a higher floor, and a folder on no floor (the check can fail)", () => {
    const core = "/core"
    const graph = new Map([
      ["/core/payments/P.ts", ["/core/shared/S.ts", "/core/gateway/G.ts"]],
      ["/core/gateway/G.ts", ["/core/payments/P.ts", "/core/newthing/N.ts"]],
      ["/core/shared/S.ts", []],
      ["/core/newthing/N.ts", []]
    ])
    const floors = [["shared"], ["payments"], ["gateway"]]
    expect(climbing(folderEdges(core, graph), floors)).toEqual([
      "payments/P.ts → gateway/G.ts",
      "gateway/G.ts → newthing/N.ts"
    ])
    expect(circlesOf(folderGraph(folderEdges(core, graph)))).toEqual([
      ["payments", "gateway", "payments"]
    ])
  })

  it("keeps core's folders a ladder: every folder on a floor, no import from a floor above", () => {
    const core = join(PACKAGES, "core", "src")
    const floors = ladderOf(readFileSync(join(PACKAGES, "..", "docs", "architecture.md"), "utf8"))
    expect(floors.length).toBeGreaterThan(5)
    const folders = readdirSync(core).filter(
      (name) => statSync(join(core, name)).isDirectory() && sourcesOf(join(core, name)).length > 0
    )
    expect(
      folders.filter((folder) => !floors.some((floor) => floor.includes(folder))),
      "folders on no floor of docs/architecture.md#the-ladder"
    ).toEqual([])
    expect(climbing(folderEdges(core, importGraph(PACKAGES)), floors)).toEqual([])
  })

  it("has no circle between core's folders", () => {
    const core = join(PACKAGES, "core", "src")
    expect(circlesOf(folderGraph(folderEdges(core, importGraph(PACKAGES))))).toEqual([])
  })

  it("names core's public surface: its index exports by name, and nothing outside core imports a core module by path", () => {
    const index = readFileSync(join(PACKAGES, "core", "src", "index.ts"), "utf8")
    expect(index.match(/^export \* from .*$/gm) ?? []).toEqual([])
    const deep =
      /from\s+["']@pay\/core\/(?!api(?:\/[a-z]+)?["']|webhooks["']|testing["'])[^"']*["']/
    const outside = [
      ...importGraph(PACKAGES).keys(),
      ...sourcesOf(join(PACKAGES, "..", "examples")),
      ...sourcesOf(join(PACKAGES, "..", "bench"))
    ]
      .filter((file) => !file.startsWith(join(PACKAGES, "core")))
      .filter((file) => deep.test(readFileSync(file, "utf8")))
      .map((file) => relative(PACKAGES, file))
    expect(outside).toEqual([])
    expect(deep.test('import { x } from "@pay/core/dist/Engine.js"')).toBe(true)
    expect(deep.test('import { x } from "@pay/core/api/payments"')).toBe(false)
  })

  it("keeps core's http/ the ground floor: it imports only shared/ and itself", () => {
    const core = join(PACKAGES, "core", "src")
    const offending = [...importGraph(PACKAGES)]
      .filter(([file]) => relative(core, file).startsWith("http/"))
      .flatMap(([file, targets]) =>
        targets
          .map((target) => relative(core, target))
          .filter((target) => !target.startsWith("http/") && !target.startsWith("shared/"))
          .map((target) => `${relative(core, file)} → ${target}`)
      )
    expect(offending).toEqual([])
  })

  it("ships no test support: no shipped source imports a test runner", () => {
    const runners = [...importGraph(PACKAGES)].filter(([file]) =>
      /from\s+["'](vitest|@effect\/vitest)["']/.test(readFileSync(file, "utf8"))
    )
    expect(runners.map(([file]) => relative(PACKAGES, file))).toEqual([])
  })

  it("keeps core runtime-neutral: no shipped source of core imports a Node module", () => {
    const core = join(PACKAGES, "core", "src")
    const nodeImport =
      /(?:from\s+|import\s*\(\s*)["'](node:[^"']+|fs|path|http|https|net|os|crypto|child_process|url|stream)["']/
    const offending = [...importGraph(PACKAGES)]
      .filter(([file]) => file.startsWith(core) && nodeImport.test(readFileSync(file, "utf8")))
      .map(([file]) => relative(PACKAGES, file))
    expect(offending).toEqual([])
    // The check can fail: adapter-node's server does import one.
    expect(
      nodeImport.test(readFileSync(join(PACKAGES, "adapter-node", "src", "NodeServer.ts"), "utf8"))
    ).toBe(true)
  })
})
