/**
 * Records what the engine answers the tests over loopback, then holds it
 * against the engine's own OpenAPI document and the reference documents (the
 * rules are in wire-check.ts). A vitest setup file: it runs in every test
 * file's worker before the file's own modules load, so every `fetch` the file
 * makes, directly or through e2e-support's client, goes through the wrapper.
 *
 * Recorded: responses from 127.0.0.1, localhost or [::1] whose path starts
 * with /v1/ and is a route of the engine's document for that method (a path
 * that is a route only for other methods is a 405 and is left out). The
 * wrapper reads a clone of each response, never the caller's body.
 *
 * After the file's tests, its records are checked; any mismatch fails the
 * file with a readable list. `WIRE_CHECK=report` writes the mismatches and
 * the records to .tmp/wire-check/<file>.json instead of failing (for a run
 * that collects every mismatch while the engine is being fixed; then
 * `npx tsx examples/standalone/test/wire-check-summary.ts` lists them all). Failing
 * is the default.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { afterAll, expect } from "vitest"

interface Raw {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly version: string | undefined
  readonly text: string
  readonly test: string | undefined
}

interface State {
  readonly original: typeof fetch
  pending: Array<Promise<Raw | undefined>>
}

const STATE = Symbol.for("pay.wire-check")
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"])
const BODY_WAIT_MS = 10_000

const holder = globalThis as unknown as { [STATE]?: State }
const state: State = holder[STATE] ?? { original: globalThis.fetch, pending: [] }
holder[STATE] = state
// This file's records only, even if a worker runs several files.
state.pending = []

const requestOf = (input: Parameters<typeof fetch>[0], init: RequestInit | undefined) => {
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  const method = init?.method ?? (input instanceof Request ? input.method : "GET")
  return { url: new URL(href), method: method.toUpperCase() }
}

/** The body of a clone, or undefined when it does not come within BODY_WAIT_MS. */
const textOf = (response: Response): Promise<string | undefined> => {
  const clone = response.clone()
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), BODY_WAIT_MS)
    const settle = (text: string | undefined) => {
      clearTimeout(timer)
      done(text)
    }
    clone.text().then(settle, () => settle(undefined))
  })
}

const wrapped = async (
  input: Parameters<typeof fetch>[0],
  init?: RequestInit
): Promise<Response> => {
  const response = await state.original(input, init)
  try {
    const { url, method } = requestOf(input, init)
    if (LOOPBACK.has(url.hostname) && url.pathname.startsWith("/v1/")) {
      const test = expect.getState().currentTestName
      const status = response.status
      const version = response.headers.get("pay-version") ?? undefined
      state.pending.push(
        textOf(response).then((text) =>
          text === undefined
            ? undefined
            : { method, path: url.pathname, status, version, text, test }
        )
      )
    }
  } catch {
    // A request the wrapper cannot read is the caller's business, not the check's.
  }
  return response
}

globalThis.fetch = wrapped as typeof fetch

afterAll(async (file) => {
  const pending = state.pending
  state.pending = []
  const raws = (await Promise.all(pending)).filter((r): r is Raw => r !== undefined)
  const suite = relative(process.cwd(), file.file?.filepath ?? file.name)
  const report = process.env.WIRE_CHECK === "report"
  if (raws.length === 0 && !report) return

  const [{ openApiDocument }, wire] = await Promise.all([
    import("@pay/core"),
    import("./wire-check.js")
  ])
  const checker = wire.makeChecker({
    engine: openApiDocument(),
    references: wire.loadReferences(),
    defaultVersion: wire.DEFAULT_REFERENCE_VERSION
  })
  const records: Array<import("./wire-check.js").WireRecord> = []
  for (const raw of raws) {
    const match = checker.match(raw.method, raw.path)
    if (match._tag !== "Found") continue
    let body: unknown
    try {
      body = JSON.parse(raw.text)
    } catch {
      body = undefined
    }
    records.push({ ...raw, template: match.template, body, suite })
  }
  const mismatches = records.flatMap((record) => checker.check(record))

  if (report) {
    const dir = join(process.cwd(), ".tmp", "wire-check")
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      join(dir, `${suite.replace(/[\\/]/g, "__")}.json`),
      JSON.stringify({ suite, mismatches, records })
    )
    return
  }
  if (mismatches.length > 0) {
    const kinds = wire.groupMismatches(mismatches).length
    throw new Error(
      `The wire check found ${kinds} kind(s) of mismatch (${mismatches.length} in all) in ${suite}'s traffic ` +
        `(drift: not in /openapi.json; reference: against spec/reference-openapi; ` +
        `error-shape: WIRE.md section 3):\n${wire.formatMismatches(mismatches)}`
    )
  }
})
