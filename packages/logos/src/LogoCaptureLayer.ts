/**
 * The engine's `LogoCapture` port on this package: the URL fetched by the safe
 * fetcher (public internet only), the bytes checked and normalised by
 * `checkLogo`, every refusal turned into the `iconUrl` issue code the API
 * answers with. A standalone server or an embedder provides it to the engine.
 */
import { type FrozenLogo, LogoCapture, type LogoRefusalCode, LogoRefused } from "@pay/core"
import { Effect, Layer } from "effect"
import { checkLogo, type LogoLimits } from "./LogoImage.js"
import {
  makeSafeFetch,
  resolvedLogFields,
  type SafeFetchOptions,
  type SafeFetchRefusal
} from "./SafeFetch.js"

export interface LogoCaptureOptions extends SafeFetchOptions {
  readonly limits?: LogoLimits
  /**
   * Images checked at once (default 2). Decoding a 4096×4096 image takes some
   * 50 to 70 MB of pixels; more fetches than this wait for a turn (within the
   * fetch's own limits), so a burst of logos cannot multiply that.
   */
  readonly maxConcurrentChecks?: number
}

const refusalCodes: Record<SafeFetchRefusal["kind"], LogoRefusalCode> = {
  invalid_url: "invalid_icon_url",
  address_not_allowed: "icon_address_not_allowed",
  unreachable: "icon_unreachable",
  too_large: "icon_too_large"
}

export const makeLogoCapture = (
  options: LogoCaptureOptions = {},
  /** The image checks: `checkLogo`, or a test's wrapper of it. */
  check: typeof checkLogo = checkLogo
) => {
  const fetchImage = makeSafeFetch(options)
  const checking = Effect.unsafeMakeSemaphore(options.maxConcurrentChecks ?? 2)
  return LogoCapture.of({
    capture: (url) =>
      Effect.gen(function* () {
        // Interrupting the capture (a client gone, a shutdown) aborts the fetch.
        const fetched = yield* Effect.promise((signal) => fetchImage(url, { signal }))
        if (!fetched.ok) {
          // The partner's message names no address a host resolved to; the operator's log does.
          if (fetched.kind === "address_not_allowed" && fetched.resolved !== undefined)
            yield* Effect.logWarning("logo URL refused", {
              reason: fetched.message,
              ...resolvedLogFields(fetched.resolved)
            })
          return yield* new LogoRefused({
            code: refusalCodes[fetched.kind],
            message: fetched.message
          })
        }
        const checked = yield* checking.withPermits(1)(
          Effect.promise(() => check(fetched.body, options.limits))
        )
        if (!checked.ok) {
          return yield* new LogoRefused({ code: checked.code, message: checked.message })
        }
        const { name, contentType, side, master, sizes } = checked.logo
        return { name, contentType, side, master, sizes } satisfies FrozenLogo
      })
  })
}

/** `LogoCapture` for an engine: `PAY_FETCH_ALLOW_PRIVATE=1` maps to `allowPrivate`. */
export const logoCaptureLayer = (options: LogoCaptureOptions = {}) =>
  Layer.succeed(LogoCapture, makeLogoCapture(options))
