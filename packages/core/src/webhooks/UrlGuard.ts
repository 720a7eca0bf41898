/**
 * Which webhook endpoint URLs may be registered. `@pay/logos` provides the
 * full check (`webhookUrlGuardLayer`: HTTPS, every address the host resolves
 * to public); without it, the engine checks the scheme only. DNS can change
 * after registration, so deliveries must check the address they connect to
 * again at every send (the fetcher's rules).
 */
import { Context, Data, Effect, Layer } from "effect"

export class WebhookUrlRefused extends Data.TaggedError("WebhookUrlRefused")<{
  /** What was wrong, and what is allowed. */
  readonly reason: string
}> {}

export class WebhookUrlGuard extends Context.Tag("@pay/core/WebhookUrlGuard")<
  WebhookUrlGuard,
  { readonly check: (url: string) => Effect.Effect<void, WebhookUrlRefused> }
>() {}

/** An absolute `https://` URL without credentials, or why not. */
export const httpsUrlProblem = (url: string): string | undefined => {
  if (!URL.canParse(url)) return "is not an absolute URL"
  const parsed = new URL(url)
  if (parsed.protocol !== "https:") return "must be an https:// URL"
  if (parsed.username !== "" || parsed.password !== "") return "must not carry credentials"
  if (parsed.hash !== "") return "must not have a #fragment"
  return undefined
}

/** The scheme-only check of an engine without `@pay/logos`. */
export const schemeOnlyUrlGuard = Layer.succeed(
  WebhookUrlGuard,
  WebhookUrlGuard.of({
    check: (url) => {
      const problem = httpsUrlProblem(url)
      return problem === undefined
        ? Effect.void
        : Effect.fail(new WebhookUrlRefused({ reason: problem }))
    }
  })
)
