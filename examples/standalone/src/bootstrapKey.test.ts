/**
 * Where the first start's key goes (server.ts's showBootstrapKey): never stdout, where the log
 * lines go; stderr on a terminal, else a new file only its owner may read.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it, vi } from "vitest"
import { showBootstrapKey } from "./server.js"

const dir = mkdtempSync(join(tmpdir(), "pay-bootstrap-key-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const KEY = "pk_abcdefghijkl_0123456789012345678901234567890123456789"

/** The lines written to stdout (console.log) and stderr (console.error) while `effect` runs. */
const written = async <A>(effect: Effect.Effect<A>) => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {})
  const error = vi.spyOn(console, "error").mockImplementation(() => {})
  try {
    const value = await Effect.runPromise(effect)
    return { value, out: log.mock.calls.flat().join("\n"), err: error.mock.calls.flat().join("\n") }
  } finally {
    log.mockRestore()
    error.mockRestore()
  }
}

describe("the first start's key", () => {
  it("goes to stderr on a terminal, never stdout", async () => {
    const { value, out, err } = await written(
      showBootstrapKey("ptnr_1", KEY, join(dir, "pay.sqlite"), true)
    )
    expect(err).toContain(KEY)
    expect(out).not.toContain(KEY)
    expect(value).not.toContain(KEY)
  })

  it("goes to a new file only its owner may read without one, named in the banner", async () => {
    const { value, out, err } = await written(
      showBootstrapKey("ptnr_2", KEY, join(dir, "pay.sqlite"), false)
    )
    const file = join(dir, "bootstrap-api-key-ptnr_2.txt")
    expect(value).toContain(`Its API key is in ${file} (readable by this user only)`)
    expect(`${out}${err}${value}`).not.toContain(KEY)
    expect(readFileSync(file, "utf8")).toBe(`${KEY}\n`)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    // Never over a file that is there already (nor through a link left in its place).
    await expect(
      written(showBootstrapKey("ptnr_2", KEY, join(dir, "pay.sqlite"), false))
    ).rejects.toThrow(/EEXIST/)
  })
})
