import { createHash } from "node:crypto"
import { deflateSync } from "node:zlib"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import {
  checkLogo,
  isSquareEnough,
  LOGO_LIMITS,
  LOGO_SIZES,
  type LogoCheck,
  type LogoRefusalCode,
  logoBytesForSize,
  type NormalisedLogo
} from "./LogoImage.js"

// Every image here is made by sharp, or (for what sharp cannot write: an APNG, a PNG declaring a
// huge size) assembled chunk by chunk below. No binary fixtures.

type Rgba = { r: number; g: number; b: number; alpha?: number }
const RED: Rgba = { r: 220, g: 20, b: 20 }
const BLUE: Rgba = { r: 20, g: 40, b: 200 }

const solid = (width: number, height: number, colour: Rgba = BLUE) =>
  sharp({
    create: {
      width,
      height,
      channels: colour.alpha === undefined ? 3 : 4,
      background: { alpha: 1, ...colour }
    }
  })

/** Gaussian noise: compresses badly, so half of the file is half of the pixels. */
const noisy = (side: number) =>
  sharp({
    create: {
      width: side,
      height: side,
      channels: 3,
      background: BLUE,
      noise: { type: "gaussian", mean: 128, sigma: 40 }
    }
  })

type Format = "jpeg" | "png" | "webp" | "avif"
const FORMATS: ReadonlyArray<Format> = ["jpeg", "png", "webp", "avif"]

const encoded = (format: Format, width: number, height: number, colour: Rgba = BLUE) =>
  solid(width, height, colour).toFormat(format).toBuffer()

/** A `width`×`height` image of `colour` with a band of `band` on its left `bandWidth` columns. */
const withLeftBand = async (width: number, height: number, bandWidth: number) =>
  solid(width, height)
    .composite([{ input: await solid(bandWidth, height, RED).png().toBuffer(), left: 0, top: 0 }])
    .png()
    .toBuffer()

const accepted = (check: LogoCheck): NormalisedLogo => {
  if (!check.ok)
    throw new Error(`expected the logo to be accepted: ${check.code}: ${check.message}`)
  return check.logo
}

const expectRefused = (check: LogoCheck, code: LogoRefusalCode) => {
  expect(check.ok).toBe(false)
  if (check.ok) return
  expect(check.code).toBe(code)
  // One line, saying what was wrong and what is allowed.
  expect(check.message).not.toContain("\n")
  expect(check.message).toMatch(/^the logo .+; allowed: .+/)
}

const pixel = async (image: Uint8Array, x: number, y: number) => {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true })
  const at = (y * info.width + x) * info.channels
  return {
    r: data[at]!,
    g: data[at + 1]!,
    b: data[at + 2]!,
    a: info.channels === 4 ? data[at + 3]! : 255
  }
}

const near = (actual: { r: number; g: number; b: number }, expected: Rgba, within = 12) => {
  expect(Math.abs(actual.r - expected.r)).toBeLessThanOrEqual(within)
  expect(Math.abs(actual.g - expected.g)).toBeLessThanOrEqual(within)
  expect(Math.abs(actual.b - expected.b)).toBeLessThanOrEqual(within)
}

// PNG assembled by hand: chunks with their CRC.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const u32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
const chunk = (type: string, data: Uint8Array) => {
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data])
  return Buffer.concat([u32(data.length), typed, u32(crc32(typed))])
}
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const ihdr = (width: number, height: number, bitDepth: number, colourType: number) => {
  const d = Buffer.alloc(13)
  d.writeUInt32BE(width, 0)
  d.writeUInt32BE(height, 4)
  d[8] = bitDepth
  d[9] = colourType
  return chunk("IHDR", d)
}
const IEND = chunk("IEND", Buffer.alloc(0))

/** A PNG that declares `side`×`side` (1-bit grey) but carries only a few hundred bytes. */
const pngBomb = (side: number) => {
  const rowBytes = 1 + Math.ceil(side / 8)
  return Buffer.concat([
    PNG_SIGNATURE,
    ihdr(side, side, 1, 0),
    chunk("IDAT", deflateSync(Buffer.alloc(rowBytes * 64))),
    IEND
  ])
}

/** A two-frame APNG (acTL, fcTL, IDAT, fcTL, fdAT): sharp cannot write one. */
const apng = (side: number) => {
  const row = Buffer.alloc(1 + side * 3, 0x80)
  row[0] = 0
  const idat = deflateSync(Buffer.concat(Array.from({ length: side }, () => row)))
  const fctl = (sequence: number) => {
    const d = Buffer.alloc(26)
    d.writeUInt32BE(sequence, 0)
    d.writeUInt32BE(side, 4)
    d.writeUInt32BE(side, 8)
    d.writeUInt16BE(1, 20)
    d.writeUInt16BE(10, 22)
    return chunk("fcTL", d)
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    ihdr(side, side, 8, 2),
    chunk("acTL", Buffer.concat([u32(2), u32(0)])),
    fctl(0),
    chunk("IDAT", idat),
    fctl(1),
    chunk("fdAT", Buffer.concat([u32(2), idat])),
    IEND
  ])
}

const animated = async (format: "gif" | "webp", side: number) => {
  const frames = [
    await solid(side, side, RED).png().toBuffer(),
    await solid(side, side).png().toBuffer()
  ]
  return sharp(frames, { join: { animated: true } })
    .toFormat(format)
    .toBuffer()
}

describe("checkLogo: formats, by content", () => {
  for (const format of FORMATS)
    for (const side of [500, 1024])
      it(`accepts a ${side}×${side} ${format}`, async () => {
        const logo = accepted(await checkLogo(await encoded(format, side, side)))
        expect(logo.source).toEqual({ format, width: side, height: side })
        expect(logo.side).toBe(side)
        expect(logo.contentType).toBe("image/webp")
        expect([...logo.sizes.keys()]).toEqual(side === 500 ? [64, 128, 256] : [64, 128, 256, 512])
      })

  it("refuses an animated GIF, a still GIF, an animated WebP and an animated PNG (APNG)", async () => {
    expectRefused(await checkLogo(await animated("gif", 500)), "icon_unsupported_format")
    expectRefused(
      await checkLogo(await solid(500, 500).gif().toBuffer()),
      "icon_unsupported_format"
    )
    expectRefused(await checkLogo(await animated("webp", 500)), "icon_unsupported_format")
    const png = apng(500)
    // sharp itself reads the APNG as a still PNG (its first frame): the check must not rely on it.
    expect((await sharp(png).metadata()).format).toBe("png")
    expectRefused(await checkLogo(png), "icon_unsupported_format")
  })

  it("names what it found in the message", async () => {
    const gif = await checkLogo(await animated("gif", 500))
    expect(!gif.ok && gif.message).toContain("GIF")
    const webp = await checkLogo(await animated("webp", 500))
    expect(!webp.ok && webp.message).toContain("animated WebP")
    const png = await checkLogo(apng(500))
    expect(!png.ok && png.message).toContain("animated PNG")
  })

  it("refuses an AVIF image sequence (brand avis)", async () => {
    const avif = Buffer.from(await encoded("avif", 500, 500))
    expect(avif.subarray(8, 12).toString("latin1")).toBe("avif")
    avif.write("avis", 8, "latin1")
    expectRefused(await checkLogo(avif), "icon_unsupported_format")
  })

  it("refuses SVG, text that says it is a PNG, empty bytes and unknown bytes", async () => {
    const svg = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="600" height="600"><rect width="600" height="600" fill="red"/></svg>`
    // sharp would happily render it: the check refuses it before sharp sees it.
    expect((await sharp(Buffer.from(svg)).metadata()).format).toBe("svg")
    expectRefused(await checkLogo(new TextEncoder().encode(svg)), "icon_unsupported_format")
    expectRefused(
      await checkLogo(new TextEncoder().encode("logo.png: image/png, honestly")),
      "icon_unsupported_format"
    )
    // An ISO media file that is not AVIF (a HEIC header): refused by its brand.
    const heic = Buffer.concat([u32(24), Buffer.from("ftypheic\0\0\0\0mif1heic", "latin1"), u32(0)])
    const heicCheck = await checkLogo(heic)
    expectRefused(heicCheck, "icon_unsupported_format")
    expect(!heicCheck.ok && heicCheck.message).toContain('brand "heic"')
    expectRefused(await checkLogo(new Uint8Array(0)), "icon_unsupported_format")
    expectRefused(await checkLogo(new Uint8Array([1, 2, 3])), "icon_unsupported_format")
    expectRefused(
      await checkLogo(await solid(500, 500).tiff().toBuffer()),
      "icon_unsupported_format"
    )
  })

  it("refuses corrupt images: a PNG signature then garbage, a truncated JPEG, a truncated PNG", async () => {
    const garbage = Buffer.concat([PNG_SIGNATURE, Buffer.from("garbage ".repeat(50))])
    expectRefused(await checkLogo(garbage), "icon_unsupported_format")
    const jpeg = await noisy(600).jpeg().toBuffer()
    expectRefused(await checkLogo(jpeg.subarray(0, jpeg.length >> 1)), "icon_unsupported_format")
    const png = await noisy(600).png().toBuffer()
    expectRefused(await checkLogo(png.subarray(0, png.length >> 1)), "icon_unsupported_format")
  })

  it("never throws: every prefix of a valid image is a refusal or an acceptance", async () => {
    const png = await encoded("png", 500, 500)
    for (const length of [1, 7, 8, 16, 33, 40, 60, 100, png.length - 12, png.length - 1]) {
      const check = await checkLogo(png.subarray(0, length))
      if (!check.ok) expect(check.code).toBe("icon_unsupported_format")
    }
  })

  it("accepts grey, grey with alpha, 16-bit and palette PNGs and a CMYK JPEG, stored as 8-bit sRGB", async () => {
    const base = () => solid(600, 600, { ...RED, alpha: 0.5 })
    const cases = [
      { image: base().removeAlpha().toColourspace("b-w").png(), channels: 1, alpha: false },
      { image: base().toColourspace("b-w").png(), channels: 2, alpha: true },
      { image: base().removeAlpha().toColourspace("rgb16").png(), channels: 3, alpha: false },
      { image: base().png({ palette: true }), channels: 4, alpha: true },
      { image: base().removeAlpha().toColourspace("cmyk").jpeg(), channels: 4, alpha: false }
    ]
    for (const { image, channels, alpha } of cases) {
      const bytes = await image.toBuffer()
      expect((await sharp(bytes).metadata()).channels).toBe(channels)
      const logo = accepted(await checkLogo(bytes))
      const master = await sharp(logo.master).metadata()
      expect(master).toMatchObject({
        format: "webp",
        space: "srgb",
        depth: "uchar",
        hasAlpha: alpha
      })
    }
  })

  it("accepts a Uint8Array that is a view into a larger buffer", async () => {
    const png = await encoded("png", 500, 500)
    const larger = new Uint8Array(png.length + 20)
    larger.set(png, 10)
    accepted(await checkLogo(larger.subarray(10, 10 + png.length)))
  })
})

describe("checkLogo: sizes", () => {
  it("refuses 499×499 and 499×500 as too small", async () => {
    const check = await checkLogo(await encoded("png", 499, 499))
    expectRefused(check, "icon_too_small")
    expect(!check.ok && check.message).toContain("499×499")
    expectRefused(await checkLogo(await encoded("png", 500, 499)), "icon_too_small")
  })

  it("accepts 4096×4096 and refuses 4097×4097 and 4097×4096 as too big", async () => {
    const big = accepted(await checkLogo(await encoded("png", 4096, 4096)))
    expect(big.side).toBe(1024)
    expect(big.source).toEqual({ format: "png", width: 4096, height: 4096 })
    const check = await checkLogo(await encoded("png", 4097, 4097))
    expectRefused(check, "icon_too_big")
    expect(!check.ok && check.message).toContain("at most 4096×4096")
    expectRefused(await checkLogo(await encoded("jpeg", 4097, 4096)), "icon_too_big")
  })

  it("refuses a decompression bomb (30000×30000 declared, a few hundred bytes) without decoding it", async () => {
    const bomb = pngBomb(30_000)
    expect(bomb.length).toBeLessThan(2_000)
    const rssBefore = process.memoryUsage().rss
    const started = performance.now()
    const check = await checkLogo(bomb)
    const elapsed = performance.now() - started
    expectRefused(check, "icon_too_big")
    expect(!check.ok && check.message).toContain("30000×30000")
    // Decoding 900 million pixels would take seconds and gigabytes; reading a header, neither.
    expect(elapsed).toBeLessThan(5_000)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024)
  })

  it("checks the size after EXIF orientation: 600×500 with orientation 6 is 500×600, not square", async () => {
    const jpeg = await solid(600, 500).jpeg().withMetadata({ orientation: 6 }).toBuffer()
    expect(await sharp(jpeg).metadata()).toMatchObject({ width: 600, height: 500, orientation: 6 })
    const check = await checkLogo(jpeg)
    expectRefused(check, "icon_not_square")
    expect(!check.ok && check.message).toContain("500×600 px after EXIF orientation")
  })

  it("auto-orients before cropping: a square JPEG with orientation 6 is rotated a quarter turn", async () => {
    // A red band on the stored image's left edge is, once turned 90° clockwise, along the top.
    const jpeg = await sharp(await withLeftBand(600, 600, 100))
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer()
    const logo = accepted(await checkLogo(jpeg))
    expect(logo.side).toBe(600)
    near(await pixel(logo.master, 300, 10), RED, 30)
    near(await pixel(logo.master, 10, 300), BLUE, 30)
    near(await pixel(logo.master, 300, 590), BLUE, 30)
  })
})

describe("checkLogo: square within 5 % (|w − h| / max(w, h) ≤ 0.05)", () => {
  it("allows exactly 5 % off (1000×950 and 950×1000) and refuses just over (1000×949)", async () => {
    expect(accepted(await checkLogo(await encoded("png", 1000, 950))).side).toBe(950)
    expect(accepted(await checkLogo(await encoded("webp", 950, 1000))).side).toBe(950)
    const check = await checkLogo(await encoded("png", 1000, 949))
    expectRefused(check, "icon_not_square")
    expect(!check.ok && check.message).toContain("within 5 %")
  })

  it("isSquareEnough is exact at the bound", () => {
    expect(isSquareEnough(1000, 950, 0.05)).toBe(true)
    expect(isSquareEnough(20, 19, 0.05)).toBe(true)
    expect(isSquareEnough(1000, 949, 0.05)).toBe(false)
    expect(isSquareEnough(4096, 3891, 0.05)).toBe(false)
    expect(isSquareEnough(4000, 3800, 0.05)).toBe(true)
  })
})

describe("checkLogo: transparency only in PNG and WebP", () => {
  for (const format of ["png", "webp"] as const)
    it(`accepts a ${format} with transparency, and the master keeps it`, async () => {
      const logo = accepted(
        await checkLogo(await encoded(format, 600, 600, { ...RED, alpha: 0.5 }))
      )
      expect((await sharp(logo.master).metadata()).hasAlpha).toBe(true)
      expect((await sharp(logo.master).stats()).isOpaque).toBe(false)
      const a = (await pixel(logo.master, 300, 300)).a
      expect(Math.abs(a - 128)).toBeLessThanOrEqual(2)
      for (const size of logo.sizes.values())
        expect((await sharp(size).metadata()).hasAlpha).toBe(true)
    })

  it("refuses an AVIF with transparency", async () => {
    const check = await checkLogo(await encoded("avif", 600, 600, { ...RED, alpha: 0.5 }))
    expectRefused(check, "icon_transparency_not_allowed")
    expect(!check.ok && check.message).toContain("only in PNG or WebP")
  })

  it("accepts an AVIF whose alpha channel is fully opaque, and drops the alpha", async () => {
    const avif = await encoded("avif", 600, 600, { ...RED, alpha: 1 })
    expect((await sharp(avif).metadata()).hasAlpha).toBe(true)
    const logo = accepted(await checkLogo(avif))
    expect((await sharp(logo.master).metadata()).hasAlpha).toBe(false)
  })

  it("accepts a JPEG (no alpha) and a PNG whose alpha is unused, storing no alpha", async () => {
    const jpeg = accepted(await checkLogo(await encoded("jpeg", 600, 600)))
    expect((await sharp(jpeg.master).metadata()).hasAlpha).toBe(false)
    const png = accepted(await checkLogo(await encoded("png", 600, 600, { ...BLUE, alpha: 1 })))
    expect((await sharp(png.master).metadata()).hasAlpha).toBe(false)
  })
})

describe("checkLogo: the normalised copy", () => {
  it("is a square WebP of at most 1024 px, with 64, 128, 256 and 512 beside it", async () => {
    const logo = accepted(await checkLogo(await encoded("jpeg", 2000, 2000)))
    expect(logo.side).toBe(1024)
    const master = await sharp(logo.master).metadata()
    expect(master).toMatchObject({ format: "webp", width: 1024, height: 1024 })
    expect(LOGO_SIZES).toEqual([64, 128, 256, 512])
    expect([...logo.sizes.keys()]).toEqual([64, 128, 256, 512])
    for (const [size, bytes] of logo.sizes)
      expect(await sharp(bytes).metadata()).toMatchObject({
        format: "webp",
        width: size,
        height: size
      })
  })

  it("strips metadata (EXIF, ICC, XMP)", async () => {
    const jpeg = await solid(800, 800)
      .jpeg()
      .withMetadata({ orientation: 1, exif: { IFD0: { Copyright: "Merchant Ltd" } } })
      .withIccProfile("p3")
      .toBuffer()
    const source = await sharp(jpeg).metadata()
    expect(source.exif).toBeDefined()
    expect(source.icc).toBeDefined()
    const logo = accepted(await checkLogo(jpeg))
    for (const bytes of [logo.master, ...logo.sizes.values()]) {
      const meta = await sharp(bytes).metadata()
      expect(meta.exif).toBeUndefined()
      expect(meta.icc).toBeUndefined()
      expect(meta.xmp).toBeUndefined()
      expect(meta.orientation).toBeUndefined()
    }
    const text = Buffer.from(logo.master).toString("latin1")
    expect(text).not.toContain("Merchant Ltd")
  })

  it("is named by the SHA-256 of the master: the same image the same name, another another", async () => {
    const png = await encoded("png", 700, 700)
    const first = accepted(await checkLogo(png))
    expect(first.name).toBe(`${createHash("sha256").update(first.master).digest("hex")}.webp`)
    expect(first.name).toMatch(/^[0-9a-f]{64}\.webp$/)
    const again = accepted(await checkLogo(Uint8Array.from(png)))
    expect(again.name).toBe(first.name)
    expect(Buffer.from(again.master).equals(Buffer.from(first.master))).toBe(true)
    const other = accepted(await checkLogo(await encoded("png", 700, 700, RED)))
    expect(other.name).not.toBe(first.name)
  })

  it("is named by content, not by source: the same pixels as PNG and as lossless WebP give one name", async () => {
    const png = await encoded("png", 600, 600)
    const webp = await solid(600, 600).webp({ lossless: true }).toBuffer()
    expect(accepted(await checkLogo(png)).name).toBe(accepted(await checkLogo(webp)).name)
  })

  it("center-crops: a 1000×960 image loses a 15 px band on its left edge", async () => {
    const logo = accepted(await checkLogo(await withLeftBand(1000, 960, 15)))
    expect(logo.side).toBe(960)
    expect(logo.source).toEqual({ format: "png", width: 1000, height: 960 })
    near(await pixel(logo.master, 0, 480), BLUE)
    near(await pixel(logo.master, 959, 480), BLUE)
    // Without the crop the band would be there: the left 20 columns are what is cut.
    const uncropped = await withLeftBand(1000, 960, 25)
    near(await pixel(accepted(await checkLogo(uncropped)).master, 0, 480), RED, 30)
  })

  it("produces only sizes smaller than the master; a larger size is served the master", async () => {
    const small = accepted(await checkLogo(await encoded("png", 512, 512)))
    expect(small.side).toBe(512)
    expect([...small.sizes.keys()]).toEqual([64, 128, 256])
    expect(logoBytesForSize(small, 512)).toBe(small.master)
    expect(logoBytesForSize(small, 1024)).toBe(small.master)
    expect(logoBytesForSize(small, 128)).toBe(small.sizes.get(128))
    const odd = accepted(await checkLogo(await encoded("png", 520, 540)))
    expect(odd.side).toBe(520)
    expect([...odd.sizes.keys()]).toEqual([64, 128, 256, 512])
  })

  it("takes other limits", async () => {
    const limits = { ...LOGO_LIMITS, minSide: 100, masterMaxSide: 200 }
    const logo = accepted(await checkLogo(await encoded("png", 300, 300), limits))
    expect(logo.side).toBe(200)
    expect([...logo.sizes.keys()]).toEqual([64, 128])
    expectRefused(
      await checkLogo(await encoded("png", 300, 300), { ...limits, maxSide: 299 }),
      "icon_too_big"
    )
  })
})
