/**
 * `serveOnBun` as a scoped Effect resource, as @pay/adapter-node's `serve`:
 * listening when acquired, stopped gracefully when the scope closes.
 */
import { Effect } from "effect"
import { type AnswersFetch, type BunServeOptions, serveOnBun } from "./BunServer.js"

export const serve = (engine: AnswersFetch, options: BunServeOptions) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => serveOnBun(engine, options),
      catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
    }),
    (server) => Effect.promise(() => server.stop())
  )
