/**
 * The logo bench's baseline (bench/logos.ts): the least a server can do to answer
 * `POST /v1/merchants` with an `iconUrl` as the engine must, on bare node:http +
 * better-sqlite3 (the engine's pragmas: WAL, synchronous = FULL), node:https and sharp, so
 * the engine's time to create a merchant with a logo is read as a multiple of what this
 * machine needs for it. Per request, exactly this and nothing else:
 *
 * 1. the API key authenticated by its SHA-256 (one read), the JSON body's three fields
 *    checked;
 * 2. the Idempotency-Key claimed in a commit of its own before any work (the engine must do
 *    the same: a concurrent request with the same key must find it taken, not fetch and
 *    write a second time);
 * 3. with an `iconUrl`: the image fetched over HTTPS with node:https (a new connection per
 *    fetch, `agent: false`, as the engine's fetcher; the test CA trusted through
 *    NODE_EXTRA_CA_CERTS as in the engine; at most 2 MB read; the URL is an IP literal here,
 *    so neither makes a DNS lookup), then the same image work as `checkLogo` in
 *    packages/logos/src/LogoImage.ts, written out here with the same sharp calls and
 *    parameters rather than imported, so the baseline shares no code with the engine: the
 *    first bytes sniffed, `metadata()` (header only) and the size rules, `stats()` only when
 *    the image has an alpha channel, one decode (autoOrient, `limitInputPixels` 4096²,
 *    `failOn: "error"`), centre-crop to a square, resize to at most 1024 px, sRGB, alpha
 *    dropped, raw pixels, then the master and each smaller size of 64, 128, 256 and 512
 *    encoded to WebP (quality 90, alphaQuality 100, smartSubsample, effort 4), one after
 *    another as the engine does; the master's SHA-256 names the logo. The bench checks
 *    that every master's name equals the engine's for the same image: the same bytes;
 * 4. one transaction: the logo's rows (master and sizes, kept once per name as the
 *    engine's store keeps them), the merchant, the key's recorded answer. The engine
 *    commits the logo's rows in a transaction of their own before the merchant's: one
 *    commit (one fsync) more than this minimum;
 * 5. the same 201 answer, `{ merchant: { id, name, email, status, iconUrl, createdAt } }`.
 *
 * Only what the bench sends is served (POST /v1/merchants, GET /health); a redirect or a
 * refusal's wording is not the minimum's business here. Run as its own process:
 * BASELINE_DATABASE, BASELINE_API_KEY, PORT, NODE_EXTRA_CA_CERTS.
 */
import { createHash, randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import https from "node:https"
import { isIP } from "node:net"
import Database from "better-sqlite3"
import sharp from "sharp"
import { env, fail, header, readText, serveBaseline, sha256 } from "./baseline-http.js"

/** LogoImage.ts's LOGO_LIMITS, LOGO_SIZES and WebP options. */
const MIN_SIDE = 500
const MAX_SIDE = 4096
const SQUARE_TOLERANCE = 0.05
const MASTER_MAX_SIDE = 1024
const SIZES = [64, 128, 256, 512]
const WEBP_OPTIONS = { quality: 90, alphaQuality: 100, smartSubsample: true, effort: 4 } as const
/** SafeFetch.ts's defaults. */
const MAX_IMAGE_BYTES = 2 * 1024 * 1024
const FETCH_TIMEOUT_MS = 10_000
const ROUTE = "POST /v1/merchants"

const db = new Database(env("BASELINE_DATABASE"))
for (const pragma of [
  "journal_mode = WAL",
  "synchronous = FULL",
  "foreign_keys = ON",
  "busy_timeout = 5000"
]) {
  db.exec(`PRAGMA ${pragma}`)
}
db.exec(`
  CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS merchants (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    icon_url TEXT,
    logo_name TEXT,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE IF NOT EXISTS logos (
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (name, size)
  ) STRICT;
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    partner_id TEXT NOT NULL,
    route TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    response_status INTEGER,
    response_body TEXT,
    PRIMARY KEY (partner_id, route, key)
  ) STRICT;
`)
db.prepare("INSERT OR IGNORE INTO api_keys VALUES (?, 'ptnr_baseline')").run(
  sha256(env("BASELINE_API_KEY"))
)
const partnerByKey = db.prepare<[string], { partner_id: string }>(
  "SELECT partner_id FROM api_keys WHERE hash = ?"
)
const claimKey = db.prepare(
  `INSERT INTO idempotency_keys (partner_id, route, key, fingerprint, created_at)
   VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
)
const claimedKey = db.prepare<
  [string, string, string],
  { fingerprint: string; response_status: number | null; response_body: string | null }
>(
  `SELECT fingerprint, response_status, response_body FROM idempotency_keys
   WHERE partner_id = ? AND route = ? AND key = ?`
)
const insertLogo = db.prepare(
  `INSERT INTO logos (name, size, content_type, bytes, created_at) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (name, size) DO NOTHING`
)
const insertMerchant = db.prepare(
  `INSERT INTO merchants (id, partner_id, name, email, icon_url, logo_name, status, created_at)
   VALUES (?, ?, ?, ?, ?, ?, 'active', ?)`
)
const completeKey = db.prepare(
  `UPDATE idempotency_keys SET response_status = ?, response_body = ?
   WHERE partner_id = ? AND route = ? AND key = ?`
)

interface Logo {
  readonly name: string
  /** By side in px; 0 is the master. */
  readonly images: ReadonlyArray<readonly [number, Buffer]>
}

const writeCreated = db.transaction(
  (
    claim: readonly [partnerId: string, key: string],
    merchant: readonly [id: string, name: string, email: string, iconUrl: string | null],
    logo: Logo | null,
    answer: string,
    at: number
  ) => {
    for (const [size, bytes] of logo?.images ?? []) {
      insertLogo.run(logo!.name, size, "image/webp", bytes, at)
    }
    const [id, name, email, iconUrl] = merchant
    insertMerchant.run(id, claim[0], name, email, iconUrl, logo?.name ?? null, at)
    completeKey.run(201, answer, claim[0], ROUTE, claim[1])
  }
)

const send = (res: ServerResponse, status: number, text: string) => {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

const EMAIL =
  /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/

type Body = { readonly name: string; readonly email: string; readonly iconUrl: string | null }

const checkBody = (body: unknown): Body | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "not an object"
  const {
    merchantName: name,
    merchantEmail: email,
    iconUrl,
    ...rest
  } = body as Record<string, unknown>
  if (Object.keys(rest).length > 0) return "unknown field"
  if (typeof name !== "string" || name.length > 256 || name.trim() === "") return "merchantName"
  if (typeof email !== "string" || email.length > 320 || !EMAIL.test(email)) return "merchantEmail"
  if (iconUrl === undefined || iconUrl === null) return { name, email, iconUrl: null }
  if (typeof iconUrl !== "string" || !iconUrl.startsWith("https://")) return "iconUrl"
  return { name, email, iconUrl }
}

/** The image's bytes, or why not. A new TLS connection, no redirects followed (none here). */
const fetchImage = (url: URL): Promise<Buffer | string> =>
  new Promise((resolve) => {
    // The engine classifies an IP literal's range and connects to it: no DNS either way.
    if (isIP(url.hostname) === 0) return resolve("the bench gives IP-literal URLs only")
    const request = https.get(url, {
      agent: false,
      headers: {
        "user-agent": "pay-baseline (+logo fetch)",
        accept: "*/*",
        "accept-encoding": "identity"
      },
      timeout: FETCH_TIMEOUT_MS
    })
    request.on("timeout", () => request.destroy(new Error("timed out")))
    request.on("error", (error) => resolve(error.message))
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      if (status < 200 || status > 299) {
        request.destroy()
        return resolve(`HTTP ${status}`)
      }
      const chunks: Array<Buffer> = []
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > MAX_IMAGE_BYTES) {
          request.destroy()
          resolve("larger than 2 MB")
        } else chunks.push(chunk)
      })
      response.on("end", () => resolve(Buffer.concat(chunks)))
      response.on("error", (error) => resolve(error.message))
    })
  })

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** checkLogo's work for a still, opaque, square JPEG or PNG in the allowed sizes. */
const normalise = async (input: Buffer): Promise<Logo | string> => {
  const format =
    input[0] === 0xff && input[1] === 0xd8 && input[2] === 0xff
      ? "jpeg"
      : input.subarray(0, 8).equals(PNG_SIGNATURE)
        ? "png"
        : undefined
  if (format === undefined) return "the bench sends JPEG and PNG only"
  const meta = await sharp(input, { limitInputPixels: false }).metadata()
  if (meta.format !== format || (meta.pages ?? 1) > 1) return "not a still image of its kind"
  const width = meta.autoOrient?.width ?? meta.width
  const height = meta.autoOrient?.height ?? meta.height
  if (width > MAX_SIDE || height > MAX_SIDE || width < MIN_SIDE || height < MIN_SIDE) {
    return "size out of range"
  }
  if (Math.abs(width - height) / Math.max(width, height) > SQUARE_TOLERANCE) return "not square"
  const decode = () =>
    sharp(input, { limitInputPixels: MAX_SIDE * MAX_SIDE, failOn: "error", autoOrient: true })
  if (meta.hasAlpha && !(await decode().stats()).isOpaque) {
    return "the bench sends opaque images only"
  }
  const cropSide = Math.min(width, height)
  const side = Math.min(cropSide, MASTER_MAX_SIDE)
  const { data, info } = await decode()
    .extract({
      left: Math.floor((width - cropSide) / 2),
      top: Math.floor((height - cropSide) / 2),
      width: cropSide,
      height: cropSide
    })
    .resize(side, side, { fit: "fill" })
    .toColourspace("srgb")
    .removeAlpha()
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true })
  const raw = { width: info.width, height: info.height, channels: info.channels }
  const encode = (px: number) =>
    sharp(data, { raw }).resize(px, px, { fit: "fill" }).webp(WEBP_OPTIONS).toBuffer()
  const master = await encode(side)
  const images: Array<readonly [number, Buffer]> = [[0, master]]
  for (const px of SIZES) if (px < side) images.push([px, await encode(px)])
  return { name: `${createHash("sha256").update(master).digest("hex")}.webp`, images }
}

/** The route and the body's fields in a fixed order: a body's key order does not change it. */
const fingerprint = (body: Body) =>
  sha256(JSON.stringify([ROUTE, body.name, body.email, body.iconUrl]))

let publicUrl = ""

const createMerchant = async (req: IncomingMessage, res: ServerResponse, partnerId: string) => {
  const key = header(req, "idempotency-key")
  if (key === undefined) return fail(res, 400, "missing_idempotency_key", "Idempotency-Key")
  if (!header(req, "content-type")?.startsWith("application/json")) {
    return fail(res, 415, "unsupported_media_type", "the body must be JSON")
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(await readText(req))
  } catch {
    return fail(res, 400, "invalid_params", "the body is not JSON")
  }
  const body = checkBody(parsed)
  if (typeof body === "string") return fail(res, 400, "params_validation", body)
  const print = fingerprint(body)
  const at = Date.now()
  if (claimKey.run(partnerId, ROUTE, key, print, at).changes === 0) {
    const claimed = claimedKey.get(partnerId, ROUTE, key)
    if (claimed?.fingerprint !== print) {
      return fail(res, 422, "idempotency_key_reused", "another request")
    }
    if (claimed.response_body === null) return fail(res, 409, "idempotency_conflict", "running")
    return send(res, claimed.response_status ?? 200, claimed.response_body)
  }
  let logo: Logo | null = null
  if (body.iconUrl !== null) {
    const image = await fetchImage(new URL(body.iconUrl))
    const checked = typeof image === "string" ? image : await normalise(image)
    if (typeof checked === "string") return fail(res, 400, "params_validation", checked)
    logo = checked
  }
  const id = `mrch_${randomBytes(15).toString("base64url")}`
  const answer = JSON.stringify({
    merchant: {
      id,
      name: body.name,
      email: body.email,
      status: "active",
      iconUrl: logo === null ? null : `${publicUrl}/logos/${logo.name}`,
      createdAt: new Date(at).toISOString()
    }
  })
  writeCreated([partnerId, key], [id, body.name, body.email, body.iconUrl], logo, answer, at)
  send(res, 201, answer)
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  if (publicUrl === "") publicUrl = `http://${req.headers.host ?? "127.0.0.1"}`
  if (req.method === "GET" && req.url === "/health") return send(res, 200, '{"status":"ok"}')
  if (req.method !== "POST" || req.url !== "/v1/merchants") {
    return fail(res, 404, "not_found", "no such route")
  }
  const key = header(req, "api-key")
  if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
  const partner = partnerByKey.get(sha256(key))
  if (partner === undefined) return fail(res, 401, "invalid_api_key", "unknown API key")
  return createMerchant(req, res, partner.partner_id)
}

serveBaseline(handle, () => db.close())
