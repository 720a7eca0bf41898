/**
 * SafeFetch over real HTTPS on loopback only: every connection these tests make goes to
 * 127.0.0.1 or ::1. Test host names resolve through the injected resolver; off-machine
 * answers must be refused before any request is made (https.request is spied on), and the
 * loopback servers count what reaches them. The CA and the server certificate (localhost,
 * logo.test, 127.0.0.1, ::1) are made with the machine's openssl at start.
 */
import { execFile } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import https from "node:https"
import { createServer as createTcpServer, type Server, type Socket } from "node:net"
import { dirname, join } from "node:path"
import tls from "node:tls"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import {
  makeSafeFetch,
  resolvedLogFields,
  type SafeFetchOptions,
  type SafeFetchResult
} from "./SafeFetch.js"
import { makeTestCertificates } from "./TestCertificates.testing.js"

const MB2 = 2 * 1024 * 1024

type Recorded = {
  readonly path: string
  readonly host: string | undefined
  readonly sni: string | false | null
  readonly ua: string | undefined
  readonly remote: string | undefined
}

interface Loopback {
  readonly server: Server
  readonly port: number
  readonly requests: Array<Recorded>
  connections: number
  inFlight: number
  maxInFlight: number
}

let dir: string
let ca: string
let key: string
let cert: string
let v4: Loopback
let v6: Loopback | undefined
let raw: { server: tls.Server; port: number; connections: number }
const sockets = new Set<Socket>()

const makeCertificates = () => {
  const made = makeTestCertificates()
  dir = made.dir
  ca = made.ca
  key = made.key
  cert = made.cert
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const handle = (state: Loopback) => async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "https://x")
  state.requests.push({
    path: url.pathname,
    host: request.headers.host,
    sni: (request.socket as tls.TLSSocket).servername,
    ua: request.headers["user-agent"],
    remote: request.socket.remoteAddress
  })
  const parts = url.pathname.split("/").filter((part) => part !== "")
  const [route, argument] = parts
  const n = Number(argument)
  switch (route) {
    case "ok":
      response.writeHead(200, { "content-type": "image/png" })
      return response.end("hello")
    case "r":
      if (n === 0) return response.end("done")
      response.writeHead(302, { location: `/r/${n - 1}` })
      return response.end()
    case "to": {
      response.writeHead(argument === "perm" ? 308 : 302, {
        location: url.searchParams.get("location") ?? "/ok"
      })
      return response.end()
    }
    case "size": {
      // `n` bytes, chunked (no Content-Length) unless ?length= says what to declare.
      const declared = url.searchParams.get("length")
      response.writeHead(200, declared === null ? {} : { "content-length": declared })
      const chunk = Buffer.alloc(64 * 1024, 120)
      let left = n
      while (left > 0) {
        const part = chunk.subarray(0, Math.min(left, chunk.length))
        left -= part.length
        if (!response.write(part)) await new Promise((resolve) => response.once("drain", resolve))
      }
      return response.end()
    }
    case "declared":
      // Declares 3 MB and sends nothing: refused on the header alone.
      response.writeHead(200, { "content-length": String(3 * 1024 * 1024) })
      return response.flushHeaders()
    case "trickle": {
      response.writeHead(200, { "content-type": "image/png" })
      const timer = setInterval(() => response.write("x"), 50)
      response.on("close", () => clearInterval(timer))
      return
    }
    case "status":
      response.writeHead(n)
      return response.end("no")
    case "slow":
      state.inFlight++
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight)
      await sleep(n)
      state.inFlight--
      return response.end("slow")
    default:
      response.writeHead(404)
      return response.end()
  }
}

const listen = <S extends Server>(server: S, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

const startLoopback = async (host: string): Promise<Loopback> => {
  const server = https.createServer({ key, cert })
  const state = {
    server,
    port: 0,
    requests: [],
    connections: 0,
    inFlight: 0,
    maxInFlight: 0
  } as Loopback & { port: number }
  server.on("connection", (socket: Socket) => {
    state.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("request", handle(state))
  state.port = await listen(server, host)
  return state
}

/** A TLS server that answers with raw bytes: a Content-Length that lies, a close-delimited body. */
const startRaw = async () => {
  const state = { server: undefined as unknown as tls.Server, port: 0, connections: 0 }
  state.server = tls.createServer({ key, cert }, (socket) => {
    state.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => {})
    socket.once("data", (data) => {
      const path = data.toString("latin1").split(" ")[1] ?? "/"
      const body = Buffer.alloc(MB2 + 1, 121)
      if (path === "/lying")
        socket.end(
          Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), body])
        )
      else if (path === "/close-delimited")
        socket.end(
          Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"), body])
        )
      else if (path === "/close-delimited-exact")
        socket.end(
          Buffer.concat([
            Buffer.from("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"),
            body.subarray(1)
          ])
        )
      else socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    })
  })
  state.port = await listen(state.server as unknown as Server, "127.0.0.1")
  return state
}

const close = (server: Server | tls.Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve())
  })

beforeAll(async () => {
  makeCertificates()
  v4 = await startLoopback("127.0.0.1")
  v6 = await startLoopback("::1").catch(() => undefined)
  raw = await startRaw()
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await Promise.all([close(v4.server), v6 ? close(v6.server) : undefined, close(raw.server)])
  rmSync(dir, { recursive: true, force: true })
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** A resolver that answers from `table` (host → addresses, or a list of answers, one per call). */
const resolver = (
  table: Readonly<Record<string, ReadonlyArray<string> | ReadonlyArray<ReadonlyArray<string>>>>
) => {
  const calls: Array<string> = []
  const resolve = async (hostname: string) => {
    calls.push(hostname)
    const entry = table[hostname]
    if (entry === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
    const answers = (
      Array.isArray(entry[0])
        ? entry[Math.min(calls.filter((h) => h === hostname).length, entry.length) - 1]
        : entry
    ) as ReadonlyArray<string>
    return answers.map((address) => ({
      address,
      family: address.includes(":") ? (6 as const) : (4 as const)
    }))
  }
  return { calls, resolve }
}

const loopbackNames = {
  "logo.test": ["127.0.0.1"],
  "wrong.test": ["127.0.0.1"],
  "meta.test": ["169.254.169.254"]
}

const fetcher = (options?: SafeFetchOptions) =>
  makeSafeFetch({ ca, allowPrivate: true, resolve: resolver(loopbackNames).resolve, ...options })

const at = (path: string, host = "logo.test", port = v4.port) => `https://${host}:${port}${path}`

const expectRefused = (result: SafeFetchResult, kind: string, ...contains: Array<string>) => {
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.kind, result.message).toBe(kind)
  for (const text of contains) expect(result.message).toContain(text)
  expect(result.message).not.toContain("\n")
}

const spyRequests = () => vi.spyOn(https, "request")

describe("SafeFetch over loopback HTTPS", () => {
  it("fetches a logo: the pinned address, the URL's host for SNI and Host, the default user-agent", async () => {
    const { calls, resolve } = resolver(loopbackNames)
    const before = v4.requests.length
    const result = await makeSafeFetch({ ca, allowPrivate: true, resolve })(at("/ok"))
    expect(result).toEqual({
      ok: true,
      body: new Uint8Array(Buffer.from("hello")),
      url: at("/ok"),
      contentType: "image/png"
    })
    expect(calls).toEqual(["logo.test"])
    expect(v4.requests.slice(before)).toEqual([
      {
        path: "/ok",
        host: `logo.test:${v4.port}`,
        sni: "logo.test",
        ua: "pay-engine (+logo fetch)",
        remote: "127.0.0.1"
      }
    ])
  })

  it("takes a fully qualified host name (trailing dot), naming it without the dot for TLS", async () => {
    const { calls, resolve } = resolver({ "logo.test.": ["127.0.0.1"] })
    const before = v4.requests.length
    const result = await makeSafeFetch({ ca, allowPrivate: true, resolve })(at("/ok", "logo.test."))
    expect(result.ok).toBe(true)
    expect(calls).toEqual(["logo.test."])
    expect(v4.requests[before]?.sni).toBe("logo.test")
  })

  it("sends the headers given", async () => {
    const before = v4.requests.length
    const result = await fetcher({ headers: { "User-Agent": "tester/1" } })(at("/ok"))
    expect(result.ok).toBe(true)
    expect(v4.requests[before]?.ua).toBe("tester/1")
  })

  it("fetches IP-literal URLs without DNS, and without SNI, when private addresses are allowed", async () => {
    const { calls, resolve } = resolver({})
    const fetch = makeSafeFetch({ ca, allowPrivate: true, resolve })
    const before = v4.requests.length
    expect((await fetch(at("/ok", "127.0.0.1"))).ok).toBe(true)
    expect(v4.requests[before]).toMatchObject({ host: `127.0.0.1:${v4.port}`, sni: false })
    if (v6) {
      const result = await fetch(at("/ok", "[::1]", v6.port))
      expect(result.ok).toBe(true)
      expect(v6.requests.at(-1)).toMatchObject({ host: `[::1]:${v6.port}`, sni: false })
    }
    expect(calls).toEqual([])
  })

  describe("refuses what is not public, before any connection", () => {
    const refusedNow = async (
      url: string,
      options: SafeFetchOptions,
      ...contains: Array<string>
    ) => {
      const spy = spyRequests()
      const servers = [v4, v6].filter((s) => s !== undefined)
      const before = servers.map((s) => s.connections)
      const result = await makeSafeFetch({ ca, ...options })(url)
      expectRefused(
        result,
        "address_not_allowed",
        ...contains,
        "only public internet addresses are fetched"
      )
      expect(spy).not.toHaveBeenCalled()
      expect(servers.map((s) => s.connections)).toEqual(before)
    }

    it("https://127.0.0.1:<port>/", () =>
      refusedNow(at("/ok", "127.0.0.1"), {}, "127.0.0.1 is a loopback address"))

    it("https://[::1]:<port>/", () =>
      refusedNow(at("/ok", "[::1]", v6?.port ?? v4.port), {}, "::1 is a loopback address"))

    it("https://localhost:<port>/, through the system resolver", () =>
      refusedNow(
        at("/ok", "localhost"),
        {},
        "localhost is not allowed, it resolves to a loopback address"
      ))

    it("https://[::ffff:127.0.0.1]:<port>/", () =>
      refusedNow(
        at("/ok", "[::ffff:127.0.0.1]"),
        {},
        "::ffff:7f00:1 is an IPv4-mapped loopback address"
      ))

    it("a host whose answers include one refused address", () =>
      refusedNow(
        at("/ok", "mixed.test"),
        { resolve: resolver({ "mixed.test": ["93.184.215.14", "127.0.0.1"] }).resolve },
        "mixed.test is not allowed, it resolves to a loopback address"
      ))

    it("names no address a host resolved to in the message; keeps them for the operator's log", async () => {
      const resolve = resolver({ "intranet.test": ["10.1.2.3", "10.9.8.7"] }).resolve
      const result = await makeSafeFetch({ ca, resolve })(at("/ok", "intranet.test"))
      expectRefused(
        result,
        "address_not_allowed",
        "intranet.test is not allowed",
        "a private address"
      )
      if (result.ok) return
      expect(result.message).not.toMatch(/10\.\d/)
      expect(result.kind === "address_not_allowed" && result.resolved).toEqual({
        host: "intranet.test",
        addresses: ["10.1.2.3", "10.9.8.7"],
        refused: "10.1.2.3"
      })
      expect(
        resolvedLogFields(result.kind === "address_not_allowed" ? result.resolved : undefined)
      ).toEqual({
        host: "intranet.test",
        resolvedTo: "10.1.2.3, 10.9.8.7",
        refusedAddress: "10.1.2.3"
      })
    })

    it("private, metadata, NAT64 and 6to4 answers (off this machine: never connected to)", async () => {
      const resolve = resolver({
        "private.test": ["10.0.0.5"],
        "meta.test": ["169.254.169.254"],
        "meta6.test": ["2606:4700:4700::1111", "fd00:ec2::254"],
        "nat64.test": ["64:ff9b::a9fe:a9fe"],
        "sixtofour.test": ["2002:c0a8:101::1"],
        "cgnat.test": ["100.64.0.1"]
      }).resolve
      await refusedNow(
        at("/ok", "private.test"),
        { resolve },
        "private.test is not allowed, it resolves to a private address"
      )
      await refusedNow(
        at("/ok", "meta.test"),
        { resolve },
        "meta.test is not allowed, it resolves to a cloud metadata address"
      )
      await refusedNow(
        at("/ok", "meta6.test"),
        { resolve },
        "meta6.test is not allowed, it resolves to a cloud metadata address"
      )
      await refusedNow(at("/ok", "nat64.test"), { resolve }, "a NAT64 cloud metadata address")
      await refusedNow(at("/ok", "sixtofour.test"), { resolve }, "a 6to4 private address")
      await refusedNow(at("/ok", "cgnat.test"), { resolve }, "a carrier-grade NAT address")
      // allowPrivate lets loopback and private through, never metadata.
      await refusedNow(at("/ok", "meta.test"), { resolve, allowPrivate: true }, "cloud metadata")
      await refusedNow(
        at("/ok", "169.254.169.254"),
        { allowPrivate: true },
        "169.254.169.254 is a cloud metadata address"
      )
      await refusedNow(
        at("/ok", "0.0.0.0"),
        { allowPrivate: true },
        "0.0.0.0 is an unspecified address"
      )
    })
  })

  it("resolves once per hop and connects to the address it checked (DNS rebinding)", async () => {
    // The second answer of each name would be refused; a second lookup for a hop (by the
    // fetcher or under it) would see it. rebind.test is not in any DNS: reaching the server
    // at all shows the connection used the checked answer.
    const { calls, resolve } = resolver({
      "rebind.test": [["127.0.0.1"], ["169.254.169.254"]],
      "logo.test": [["127.0.0.1"], ["127.0.0.1"], ["169.254.169.254"]]
    })
    const fetch = makeSafeFetch({ ca, allowPrivate: true, resolve })
    const wrongName = await fetch(at("/ok", "rebind.test"))
    // The certificate does not name rebind.test: the TLS name is the URL's host, not the address.
    expectRefused(wrongName, "unreachable", "rebind.test")
    expect(calls).toEqual(["rebind.test"])

    const before = v4.requests.length
    const result = await fetch(at("/r/1"))
    expect(result.ok && result.url).toBe(at("/r/0"))
    expect(calls).toEqual(["rebind.test", "logo.test", "logo.test"])
    expect(v4.requests.slice(before).map((r) => [r.path, r.remote, r.sni])).toEqual([
      ["/r/1", "127.0.0.1", "logo.test"],
      ["/r/0", "127.0.0.1", "logo.test"]
    ])
    // The third answer for logo.test is metadata: the next fetch is refused without connecting.
    const spy = spyRequests()
    expectRefused(
      await fetch(at("/ok")),
      "address_not_allowed",
      "logo.test is not allowed, it resolves to a cloud metadata address"
    )
    expect(spy).not.toHaveBeenCalled()
  })

  it("hands https.request the checked addresses as its only lookup", async () => {
    const spy = spyRequests()
    const result = await fetcher()(at("/ok"))
    expect(result.ok).toBe(true)
    const options = spy.mock.calls[0]?.[0] as https.RequestOptions
    expect(options).toMatchObject({
      host: "logo.test",
      servername: "logo.test",
      headers: expect.objectContaining({ host: `logo.test:${v4.port}` })
    })
    const answers = await new Promise((resolve) =>
      options.lookup?.("anything.example", { all: true }, (_error, addresses) => resolve(addresses))
    )
    expect(answers).toEqual([{ address: "127.0.0.1", family: 4 }])
  })

  it("refuses URLs that are not absolute https", async () => {
    const fetch = fetcher()
    expectRefused(await fetch(`http://logo.test:${v4.port}/ok`), "invalid_url", "must use https")
    expectRefused(await fetch("ftp://logo.test/logo.png"), "invalid_url", "must use https")
    expectRefused(await fetch("/logo.png"), "invalid_url", "an absolute https URL")
    expectRefused(await fetch("not a url"), "invalid_url")
  })

  describe("redirects", () => {
    it("follows 3, each one checked, and refuses the 4th", async () => {
      const { calls, resolve } = resolver(loopbackNames)
      const fetch = makeSafeFetch({ ca, allowPrivate: true, resolve })
      const result = await fetch(at("/r/3"))
      expect(result.ok && result.url).toBe(at("/r/0"))
      expect(result.ok && Buffer.from(result.body).toString()).toBe("done")
      expect(calls).toHaveLength(4)
      const before = v4.requests.length
      expectRefused(await fetch(at("/r/4")), "unreachable", "more than 3", "/r/4")
      expect(v4.requests.length - before).toBe(4)
      expectRefused(await fetcher({ maxRedirects: 0 })(at("/r/1")), "unreachable", "more than 0")
    })

    it("refuses a redirect from https to http", async () => {
      const location = `http://logo.test:${v4.port}/ok`
      const before = v4.requests.length
      const result = await fetcher()(at(`/to/perm?location=${encodeURIComponent(location)}`))
      expectRefused(result, "invalid_url", "redirected to http:", "only https")
      expect(v4.requests.length - before).toBe(1)
    })

    it("refuses a redirect to a refused address, before connecting to it", async () => {
      for (const location of [
        `https://meta.test:${v4.port}/ok`,
        "https://[::ffff:a9fe:a9fe]/latest/meta-data"
      ]) {
        const spy = spyRequests()
        const result = await fetcher()(at(`/to/302?location=${encodeURIComponent(location)}`))
        expectRefused(result, "address_not_allowed", "cloud metadata")
        expect(spy).toHaveBeenCalledTimes(1)
        spy.mockRestore()
      }
      const loopback = `https://127.0.0.1:${v4.port}/ok`
      const spy = spyRequests()
      const result = await makeSafeFetch({
        ca,
        resolve: resolver({ "public.test": ["127.0.0.1"] }).resolve
      })(at(`/to/302?location=${encodeURIComponent(loopback)}`, "public.test"))
      // Without allowPrivate the first hop is refused already: nothing is requested.
      expectRefused(
        result,
        "address_not_allowed",
        "public.test is not allowed, it resolves to a loopback address"
      )
      expect(spy).not.toHaveBeenCalled()
    })
  })

  describe("the body, cut at maxBytes", () => {
    it("takes exactly 2 MB, chunked and with its Content-Length", async () => {
      const fetch = fetcher()
      const chunked = await fetch(at(`/size/${MB2}`))
      expect(chunked.ok && chunked.body.byteLength).toBe(MB2)
      const declared = await fetch(at(`/size/${MB2}?length=${MB2}`))
      expect(declared.ok && declared.body.byteLength).toBe(MB2)
      const raw2 = await fetch(at("/close-delimited-exact", "logo.test", raw.port))
      expect(raw2.ok && raw2.body.byteLength).toBe(MB2)
    })

    it("refuses 2 MB + 1 byte without a Content-Length (chunked, or up to the close)", async () => {
      const fetch = fetcher()
      expectRefused(await fetch(at(`/size/${MB2 + 1}`)), "too_large", "larger than 2 MB")
      expectRefused(
        await fetch(at("/close-delimited", "logo.test", raw.port)),
        "too_large",
        "larger than 2 MB"
      )
    })

    it("refuses a declared Content-Length over the limit at once, before any body", async () => {
      const started = Date.now()
      expectRefused(await fetcher()(at("/declared")), "too_large", "Content-Length 3145728")
      expect(Date.now() - started).toBeLessThan(5_000)
      expectRefused(
        await fetcher({ maxBytes: 1000 })(at("/size/1001?length=1001")),
        "too_large",
        "1000 bytes"
      )
    })

    it("refuses a Content-Length that lies (declares 100, sends 2 MB + 1)", async () => {
      const result = await fetcher()(at("/lying", "logo.test", raw.port))
      expectRefused(result, "unreachable", "/lying", "invalid HTTP response")
    })

    it("applies maxBytes as given", async () => {
      const fetch = fetcher({ maxBytes: 10 })
      expect((await fetch(at("/size/10"))).ok).toBe(true)
      expectRefused(await fetch(at("/size/11")), "too_large", "10 bytes")
    })
  })

  it("stops a server that trickles past the time limit", async () => {
    const started = Date.now()
    const result = await fetcher({ timeoutMs: 300 })(at("/trickle"))
    expectRefused(result, "unreachable", "longer than 300 ms", "/trickle")
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("gives up when the caller's signal aborts", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    expectRefused(
      await fetcher()(at("/trickle"), { signal: controller.signal }),
      "unreachable",
      "cancelled"
    )
    const spy = spyRequests()
    expectRefused(
      await fetcher()(at("/ok"), { signal: AbortSignal.abort() }),
      "unreachable",
      "cancelled"
    )
    expect(spy).not.toHaveBeenCalled()
  })

  it("treats a final status other than 2xx as unreachable, with the status", async () => {
    expectRefused(await fetcher()(at("/status/404")), "unreachable", "HTTP 404")
    expectRefused(await fetcher()(at("/status/500")), "unreachable", "HTTP 500")
    expectRefused(await fetcher()(at("/status/304")), "unreachable", "HTTP 304")
  })

  it("fails fast on a closed port, with no retry", async () => {
    const probe = createTcpServer()
    const port = await listen(probe, "127.0.0.1")
    await close(probe)
    const spy = spyRequests()
    const started = Date.now()
    expectRefused(await fetcher()(at("/ok", "logo.test", port)), "unreachable", "ECONNREFUSED")
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(spy).toHaveBeenCalledTimes(1)
  })

  it("reports DNS failures as unreachable", async () => {
    expectRefused(
      await fetcher()(at("/ok", "nowhere.test")),
      "unreachable",
      "could not resolve nowhere.test",
      "ENOTFOUND"
    )
    const empty = makeSafeFetch({ ca, resolve: async () => [] })
    expectRefused(await empty(at("/ok")), "unreachable", "logo.test has no addresses")
  })

  it("checks the certificate against the URL's host, with the CA given or the default store", async () => {
    expectRefused(await fetcher()(at("/ok", "wrong.test")), "unreachable", "wrong.test")
    // Without `ca`, the test CA is not in the default store (no NODE_EXTRA_CA_CERTS here).
    const untrusting = makeSafeFetch({
      allowPrivate: true,
      resolve: resolver(loopbackNames).resolve
    })
    expectRefused(await untrusting(at("/ok")), "unreachable", "could not fetch")
  })

  it("trusts the default store, NODE_EXTRA_CA_CERTS included (a child process of this runtime)", async () => {
    const here = dirname(fileURLToPath(import.meta.url))
    const script = join(dir, "extra-ca.mts")
    writeFileSync(
      script,
      `import { makeSafeFetch } from ${JSON.stringify(join(here, "SafeFetch.ts"))}
const fetch = makeSafeFetch({ allowPrivate: true, resolve: async () => [{ address: "127.0.0.1", family: 4 }] })
const result = await fetch(${JSON.stringify(at("/ok"))})
console.log(JSON.stringify(result.ok ? { ok: true, body: Buffer.from(result.body).toString() } : result))
`
    )
    const bun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"
    const args = bun ? [script] : ["--import", "tsx", script]
    const run = (env: NodeJS.ProcessEnv) =>
      new Promise<unknown>((resolve, reject) =>
        execFile(process.execPath, args, { env, cwd: here, timeout: 20_000 }, (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout))
        )
      )
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env
    expect(await run({ ...env, NODE_EXTRA_CA_CERTS: join(dir, "ca.crt") })).toEqual({
      ok: true,
      body: "hello"
    })
    expect(await run(env)).toMatchObject({ ok: false, kind: "unreachable" })
  })

  it("keeps at most maxConcurrent fetches in flight; the others wait", async () => {
    const fetch = fetcher({ maxConcurrent: 2 })
    v4.maxInFlight = 0
    const results = await Promise.all(Array.from({ length: 6 }, () => fetch(at("/slow/150"))))
    expect(results.every((r) => r.ok)).toBe(true)
    expect(v4.maxInFlight).toBe(2)
  })

  it("counts the wait for a slot toward the time limit", async () => {
    const fetch = fetcher({ maxConcurrent: 1, timeoutMs: 400 })
    const started = Date.now()
    const [first, second] = await Promise.all([fetch(at("/trickle")), fetch(at("/ok"))])
    expectRefused(first!, "unreachable", "longer than 400 ms")
    expectRefused(second!, "unreachable", "longer than 400 ms")
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})
