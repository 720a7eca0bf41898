/**
 * The logo rules (issue 15), checked by content with sharp, and the normalised copy the engine
 * stores under a content-addressed name.
 *
 * The order of the work matters for safety:
 * 1. The first bytes are sniffed (magic numbers), never the file name or a `Content-Type`: only
 *    JPEG, PNG, WebP and AVIF go on to sharp, so no other decoder (SVG, GIF, TIFF, PDF...) ever
 *    sees merchant bytes.
 * 2. `metadata()` reads the header only (no pixels are decoded, even for a 30000×30000 PNG of a
 *    few hundred bytes): format, frames and the size after EXIF orientation are checked there.
 * 3. Only then are pixels decoded, with sharp's `limitInputPixels` at `maxSide²`, so a decompression
 *    bomb that somehow got past step 2 is still refused by sharp before decoding.
 *
 * `checkLogo` never throws for bad input: every bad image is a refusal with a code and a one-line
 * message saying what was wrong and what is allowed.
 */
import { createHash } from "node:crypto"
import type { Metadata } from "sharp"

type Sharp = typeof import("sharp")["default"]
let sharpModule: Promise<Sharp> | undefined
/**
 * sharp (libvips) is loaded on the first logo, not with the module: a server or
 * CLI that sees no logo does not pay its 40 to 60 ms of loading at start.
 */
const loadSharp = (): Promise<Sharp> => (sharpModule ??= import("sharp").then((m) => m.default))

export type LogoRefusalCode =
  | "icon_unsupported_format"
  | "icon_too_small"
  | "icon_too_big"
  | "icon_not_square"
  | "icon_transparency_not_allowed"

export interface LogoLimits {
  /** The smallest allowed width and height, after EXIF orientation (500). */
  readonly minSide: number
  /** The largest allowed width and height, after EXIF orientation (4096). */
  readonly maxSide: number
  /**
   * How far from square a logo may be: `|w − h| / max(w, h) ≤ squareTolerance` (0.05, so
   * 1000×950 is allowed and 1000×949 is refused).
   */
  readonly squareTolerance: number
  /** The stored master's largest side (1024): bigger logos are scaled down, smaller ones kept. */
  readonly masterMaxSide: number
}

export const LOGO_LIMITS: LogoLimits = {
  minSide: 500,
  maxSide: 4096,
  squareTolerance: 0.05,
  masterMaxSide: 1024
}

/**
 * The smaller sizes produced beside the master. Only sizes strictly smaller than the master are
 * produced (a 500 px logo has a 500 px master and 64, 128 and 256); a request for a size that was
 * not produced is answered with the master (see `logoBytesForSize`).
 */
export const LOGO_SIZES: ReadonlyArray<number> = [64, 128, 256, 512]

export interface NormalisedLogo {
  /** `<lowercase hex SHA-256 of master>.webp`: the same image always gives the same name. */
  readonly name: string
  readonly contentType: string
  /** The master's side in px (min(width, height) of the source, at most `masterMaxSide`). */
  readonly side: number
  readonly master: Uint8Array
  /** The smaller sizes (of `LOGO_SIZES`, each strictly smaller than the master), by side in px. */
  readonly sizes: ReadonlyMap<number, Uint8Array>
  readonly source: {
    readonly format: "jpeg" | "png" | "webp" | "avif"
    /** The source's size after EXIF orientation. */
    readonly width: number
    readonly height: number
  }
}

export type LogoCheck =
  | { readonly ok: true; readonly logo: NormalisedLogo }
  | { readonly ok: false; readonly code: LogoRefusalCode; readonly message: string }

/**
 * The stored format: WebP, lossy at quality 90 with lossless alpha (`alphaQuality: 100`) and
 * sharp-YUV ("smart") chroma subsampling, which keeps the hard coloured edges of logos crisp.
 * WebP because every browser buyers use shows it, it carries an alpha channel (which JPEG cannot)
 * and it is far smaller than PNG; AVIF is smaller still but much slower to encode and its alpha is
 * what the rules refuse on input. Lossy at 90 rather than lossless because photographic logos
 * would otherwise be stored at several hundred KB for no visible gain. Alpha is kept only when
 * the source is a PNG or WebP whose alpha channel is actually used; otherwise it is dropped.
 */
const WEBP_OPTIONS = { quality: 90, alphaQuality: 100, smartSubsample: true, effort: 4 } as const
const STORED_CONTENT_TYPE = "image/webp"
const STORED_EXTENSION = ".webp"

type SourceFormat = NormalisedLogo["source"]["format"]

const ALLOWED = "allowed: a still JPEG, PNG, WebP or AVIF image"

const refuse = (code: LogoRefusalCode, message: string): LogoCheck => ({ ok: false, code, message })

const unsupported = (what: string): LogoCheck =>
  refuse("icon_unsupported_format", `the logo ${what}; ${ALLOWED}`)

const latin1 = (bytes: Uint8Array, start: number, end: number): string =>
  String.fromCharCode(...bytes.subarray(start, end))

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>): boolean =>
  bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b)

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const

type Sniffed =
  | { readonly kind: "allowed"; readonly format: SourceFormat; readonly animated: boolean }
  | { readonly kind: "other"; readonly name: string }

const readU32 = (bytes: Uint8Array, at: number): number =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0

/** An APNG has an `acTL` chunk before its first `IDAT` (sharp reads only its first frame). */
const pngIsAnimated = (bytes: Uint8Array): boolean => {
  let at = PNG_SIGNATURE.length
  while (at + 8 <= bytes.length) {
    const length = readU32(bytes, at)
    const type = latin1(bytes, at + 4, at + 8)
    if (type === "acTL") return true
    if (type === "IDAT" || type === "IEND") return false
    at += 12 + length
  }
  return false
}

/** An extended WebP (`VP8X`) says in its flags whether it is animated (bit 1). */
const webpIsAnimated = (bytes: Uint8Array): boolean =>
  bytes.length >= 21 && latin1(bytes, 12, 16) === "VP8X" && (bytes[20]! & 0x02) !== 0

/** ISO-BMFF `ftyp` brands: AVIF stills are `avif`, AVIF image sequences (animations) `avis`. */
const ftypBrands = (bytes: Uint8Array): { major: string; all: ReadonlyArray<string> } | null => {
  if (bytes.length < 16 || latin1(bytes, 4, 8) !== "ftyp") return null
  const size = Math.min(readU32(bytes, 0), bytes.length)
  const major = latin1(bytes, 8, 12)
  const all = [major]
  for (let at = 16; at + 4 <= size; at += 4) all.push(latin1(bytes, at, at + 4))
  return { major, all }
}

const sniff = (bytes: Uint8Array): Sniffed => {
  if (startsWith(bytes, [0xff, 0xd8, 0xff]))
    return { kind: "allowed", format: "jpeg", animated: false }
  if (startsWith(bytes, PNG_SIGNATURE))
    return { kind: "allowed", format: "png", animated: pngIsAnimated(bytes) }
  if (bytes.length >= 12 && latin1(bytes, 0, 4) === "RIFF" && latin1(bytes, 8, 12) === "WEBP")
    return { kind: "allowed", format: "webp", animated: webpIsAnimated(bytes) }
  const brands = ftypBrands(bytes)
  if (brands !== null) {
    if (brands.major === "avis") return { kind: "allowed", format: "avif", animated: true }
    if (brands.all.includes("avif")) return { kind: "allowed", format: "avif", animated: false }
    return { kind: "other", name: `an ISO media file of brand "${brands.major.trim()}", not AVIF` }
  }
  const head = latin1(bytes, 0, Math.min(bytes.length, 512))
  if (head.startsWith("GIF87a") || head.startsWith("GIF89a"))
    return { kind: "other", name: "a GIF file" }
  if (head.startsWith("BM")) return { kind: "other", name: "a BMP file" }
  if (head.startsWith("II*\u0000") || head.startsWith("MM\u0000*"))
    return { kind: "other", name: "a TIFF file" }
  if (head.startsWith("%PDF")) return { kind: "other", name: "a PDF file" }
  if (/<svg[\s>]/i.test(head)) return { kind: "other", name: "an SVG file" }
  return { kind: "other", name: "not a recognised image" }
}

const FORMAT_NAMES: Record<SourceFormat, string> = {
  jpeg: "JPEG",
  png: "PNG",
  webp: "WebP",
  avif: "AVIF"
}
/** "a JPEG", "an AVIF"... */
const A_FORMAT: Record<SourceFormat, string> = {
  jpeg: "a JPEG",
  png: "a PNG",
  webp: "a WebP",
  avif: "an AVIF"
}

/** sharp's name for what it found, which must agree with the sniffed format. */
const sharpFormatAgrees = (format: SourceFormat, found: string, compression?: string): boolean =>
  format === "avif"
    ? found === "heif" && (compression === undefined || compression === "av1")
    : found === format

/** |w − h| / max(w, h) ≤ tolerance, with room for floating point at exactly the tolerance. */
export const isSquareEnough = (width: number, height: number, tolerance: number): boolean =>
  Math.abs(width - height) / Math.max(width, height) <= tolerance + 1e-12

/** The bytes to serve for a requested size: that size when produced, else the master. */
export const logoBytesForSize = (logo: NormalisedLogo, size: number): Uint8Array =>
  logo.sizes.get(size) ?? logo.master

const percent = (x: number): string => `${(Math.round(x * 1000) / 10).toString()} %`

export const checkLogo = async (
  bytes: Uint8Array,
  limits: LogoLimits = LOGO_LIMITS
): Promise<LogoCheck> => {
  // Outside the try: a sharp that cannot load is the host's failure, not the image's.
  const sharp = await loadSharp()
  try {
    return await check(sharp, bytes, limits)
  } catch {
    // sharp refused to read or decode what passed the header checks (corrupt or truncated data).
    return unsupported("could not be decoded (its data is corrupt or truncated)")
  }
}

const check = async (sharp: Sharp, bytes: Uint8Array, limits: LogoLimits): Promise<LogoCheck> => {
  if (bytes.length === 0) return unsupported("is empty")
  const sniffed = sniff(bytes)
  if (sniffed.kind === "other") return unsupported(`is ${sniffed.name}`)
  const { format } = sniffed
  const formatName = FORMAT_NAMES[format]
  if (sniffed.animated) return unsupported(`is an animated ${formatName}`)

  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // Header only: no limit here so the declared size can be reported; nothing is decoded.
  let meta: Metadata
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata()
  } catch {
    return unsupported(`says it is ${A_FORMAT[format]} but its header is corrupt`)
  }
  if (!sharpFormatAgrees(format, meta.format, meta.compression))
    return unsupported(`says it is ${A_FORMAT[format]} but reads as ${meta.format}`)
  if ((meta.pages ?? 1) > 1) return unsupported(`is an animated or multi-image ${formatName}`)

  const width = meta.autoOrient?.width ?? meta.width
  const height = meta.autoOrient?.height ?? meta.height
  if (!(width > 0 && height > 0)) return unsupported(`has no readable size`)
  const size = `${width}×${height} px${meta.orientation !== undefined && meta.orientation >= 5 ? " after EXIF orientation" : ""}`
  if (width > limits.maxSide || height > limits.maxSide)
    return refuse(
      "icon_too_big",
      `the logo is ${size}; allowed: at most ${limits.maxSide}×${limits.maxSide} px`
    )
  if (width < limits.minSide || height < limits.minSide)
    return refuse(
      "icon_too_small",
      `the logo is ${size}; allowed: at least ${limits.minSide}×${limits.minSide} px`
    )
  if (!isSquareEnough(width, height, limits.squareTolerance))
    return refuse(
      "icon_not_square",
      `the logo is ${size}, ${percent(Math.abs(width - height) / Math.max(width, height))} from square; allowed: width and height within ${percent(limits.squareTolerance)} of each other (|w − h| / max(w, h) ≤ ${limits.squareTolerance})`
    )

  // From here on pixels are decoded: the pixel limit refuses anything bigger than maxSide², and
  // `failOn: "error"` refuses corrupt or truncated pixel data rather than storing a grey half.
  const decode = () =>
    sharp(input, {
      limitInputPixels: limits.maxSide * limits.maxSide,
      failOn: "error",
      autoOrient: true
    })

  // Transparency: an alpha channel that is actually used. An AVIF (or JPEG, which has no alpha)
  // with an alpha channel that is fully opaque has no transparency and is allowed; its alpha is
  // dropped from the stored copy.
  const transparent = meta.hasAlpha ? !(await decode().stats()).isOpaque : false
  if (transparent && format !== "png" && format !== "webp")
    return refuse(
      "icon_transparency_not_allowed",
      `the logo is ${A_FORMAT[format]} with transparent pixels; allowed: transparency only in PNG or WebP (${A_FORMAT[format]} logo must be fully opaque)`
    )

  // Center-crop to a square (after EXIF orientation, which `autoOrient` applies first), scale down
  // to the master's side, and decode once to raw sRGB pixels from which every size is encoded.
  const cropSide = Math.min(width, height)
  const side = Math.min(cropSide, limits.masterMaxSide)
  let pipeline = decode()
    .extract({
      left: Math.floor((width - cropSide) / 2),
      top: Math.floor((height - cropSide) / 2),
      width: cropSide,
      height: cropSide
    })
    .resize(side, side, { fit: "fill" })
    .toColourspace("srgb")
  pipeline = transparent ? pipeline.ensureAlpha() : pipeline.removeAlpha()
  const { data, info } = await pipeline
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true })
  const raw = { width: info.width, height: info.height, channels: info.channels }
  // No keepMetadata/withMetadata: sharp strips EXIF, ICC, XMP and IPTC from what it writes.
  const encode = (px: number) =>
    sharp(data, { raw })
      .resize(px, px, { fit: "fill" })
      .webp(WEBP_OPTIONS)
      .toBuffer()
      .then((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength))

  const master = await encode(side)
  const sizes = new Map<number, Uint8Array>()
  for (const px of LOGO_SIZES) if (px < side) sizes.set(px, await encode(px))
  const name = `${createHash("sha256").update(master).digest("hex")}${STORED_EXTENSION}`
  return {
    ok: true,
    logo: {
      name,
      contentType: STORED_CONTENT_TYPE,
      side,
      master,
      sizes,
      source: { format, width, height }
    }
  }
}
