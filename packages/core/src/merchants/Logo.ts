/**
 * Merchant logos, frozen: the image behind a partner's `iconUrl` is fetched
 * once, checked against the logo rules (SPEC.md section 8) and kept by the
 * engine under a content-addressed name, so what buyers see never changes
 * behind the partner's back. Two ports: `LogoCapture` (fetch and check,
 * provided by an adapter package such as @pay/logos: the core imports no
 * network or image library) and `LogoStore` (the bytes, in the engine's
 * database).
 */
import { Context, Data, type Effect, type Option } from "effect"

/** Why a logo was refused: the `code` of the `iconUrl` issue of a 400 answer. */
export const LOGO_REFUSAL_CODES = [
  "invalid_icon_url",
  "icon_unreachable",
  "icon_address_not_allowed",
  "icon_too_large",
  "icon_unsupported_format",
  "icon_too_small",
  "icon_too_big",
  "icon_not_square",
  "icon_transparency_not_allowed"
] as const
export type LogoRefusalCode = (typeof LOGO_REFUSAL_CODES)[number]

export class LogoRefused extends Data.TaggedError("LogoRefused")<{
  readonly code: LogoRefusalCode
  /** One line: what was wrong, and what is allowed. */
  readonly message: string
}> {
  /** Only an unreachable image may pass on a retry: it is not kept under an Idempotency-Key. */
  get retryable(): boolean {
    return this.code === "icon_unreachable"
  }
}

/** The sizes a logo is served in besides its master (`?size=`), smallest first. */
export const LOGO_SIZES = [64, 128, 256, 512] as const

/** A normalised logo: square, re-encoded, without metadata. */
export interface FrozenLogo {
  /** Content-addressed: the same image always has the same name. */
  readonly name: string
  readonly contentType: string
  /** The master's side in pixels (at most 1024). */
  readonly side: number
  readonly master: Uint8Array
  /** The sizes of LOGO_SIZES below the master's side. */
  readonly sizes: ReadonlyMap<number, Uint8Array>
}

export class LogoCapture extends Context.Tag("@pay/core/LogoCapture")<
  LogoCapture,
  {
    /** Fetches the URL (public internet only), checks the image, normalises it. */
    readonly capture: (url: string) => Effect.Effect<FrozenLogo, LogoRefused>
  }
>() {}

export interface StoredLogoImage {
  readonly contentType: string
  readonly bytes: Uint8Array
}

export class LogoStore extends Context.Tag("@pay/core/LogoStore")<
  LogoStore,
  {
    /** Keeps the logo's master and sizes; a name already kept is left as it is. */
    readonly put: (logo: FrozenLogo) => Effect.Effect<void>
    /**
     * The image of that name at that size: the master when `size` is undefined or
     * not below the master's side; none when no such logo was kept.
     */
    readonly get: (name: string, size?: number) => Effect.Effect<Option.Option<StoredLogoImage>>
  }
>() {}

/** The logo's name as served under `{publicUrl}/logos/`: hex, a dot, an extension. */
export const isLogoName = (name: string): boolean => /^[0-9a-f]{64}\.[a-z0-9]{2,5}$/.test(name)

/** Names LOGO_SIZES allows in `?size=`. */
export const isLogoSize = (size: number): boolean =>
  (LOGO_SIZES as ReadonlyArray<number>).includes(size)
