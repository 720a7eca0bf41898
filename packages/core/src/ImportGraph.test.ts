/**
 * The shape of the house, read from the import graph of every package's shipped
 * sources (type-only imports count: a circle of types is still a circle a reader
 * must hold in their head): no module imports itself through others, core's
 * http/ is the ground floor, importing no feature folder, and core imports no
 * Node module (it runs wherever `Request` and `Response` do).
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
