/**
 * The LogoCapture port end to end on loopback: a real HTTPS server (test CA)
 * serving generated images, fetched and checked; each kind of refusal as the
 * `iconUrl` code the API answers with.
 */
import { rmSync } from "node:fs"
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import type { LogoRefused } from "@pay/core"
import { Effect, Either, Logger } from "effect"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeLogoCapture } from "./LogoCaptureLayer.js"
import { checkLogo } from "./LogoImage.js"
import { makeTestCertificates, type TestCertificates } from "./TestCertificates.testing.js"

let certificates: TestCertificates
let server: Server
let port: number
const images = new Map<string, Uint8Array>()

const square = (side: number) =>
  sharp({ create: { width: side, height: side, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer()

beforeAll(async () => {
  certificates = makeTestCertificates()
  images.set("/ok.png", await square(600))
  images.set("/small.png", await square(400))
  server = createServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
    const image = images.get(request.url ?? "")
    if (image === undefined) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { "content-type": "image/png" }).end(image)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  if (certificates) rmSync(certificates.dir, { recursive: true, force: true })
})

/** `logo.test` resolves to the loopback server, which only allowPrivate may reach. */
const capture = (url: string, allowPrivate = true) =>
  Effect.runPromise(
    Effect.either(
      makeLogoCapture({
        allowPrivate,
        ca: certificates.ca,
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
        timeoutMs: 5_000
      }).capture(url)
    )
  )

const refusal = (result: Either.Either<unknown, LogoRefused>) =>
  Either.match(result, {
    onLeft: (e) => ({ code: e.code, retryable: e.retryable }),
    onRight: () => "captured"
  })

describe("makeLogoCapture", () => {
  it("fetches, checks and freezes a logo: a content-addressed WebP and its sizes", async () => {
    const result = await capture(`https://logo.test:${port}/ok.png`)
    const logo = Either.getOrThrow(result)
    expect(logo.name).toMatch(/^[0-9a-f]{64}\.webp$/)
    expect(logo.contentType).toBe("image/webp")
    expect(logo.side).toBe(600)
    expect([...logo.sizes.keys()]).toEqual([64, 128, 256, 512])
    expect((await sharp(logo.master).metadata()).format).toBe("webp")
    // The same image, the same name.
    expect(Either.getOrThrow(await capture(`https://logo.test:${port}/ok.png`)).name).toBe(
      logo.name
    )
  })

  it("answers each refusal with its iconUrl code; only an unreachable one may pass on a retry", async () => {
    expect(refusal(await capture(`http://logo.test:${port}/ok.png`))).toEqual({
      code: "invalid_icon_url",
      retryable: false
    })
    expect(refusal(await capture(`https://logo.test:${port}/ok.png`, false))).toEqual({
      code: "icon_address_not_allowed",
      retryable: false
    })
    expect(refusal(await capture(`https://logo.test:${port}/missing.png`))).toEqual({
      code: "icon_unreachable",
      retryable: true
    })
    expect(refusal(await capture(`https://logo.test:${port}/small.png`))).toEqual({
      code: "icon_too_small",
      retryable: false
    })
  })

  it("names no address a host resolved to to the partner; the operator's log line does", async () => {
    const lines: Array<unknown> = []
    const logger = Logger.make(({ message }) => lines.push(message))
    const result = await Effect.runPromise(
      Effect.either(
        makeLogoCapture({
          ca: certificates.ca,
          resolve: async () => [{ address: "10.20.30.40", family: 4 }]
        }).capture("https://intranet.test/logo.png")
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    )
    const message = Either.match(result, { onLeft: (e) => e.message, onRight: () => "captured" })
    expect(message).toContain("intranet.test is not allowed, it resolves to a private address")
    expect(message).not.toContain("10.20.30.40")
    expect(lines).toEqual([
      [
        "logo URL refused",
        expect.objectContaining({
          host: "intranet.test",
          resolvedTo: "10.20.30.40",
          refusedAddress: "10.20.30.40"
        })
      ]
    ])
  })

  it("checks at most maxConcurrentChecks images at once (default 2); the others wait their turn", async () => {
    const inFlight = { now: 0, most: 0 }
    const counted: typeof checkLogo = async (bytes, limits) => {
      inFlight.most = Math.max(inFlight.most, ++inFlight.now)
      try {
        return await checkLogo(bytes, limits)
      } finally {
        inFlight.now--
      }
    }
    const captureAll = (options: { maxConcurrentChecks?: number }) => {
      const logos = makeLogoCapture(
        {
          allowPrivate: true,
          ca: certificates.ca,
          resolve: async () => [{ address: "127.0.0.1", family: 4 }],
          ...options
        },
        counted
      )
      return Effect.runPromise(
        Effect.all(
          Array.from({ length: 6 }, () => logos.capture(`https://logo.test:${port}/ok.png`)),
          { concurrency: "unbounded" }
        )
      )
    }
    expect(await captureAll({})).toHaveLength(6)
    expect(inFlight.most).toBe(2)
    inFlight.most = 0
    expect(await captureAll({ maxConcurrentChecks: 1 })).toHaveLength(6)
    expect(inFlight.most).toBe(1)
  })
})
