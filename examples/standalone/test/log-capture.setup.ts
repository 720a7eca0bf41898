/**
 * The engine's log lines, shown for a failing test only. The engine writes its lines straight
 * to stdout (observability/Logging.ts binds stdout's write when it loads, after this file), so
 * vitest's `silent: "passed-only"`, which holds back `console` output, does not hold them.
 * This setup file, run in every test file's worker before the file's modules load, puts a
 * writer in front of stdout that keeps what is written during a test and prints it only when
 * the test fails; what is written outside a test (a `beforeAll` starting a server) is kept for
 * the file and printed if any of its tests failed.
 */
import { afterAll, beforeEach } from "vitest"

const write = process.stdout.write.bind(process.stdout)
let kept: Array<string> = []
let outsideTests: Array<string> = []
let inTest = false
let anyFailed = false

process.stdout.write = ((chunk: string | Uint8Array, ...rest: Array<unknown>) => {
  ;(inTest ? kept : outsideTests).push(
    typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
  )
  const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined
  done?.()
  return true
}) as typeof process.stdout.write

beforeEach(({ task, onTestFailed, onTestFinished }) => {
  kept = []
  inTest = true
  onTestFailed(() => {
    anyFailed = true
    if (kept.length > 0) {
      write(`\n--- what the test "${task.name}" wrote to stdout (the engine's log lines) ---\n`)
      write(kept.join(""))
      write("--- end ---\n")
    }
  })
  onTestFinished(() => {
    inTest = false
  })
})

afterAll(() => {
  if (anyFailed && outsideTests.length > 0) {
    write("\n--- what this file wrote to stdout outside its tests ---\n")
    write(outsideTests.join(""))
    write("--- end ---\n")
  }
  outsideTests = []
})
