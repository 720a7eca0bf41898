/**
 * The standalone server's process on either runtime: reads the environment,
 * starts everything on the given host, prints the start banner, and runs until
 * SIGINT/SIGTERM, then stops cleanly: in-flight requests finish, then the
 * database closes. `main.ts` (Node) and `main.bun.ts` (Bun) pass their host.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import { startStandalone } from "./app.js"
import { describeDatabase, StartRefused, standaloneConfig } from "./config.js"
import type { StandaloneHost } from "./host.js"

const program = (host: StandaloneHost) =>
  Effect.gen(function* () {
    const config = yield* standaloneConfig
    const { server, bootstrapped, sandbox } = yield* startStandalone(host, config)
    yield* Console.log(`Pay engine listening on ${server.url} (${host.runtime})`)
    yield* Console.log(
      `  API reference: ${config.publicUrl}/docs   OpenAPI document: ${config.publicUrl}/openapi.json`
    )
    yield* Console.log(`  Database: ${describeDatabase(config.database)}`)
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
          `    Test tokens: curl -X POST ${config.publicUrl}/sandbox/faucet -H "Content-Type: application/json" \\`,
          `      -d '{"account": "${sandbox.description.chainId}:0x<your address>", "amount": "100000000"}'`
        ].join("\n")
      )
    } else if (Option.isSome(config.payConfigPath)) {
      yield* Console.log(`  Networks: ${config.payConfigPath.value}`)
    }
    yield* Option.match(bootstrapped, {
      onNone: () =>
        Console.log(
          "  Create a partner and its API key with: npm run pay -- partners create --name <name>"
        ),
      onSome: ({ partnerId, apiKey }) =>
        Console.log(
          [
            `First start: created partner ${partnerId} ("Default partner").`,
            Option.isSome(config.bootstrapApiKey)
              ? "  Its API key is the one in PAY_BOOTSTRAP_API_KEY."
              : `  Its API key, shown only this once, store it now:\n\n    ${apiKey}\n`,
            `  Try: curl -H "Api-Key: <key>" ${config.publicUrl}/v1/merchants`
          ].join("\n")
        )
    })
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.onInterrupt(() => Console.log("Pay engine stopped.")),
    // A refused configuration is the operator's to fix: one line, no stack trace.
    Effect.catchIf(
      (e): e is StartRefused => e instanceof StartRefused,
      (refused) =>
        Effect.zipRight(
          Console.error(`error: ${refused.message}`),
          Effect.sync(() => {
            process.exitCode = 1
          })
        )
    )
  )

/** Runs the server until a signal stops it (Bun keeps Node's process and signal API). */
export const runStandalone = (host: StandaloneHost): void => NodeRuntime.runMain(program(host))
