/**
 * The standalone server's process on either runtime: reads the environment,
 * starts everything on the given host, prints the start banner, and runs until
 * SIGINT/SIGTERM, then stops within a bound: held long-polls are answered at
 * once, in-flight requests get up to 10 s, then the database closes; a second
 * signal exits at once. A start that fails says why in one line per problem
 * (startErrors.ts). `main.ts` (Node) and `main.bun.ts` (Bun) pass their host.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { dirname, join, resolve } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { type FreshChainRun, Partners } from "@pay/core"
import { Cause, Console, Effect, Option } from "effect"
import { startStandalone } from "./app.js"
import { defaultPublicUrl, describeDatabase, isPostgresUrl, standaloneConfig } from "./config.js"
import type { StandaloneHost } from "./host.js"
import { type StartContext, startErrorLines } from "./startErrors.js"
import { keyVariables, unknownSettingWarnings } from "./unknownSettings.js"

/** In-flight requests get this long after a signal (the adapters' shutdown grace)... */
export const SHUTDOWN_GRACE_MS = 10_000
/** ...and the whole stop this long, the database's closing included, before the process exits anyway. */
export const SHUTDOWN_BOUND_MS = 15_000

/** The whole cause of a failed start is printed too: `--verbose`, or PAY_LOG_LEVEL=debug (or trace). */
const verbose = (): boolean =>
  process.argv.includes("--verbose") || /^(debug|trace|all)$/i.test(process.env.PAY_LOG_LEVEL ?? "")

/** Warns about each PAY_* variable that is no setting (a misspelt one is otherwise ignored). */
const warnUnknownSettings = Effect.suspend(() => {
  const path = process.env.PAY_CONFIG
  let named: ReadonlyArray<string> = []
  if (path !== undefined && path !== "") {
    try {
      named = keyVariables(readFileSync(path, "utf8"))
    } catch {
      // An unreadable file is the start's to refuse, in its own words.
    }
  }
  return Effect.forEach(unknownSettingWarnings(process.env, named), (line) => Console.error(line), {
    discard: true
  })
})

/**
 * PORT=0 without PAY_PUBLIC_URL: a free port chosen now, so the links the engine hands out
 * (buyer links, the banner's) name the port it will listen on, not `:0`. Another process
 * could take it before the server binds; the start then fails as on any busy port.
 */
const withChosenPort = <
  C extends { readonly port: number; readonly host: string; readonly publicUrl: string }
>(
  config: C
): Effect.Effect<C> =>
  // A PAY_PUBLIC_URL that was given is not the default `http://HOST:0`.
  config.port !== 0 || config.publicUrl !== defaultPublicUrl(config.host, 0)
    ? Effect.succeed(config)
    : Effect.async<C>((resume) => {
        const probe = createServer()
        const keep = () => resume(Effect.succeed(config))
        probe.once("error", keep)
        probe.listen(0, config.host, () => {
          const address = probe.address()
          probe.close(() => {
            if (address === null || typeof address === "string") return keep()
            resume(
              Effect.succeed({
                ...config,
                port: address.port,
                publicUrl: defaultPublicUrl(config.host, address.port)
              })
            )
          })
        })
      })

/**
 * What starting the sandbox afresh did (core's ChainInstances.ts): said when the database
 * remembers an earlier run of it, or held work of one.
 */
const freshRunLines = (run: FreshChainRun): string => {
  if (run.previous === null && run.paymentsFailed + run.settlementsEnded === 0) return ""
  const lines = [
    "  A new run of the sandbox chain: the one this database last ran against is gone, so its",
    "    nonces start afresh. Earlier payments keep their history (their transactions were on it)."
  ]
  if (run.paymentsFailed > 0) {
    lines.push(
      `    ${run.paymentsFailed} payment(s) still being collected on it failed (failureCode chain_reset).`
    )
  }
  if (run.settlementsEnded > 0) {
    lines.push(
      `    ${run.settlementsEnded} settlement(s) under way on it will not complete (their funds were on it).`
    )
  }
  return lines.join("\n")
}

/**
 * A later start's last banner lines (the first start printed the key once): how to get a
 * new key when that one is lost, for the partner there is, and that the CLI must work on
 * this server's database. One string: it is written at once, the banner's end.
 */
const lostKeyLines = (partnerIds: ReadonlyArray<string>): string =>
  [
    partnerIds.length === 1
      ? `  Lost the API key? Make a new one: npm run pay -- keys create --partner ${partnerIds[0]}`
      : "  Lost an API key? Find the partner with `npm run pay -- partners list`, then: npm run pay -- keys create --partner <ptnr_id>",
    "    (the CLI must be given the same PAY_DATABASE as this server; each command names the database it used)"
  ].join("\n")

/**
 * Fails as listening would when the port is taken (or not this machine's), before
 * anything is opened: a start that cannot serve must change nothing, and the
 * engine's start does (the sandbox on a new run starts its chain work afresh,
 * which would strand the running server's). PORT=0 takes any free one: nothing to probe.
 */
const portFree = (config: {
  readonly host: string
  readonly port: number
}): Effect.Effect<void, Error> =>
  config.port === 0
    ? Effect.void
    : Effect.async<void, Error>((resume) => {
        const probe = createServer()
        probe.once("error", (error) => resume(Effect.fail(error)))
        probe.listen(config.port, config.host, () => probe.close(() => resume(Effect.void)))
      })

/**
 * Where the first partner's new key goes: never stdout, whose lines a log collector keeps
 * (with PAY_LOG_FORMAT=json the banner shares the stream with the JSON log lines). On a
 * terminal, stderr, for the person who started the server; else (a service manager, a
 * container, a pipe) a new file only its owner may read (0600), next to the SQLite
 * database (else in the working directory), whose path the banner names.
 */
export const showBootstrapKey = (
  partnerId: string,
  apiKey: string,
  database: string,
  terminal: boolean = process.stderr.isTTY === true
): Effect.Effect<string> =>
  terminal
    ? Effect.as(
        Console.error(`  Its API key, shown only this once, store it now:\n\n    ${apiKey}\n`),
        "  Its API key is above (on stderr), shown only this once."
      )
    : Effect.sync(() => {
        const folder = isPostgresUrl(database) ? process.cwd() : dirname(resolve(database))
        const file = join(folder, `bootstrap-api-key-${partnerId}.txt`)
        // "wx": a new file only, never one already there (nor through a link someone left).
        writeFileSync(file, `${apiKey}\n`, { mode: 0o600, flag: "wx" })
        return `  Its API key is in ${file} (readable by this user only): store it, then delete the file.`
      })

const program = (host: StandaloneHost) => {
  /** The settings a failed start's lines name, once read. */
  const context: { -readonly [K in keyof StartContext]: StartContext[K] } = {}
  /** Set once the server listens: what fails after that is no start's failure. */
  let listening = false
  return Effect.gen(function* () {
    yield* warnUnknownSettings
    const config = yield* Effect.flatMap(standaloneConfig, withChosenPort)
    context.host = config.host
    context.port = config.port
    context.database = config.database
    yield* portFree(config)
    // Seen before the start creates it: a misspelt PAY_DATABASE shows as a new file.
    const newDatabase = !isPostgresUrl(config.database) && !existsSync(config.database)
    const {
      server,
      bootstrapped,
      sandbox,
      freshRuns,
      context: services
    } = yield* startStandalone(host, config)
    listening = true
    yield* Console.log(`Pay engine listening on ${server.url} (${host.runtime})`)
    yield* Console.log(
      `  API reference: ${config.publicUrl}/docs   OpenAPI document: ${config.publicUrl}/openapi.json`
    )
    yield* Console.log(
      `  Database: ${describeDatabase(config.database)}${newDatabase ? " (new: created now)" : ""}`
    )
    const previous = config.previousSecrets?.length ?? 0
    if (previous > 0) {
      yield* Console.log(
        `  Engine secret: ${previous} previous secret(s) (PAY_SECRET_PREVIOUS) still open older values; after \`npm run pay -- secret reseal\` and 48 hours, drop them`
      )
    }
    if (config.fetchAllowPrivate) {
      yield* Console.warn(
        "  WARNING: PAY_FETCH_ALLOW_PRIVATE=1: merchant logo URLs may reach loopback and private addresses (tests and private deployments only)"
      )
    }
    if (sandbox !== undefined) {
      yield* Console.log(
        [
          `  Sandbox chain ${sandbox.description.chainId} (no PAY_CONFIG): it starts fresh with every start.`,
          `    JSON-RPC: ${config.publicUrl}/sandbox/rpc   test USDC: ${sandbox.token.asset}`,
          `    USDT and DAI too (through Permit2), and ETH (GET ${config.publicUrl}/sandbox lists every token)`,
          `    Test tokens: curl -X POST ${config.publicUrl}/sandbox/faucet -H "Content-Type: application/json" \\`,
          `      -d '{"account": "${sandbox.description.chainId}:0x<your address>", "amount": "100000000", "token": "USDC"}'`
        ].join("\n")
      )
      for (const lines of freshRuns.map(freshRunLines)) if (lines !== "") yield* Console.log(lines)
    } else if (Option.isSome(config.payConfigPath)) {
      yield* Console.log(`  Networks: ${config.payConfigPath.value}`)
    }
    yield* Option.match(bootstrapped, {
      onNone: () =>
        Effect.flatMap(
          Effect.provide(
            Partners.use((p) => p.list),
            services
          ),
          (partners) => Console.log(lostKeyLines(partners.map((p) => p.id)))
        ),
      onSome: ({ partnerId, apiKey }) =>
        Effect.gen(function* () {
          yield* Console.log(`First start: created partner ${partnerId} ("Default partner").`)
          const where = Option.isSome(config.bootstrapApiKey)
            ? "  Its API key is the one in PAY_BOOTSTRAP_API_KEY."
            : yield* showBootstrapKey(partnerId, apiKey, config.database)
          yield* Console.log(
            `${where}\n  Try: curl -H "Api-Key: <key>" ${config.publicUrl}/v1/merchants`
          )
        })
    })
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.onInterrupt(() => Console.log("Pay engine stopped.")),
    // The operator's to fix: one line per problem, no stack trace (unless asked for).
    Effect.tapErrorCause((cause) =>
      Effect.suspend(() => {
        // Past the start (a failure while stopping), the lines are not a start's.
        const lines = listening
          ? Cause.isInterruptedOnly(cause)
            ? undefined
            : [`error: the server stopped on an error: ${Cause.squash(cause)}`]
          : startErrorLines(cause, context)
        if (lines === undefined) return Effect.void
        return Console.error(
          [...lines, ...(verbose() ? [Cause.pretty(cause, { renderErrorCause: true })] : [])].join(
            "\n"
          )
        )
      })
    )
  )
}

/**
 * After the first SIGINT/SIGTERM (which runMain turns into an interrupt: the
 * scope closes, the server drains), a second one exits at once, saying so;
 * and a stop that outlasts its bound exits all the same.
 */
const watchSignals = () => {
  let received = 0
  const onSignal = (signal: NodeJS.Signals) => {
    received++
    if (received === 1) {
      console.log(
        `Pay engine stopping (${signal}): held long-polls answered now, requests get up to ${SHUTDOWN_GRACE_MS / 1000} s; a second signal exits at once.`
      )
      setTimeout(() => {
        process.stderr.write(
          `error: stopping took over ${SHUTDOWN_BOUND_MS / 1000} s: exiting now\n`
        )
        process.exit(1)
      }, SHUTDOWN_BOUND_MS).unref()
      return
    }
    process.stderr.write("second signal: exiting now\n")
    process.exit(signal === "SIGINT" ? 130 : 143)
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
}

/** Runs the server until a signal stops it (Bun keeps Node's process and signal API). */
export const runStandalone = (host: StandaloneHost): void => {
  watchSignals()
  NodeRuntime.runMain(program(host), { disableErrorReporting: true })
}
