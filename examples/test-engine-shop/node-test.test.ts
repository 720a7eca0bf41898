/**
 * shop.node-test.mjs under node:test, as part of `npm test`: the same file a
 * platform runs with plain `node --test` (examples/packed runs it so, on the
 * packed packages). In the repo, @pay/testing and @pay/core are TypeScript
 * sources, so node takes the sources' condition and tsx to load them.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")

it("passes its four cases under node --test", async () => {
  const args = [
    "--import",
    "tsx",
    "--conditions=@pay/source",
    "--test",
    "--test-reporter=tap",
    join(import.meta.dirname, "shop.node-test.mjs")
  ]
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(`node --test failed:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`)
    }
  )
  expect(stdout).toMatch(/^# tests 4$/m)
  expect(stdout).toMatch(/^# pass 4$/m)
  expect(stdout).toMatch(/^# fail 0$/m)
}, 120_000)
