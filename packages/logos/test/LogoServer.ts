/**
 * For tests and benchmarks: an HTTPS server on loopback (a throwaway test CA)
 * that serves images a test sets, counts each path's requests, and can be
 * changed behind an unchanged URL. Only a fetcher with `allowPrivate` (or
 * PAY_FETCH_ALLOW_PRIVATE=1) and the test CA (`ca`, or NODE_EXTRA_CA_CERTS=
 * `caFile`) reaches it.
 */
import { rmSync } from "node:fs"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import sharp from "sharp"
import { makeTestCertificates } from "../src/TestCertificates.testing.js"

export interface LogoServer {
  /** `https://127.0.0.1:<port>` */
  readonly origin: string
  readonly port: number
  /** The test CA, PEM, for the fetcher's `ca`. */
  readonly ca: string
  /** The test CA's file, for NODE_EXTRA_CA_CERTS. */
  readonly caFile: string
  /** Serves `body` at `path` (replacing what was there) with that content type. */
  readonly set: (path: string, body: Uint8Array, contentType?: string) => void
  /** How many requests reached `path`. */
  readonly requests: (path: string) => number
  readonly close: () => Promise<void>
}

export const startLogoServer = async (): Promise<LogoServer> => {
  const certificates = makeTestCertificates()
  const bodies = new Map<string, { body: Uint8Array; contentType: string }>()
  const counts = new Map<string, number>()
  const server = createServer(
    { key: certificates.key, cert: certificates.cert },
    (request, response) => {
      const path = request.url ?? ""
      counts.set(path, (counts.get(path) ?? 0) + 1)
      const found = bodies.get(path)
      if (found === undefined) {
        response.writeHead(404).end()
        return
      }
      response.writeHead(200, { "content-type": found.contentType }).end(found.body)
    }
  )
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    ca: certificates.ca,
    caFile: join(certificates.dir, "ca.crt"),
    set: (path, body, contentType = "application/octet-stream") =>
      bodies.set(path, { body, contentType }),
    requests: (path) => counts.get(path) ?? 0,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      rmSync(certificates.dir, { recursive: true, force: true })
    }
  }
}

/** A square image of one colour: small files, for the rules' edges. */
export const plainImage = (
  side: number,
  format: "png" | "jpeg" | "webp" | "avif" = "png",
  colour = "#3366cc",
  height = side
): Promise<Uint8Array> =>
  sharp({ create: { width: side, height, channels: 3, background: colour } })
    .toFormat(format)
    .toBuffer()

/**
 * A smooth gradient, the kind of picture a real logo file holds (it
 * compresses, unlike noise): a 1024 px PNG or a 4096 px JPEG stays under 2 MB.
 */
export const smoothImage = (side: number, format: "png" | "jpeg"): Promise<Uint8Array> => {
  const pixels = Buffer.alloc(side * side * 3)
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const at = (y * side + x) * 3
      pixels[at] = Math.floor((255 * x) / side)
      pixels[at + 1] = Math.floor((255 * y) / side)
      pixels[at + 2] = 160
    }
  }
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .toFormat(format, format === "jpeg" ? { quality: 85 } : {})
    .toBuffer()
}
