/**
 * The webhooks bench's baseline (bench/webhooks.ts): the least a server can do to turn a
 * payment's cancellation into a signed webhook delivered to a receiver, with the engine's
 * durability, so the engine's figures are read as a share of what this machine allows.
 * bare node:http + better-sqlite3 (WAL, synchronous = FULL, as the engine's
 * CONNECTION_PRAGMAS) or a `pg` pool (the server's settings, synchronous_commit as it is).
 *
 * What it does, and no more:
 *
 * - The change, `POST /v1/payments/{id}/cancel` (Api-Key, Merchant-Id): in ONE transaction
 *   (SQLite: one better-sqlite3 transaction; PostgreSQL: one statement, one round trip),
 *   the key's hash and the merchant's owner checked, the payment compare-and-set from
 *   `requires_action` to `cancelled`, the event row written (its `data` the payment as
 *   the engine's payment.cancelled event shows it, same fields) and one delivery row for
 *   every endpoint that wants it (the engine's fan-out: partner, enabled, not deleted,
 *   merchant filter, type filter). Answers 200 with the payment's new status.
 * - The dispatcher, in the same process: a claim selects due deliveries (pending, due,
 *   lease free or lapsed, endpoint enabled, no earlier pending delivery of the same payment
 *   to the same endpoint, oldest first) and leases them in ONE UPDATE (with each one's
 *   event and endpoint); each is POSTed over HTTP, a new connection per delivery as the
 *   engine's sender does, with the Standard Webhooks headers (webhook-id,
 *   webhook-timestamp, webhook-signature = v1,base64 HMAC-SHA256 of `${id}.${ts}.${body}`),
 *   the response read (up to 64 KB); then ONE transaction marks it delivered (fenced by its
 *   lease token), writes the attempt row and clears the endpoint's failing run if it has
 *   one. At most 8 deliveries in flight (the engine's default perEndpoint; the bench
 *   registers one endpoint), counted in memory: this baseline is one instance.
 * - The tables have the engine's columns and indexes (its migrations 0012, 0014, 0015),
 *   so each write maintains what the engine's maintains.
 * - When it looks for due deliveries: after each delivery it sent (as the engine), every
 *   BASELINE_POLL_MS (250, the engine's pollMs), and, with BASELINE_WAKE_ON_WRITE=1, at
 *   once after each change it wrote (as the engine does after a change it committed).
 *   BASELINE_WAKE_ON_WRITE=0 polls only, for what a poll alone would cost.
 * - Setup routes the bench does not time: `POST /setup/payments {count}` inserts payments
 *   in `requires_action` for the seeded merchant; `POST /v1/webhook-endpoints {url}` stores
 *   an endpoint with a new secret and answers `{id, secret}`.
 *
 * Not done (the engine does it, the bench does not exercise it): retries and their
 * schedule, disabling failing endpoints, secret rotation, idempotency keys (the bench's
 * cancels send none), the sealing of secrets at rest.
 *
 * Run as its own process: BASELINE_DATABASE (a SQLite file, or a postgres:// URL on a
 * schema of its own), BASELINE_API_KEY, BASELINE_MERCHANT_ID, BASELINE_POOL_SIZE
 * (PostgreSQL: the engine's pool size), BASELINE_WAKE_ON_WRITE (1 or 0), PORT.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import http, { type IncomingMessage, type ServerResponse } from "node:http"
import Database from "better-sqlite3"
import pg from "pg"
import {
  env,
  fail,
  header,
  readText,
  send as sendJson,
  serveBaseline,
  sha256
} from "./baseline-http.js"

const PARTNER = "ptnr_baseline"
const PER_ENDPOINT = 8
const POLL_MS = Number(process.env.BASELINE_POLL_MS ?? 250)
const WAKE_ON_WRITE = env("BASELINE_WAKE_ON_WRITE") === "1"
const SEND_TIMEOUT_MS = 15_000
const MAX_RESPONSE_BYTES = 64 * 1024
const API_VERSION = "2026-02-18"
const USD_DISPLAY = { assetSymbol: "USD", assetName: "US Dollar", decimals: 2 }

/** A delivery claimed, with what its attempt needs. */
interface Claimed {
  readonly endpointId: string
  readonly eventId: string
  readonly token: string
  readonly type: string
  readonly data: string
  readonly createdAt: number
  readonly url: string
  readonly secret: string
}

interface Attempt {
  readonly at: number
  readonly durationMs: number
  readonly status: number | null
  readonly body: string | null
  readonly error: string | null
}

interface Store {
  /** The change: false when the key, the merchant or the payment's state refuses it. */
  readonly cancel: (
    keyHash: string,
    merchantId: string,
    paymentId: string
  ) => Promise<"cancelled" | "unauthorized" | "invalid_state">
  readonly claim: (limit: number, now: number) => Promise<ReadonlyArray<Claimed>>
  readonly record: (c: Claimed, attempt: Attempt) => Promise<void>
  readonly seedPayments: (ids: ReadonlyArray<string>, now: number) => Promise<void>
  readonly addEndpoint: (id: string, url: string, secret: string, now: number) => Promise<void>
  readonly close: () => Promise<void>
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** The engine's id shape: a prefix, 8 characters of time, 12 random. */
const newId = (prefix: string, now: number): string => {
  let time = ""
  for (let rest = now, i = 0; i < 8; i++, rest = Math.floor(rest / 62)) {
    time = ALPHABET[rest % 62] + time
  }
  let random = ""
  for (const byte of randomBytes(24)) {
    if (byte < 248 && random.length < 12) random += ALPHABET[byte % 62]
  }
  return `${prefix}_${time}${random.padEnd(12, "0")}`
}

/** The payment as the engine's payment.cancelled event shows it (the same fields). */
const paymentView = (p: {
  readonly id: string
  readonly merchant_id: string
  readonly merchant_name: string
  readonly reference_id: string
  readonly amount_value: string
  readonly expires_at: number
  readonly created_at: number
  readonly cancelled_at: number
}) => {
  const amount = { unit: "iso4217/USD", value: p.amount_value, display: USD_DISPLAY }
  return JSON.stringify({
    paymentId: p.id,
    merchant: { id: p.merchant_id, name: p.merchant_name, iconUrl: null },
    referenceId: p.reference_id,
    status: "cancelled",
    isTerminal: true,
    fiatAmount: amount,
    createdAt: new Date(p.created_at).toISOString(),
    lastUpdatedAt: new Date(p.cancelled_at).toISOString(),
    amount,
    isFinal: true,
    expiresAt: p.expires_at,
    gatewayUrl: `http://127.0.0.1:0/${p.id}`,
    cancelledReason: "cancelled_by_merchant",
    info: null,
    checkout: null,
    refund: null
  })
}

// ---------------------------------------------------------------------------------------
// SQLite

const sqliteStore = (file: string): Store => {
  const db = new Database(file)
  for (const pragma of [
    "journal_mode = WAL",
    "synchronous = FULL",
    "foreign_keys = ON",
    "busy_timeout = 5000"
  ]) {
    db.exec(`PRAGMA ${pragma}`)
  }
  // The engine's columns and indexes for these tables (migrations 0012, 0014, 0015).
  db.exec(`
    CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
    CREATE TABLE IF NOT EXISTS merchants (id TEXT PRIMARY KEY, partner_id TEXT NOT NULL,
      name TEXT NOT NULL) STRICT;
    CREATE TABLE IF NOT EXISTS payments (
      id TEXT PRIMARY KEY,
      merchant_id TEXT NOT NULL REFERENCES merchants (id),
      reference_id TEXT NOT NULL,
      amount_value TEXT NOT NULL,
      status TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      partner_id TEXT NOT NULL,
      type TEXT NOT NULL,
      payment_id TEXT,
      merchant_id TEXT,
      data TEXT NOT NULL,
      created_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS events_by_partner ON events (partner_id, seq);
    CREATE INDEX IF NOT EXISTS events_by_payment ON events (payment_id, seq)
      WHERE payment_id IS NOT NULL;
    CREATE TABLE IF NOT EXISTS webhook_endpoints (
      id TEXT PRIMARY KEY,
      partner_id TEXT NOT NULL,
      url TEXT NOT NULL,
      secret TEXT NOT NULL,
      events TEXT,
      merchant_id TEXT,
      status TEXT NOT NULL,
      deleted_at INTEGER,
      failing_since INTEGER
    ) STRICT;
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      endpoint_id TEXT NOT NULL,
      event_id TEXT NOT NULL,
      event_seq INTEGER NOT NULL,
      payment_id TEXT,
      state TEXT NOT NULL,
      attempts INTEGER NOT NULL,
      next_attempt_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      lease_token TEXT,
      lease_until INTEGER,
      PRIMARY KEY (endpoint_id, event_id)
    ) STRICT;
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries
      (endpoint_id, event_seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_order ON webhook_deliveries
      (endpoint_id, payment_id, event_seq) WHERE state = 'pending';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_leased ON webhook_deliveries (lease_until)
      WHERE lease_until IS NOT NULL;
    CREATE TABLE IF NOT EXISTS webhook_attempts (
      endpoint_id TEXT NOT NULL,
      event_id TEXT NOT NULL,
      attempted_at INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      response_status INTEGER,
      response_body TEXT,
      error TEXT
    ) STRICT;
    CREATE INDEX IF NOT EXISTS webhook_attempts_by_delivery ON webhook_attempts (endpoint_id, event_id);
  `)
  db.prepare("INSERT OR IGNORE INTO api_keys VALUES (?, ?)").run(
    sha256(env("BASELINE_API_KEY")),
    PARTNER
  )
  db.prepare("INSERT OR IGNORE INTO merchants VALUES (?, ?, 'Bench Shop')").run(
    env("BASELINE_MERCHANT_ID"),
    PARTNER
  )

  const sql = {
    authorize: db.prepare(`SELECT k.partner_id, m.id AS merchant_id, m.name AS merchant_name
      FROM api_keys k LEFT JOIN merchants m ON m.id = ? AND m.partner_id = k.partner_id
      WHERE k.hash = ?`),
    cancel: db.prepare(`UPDATE payments SET status = 'cancelled', updated_at = ?
      WHERE id = ? AND merchant_id = ? AND status = 'requires_action'
      RETURNING id, merchant_id, reference_id, amount_value, expires_at, created_at`),
    insertEvent: db.prepare(`INSERT INTO events (id, partner_id, type, payment_id, merchant_id,
      data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    fanOut: db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
        payment_id, state, attempts, next_attempt_at, created_at)
      SELECT w.id, ?, ?, ?, 'pending', 0, ?, ?
      FROM webhook_endpoints w
      WHERE w.partner_id = ? AND w.deleted_at IS NULL AND w.status = 'enabled'
        AND (w.merchant_id IS NULL OR w.merchant_id = ?)
        AND (w.events IS NULL OR EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ?))`),
    claim: db.prepare(`UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
      WHERE rowid IN (
        SELECT d.rowid FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= ?
          AND (d.lease_until IS NULL OR d.lease_until <= ?)
          AND w.status = 'enabled' AND w.deleted_at IS NULL
          AND (d.payment_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM webhook_deliveries p
            WHERE p.endpoint_id = d.endpoint_id AND p.payment_id = d.payment_id
              AND p.state = 'pending' AND p.event_seq < d.event_seq))
        ORDER BY d.next_attempt_at, d.event_seq LIMIT ?)
      RETURNING endpoint_id, event_id`),
    claimed: db.prepare(`SELECT e.type, e.data, e.created_at, w.url, w.secret
      FROM events e, webhook_endpoints w WHERE e.id = ? AND w.id = ?`),
    delivered: db.prepare(`UPDATE webhook_deliveries SET state = 'delivered',
        attempts = attempts + 1, lease_token = NULL, lease_until = NULL
      WHERE endpoint_id = ? AND event_id = ? AND lease_token = ?`),
    attempt: db.prepare(`INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at,
      duration_ms, response_status, response_body, error) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    succeeded: db.prepare(`UPDATE webhook_endpoints SET failing_since = NULL
      WHERE id = ? AND failing_since IS NOT NULL`),
    seed: db.prepare(`INSERT INTO payments (id, merchant_id, reference_id, amount_value, status,
      expires_at, created_at, updated_at) VALUES (?, ?, ?, '1050', 'requires_action', ?, ?, ?)`),
    endpoint: db.prepare(`INSERT INTO webhook_endpoints (id, partner_id, url, secret, status)
      VALUES (?, ?, ?, ?, 'enabled')`)
  }

  type Auth = { partner_id: string; merchant_id: string | null; merchant_name: string | null }
  type Cancelled = {
    id: string
    merchant_id: string
    reference_id: string
    amount_value: string
    expires_at: number
    created_at: number
  }

  const cancel = db.transaction((keyHash: string, merchantId: string, paymentId: string) => {
    const auth = sql.authorize.get(merchantId, keyHash) as Auth | undefined
    if (auth?.merchant_id == null) return "unauthorized" as const
    const now = Date.now()
    const p = sql.cancel.get(now, paymentId, merchantId) as Cancelled | undefined
    if (p === undefined) return "invalid_state" as const
    const eventId = newId("evt", now)
    const data = paymentView({ ...p, merchant_name: auth.merchant_name!, cancelled_at: now })
    const { lastInsertRowid: seq } = sql.insertEvent.run(
      eventId,
      auth.partner_id,
      "payment.cancelled",
      p.id,
      merchantId,
      data,
      now
    )
    sql.fanOut.run(eventId, seq, p.id, now, now, auth.partner_id, merchantId, "payment.cancelled")
    return "cancelled" as const
  })

  const claim = db.transaction((limit: number, now: number): Array<Claimed> => {
    const token = randomUUID()
    const rows = sql.claim.all(token, now + 60_000, now, now, limit) as Array<{
      endpoint_id: string
      event_id: string
    }>
    return rows.map((r) => {
      const c = sql.claimed.get(r.event_id, r.endpoint_id) as {
        type: string
        data: string
        created_at: number
        url: string
        secret: string
      }
      return {
        endpointId: r.endpoint_id,
        eventId: r.event_id,
        token,
        type: c.type,
        data: c.data,
        createdAt: c.created_at,
        url: c.url,
        secret: c.secret
      }
    })
  })

  const record = db.transaction((c: Claimed, a: Attempt) => {
    if (Number(sql.delivered.run(c.endpointId, c.eventId, c.token).changes) !== 1) return
    sql.attempt.run(c.endpointId, c.eventId, a.at, a.durationMs, a.status, a.body, a.error)
    sql.succeeded.run(c.endpointId)
  })

  const seed = db.transaction((ids: ReadonlyArray<string>, now: number) => {
    const merchantId = env("BASELINE_MERCHANT_ID")
    ids.forEach((id, n) => {
      sql.seed.run(id, merchantId, `order-${n}`, Math.floor(now / 1000) + 3600, now, now)
    })
  })

  return {
    cancel: async (keyHash, merchantId, paymentId) => cancel(keyHash, merchantId, paymentId),
    claim: async (limit, now) => claim(limit, now),
    record: async (c, a) => {
      record(c, a)
    },
    seedPayments: async (ids, now) => {
      seed(ids, now)
    },
    addEndpoint: async (id, url, secret) => {
      sql.endpoint.run(id, PARTNER, url, secret)
    },
    close: async () => {
      db.close()
    }
  }
}

// ---------------------------------------------------------------------------------------
// PostgreSQL

const postgresStore = async (url: string): Promise<Store> => {
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(env("BASELINE_POOL_SIZE")),
    application_name: "pay-bench-baseline-webhooks"
  })
  pool.on("error", (error) => console.error(error))
  // The engine's columns and indexes for these tables (its PostgreSQL migrations 0012,
  // 0014, 0015); ids compare bytewise (COLLATE "C") as the engine's do.
  await pool.query(`
    CREATE TABLE IF NOT EXISTS api_keys (hash text COLLATE "C" PRIMARY KEY,
      partner_id text COLLATE "C" NOT NULL);
    CREATE TABLE IF NOT EXISTS merchants (id text COLLATE "C" PRIMARY KEY,
      partner_id text COLLATE "C" NOT NULL, name text NOT NULL);
    CREATE TABLE IF NOT EXISTS payments (
      id text COLLATE "C" PRIMARY KEY,
      merchant_id text COLLATE "C" NOT NULL REFERENCES merchants (id),
      reference_id text NOT NULL,
      amount_value text NOT NULL,
      status text NOT NULL,
      expires_at bigint NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE TABLE IF NOT EXISTS events (
      seq bigserial PRIMARY KEY,
      id text COLLATE "C" NOT NULL UNIQUE,
      partner_id text COLLATE "C" NOT NULL,
      type text NOT NULL,
      payment_id text COLLATE "C",
      merchant_id text COLLATE "C",
      data text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS events_by_partner ON events (partner_id, seq);
    CREATE INDEX IF NOT EXISTS events_by_payment ON events (payment_id, seq)
      WHERE payment_id IS NOT NULL;
    CREATE TABLE IF NOT EXISTS webhook_endpoints (
      id text COLLATE "C" PRIMARY KEY,
      partner_id text COLLATE "C" NOT NULL,
      url text NOT NULL,
      secret text NOT NULL,
      events text,
      merchant_id text COLLATE "C",
      status text NOT NULL,
      deleted_at timestamptz,
      failing_since timestamptz
    );
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      endpoint_id text COLLATE "C" NOT NULL,
      event_id text COLLATE "C" NOT NULL,
      event_seq bigint NOT NULL,
      payment_id text COLLATE "C",
      state text NOT NULL,
      attempts integer NOT NULL,
      next_attempt_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      lease_token text COLLATE "C",
      lease_until timestamptz,
      PRIMARY KEY (endpoint_id, event_id)
    );
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries
      (endpoint_id, event_seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_order ON webhook_deliveries
      (endpoint_id, payment_id, event_seq) WHERE state = 'pending';
    CREATE INDEX IF NOT EXISTS webhook_deliveries_leased ON webhook_deliveries (lease_until)
      WHERE lease_until IS NOT NULL;
    CREATE TABLE IF NOT EXISTS webhook_attempts (
      endpoint_id text COLLATE "C" NOT NULL,
      event_id text COLLATE "C" NOT NULL,
      attempted_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      response_status integer,
      response_body text,
      error text
    );
    CREATE INDEX IF NOT EXISTS webhook_attempts_by_delivery ON webhook_attempts (endpoint_id, event_id);
  `)
  await pool.query("INSERT INTO api_keys VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    sha256(env("BASELINE_API_KEY")),
    PARTNER
  ])
  await pool.query("INSERT INTO merchants VALUES ($1, $2, 'Bench Shop') ON CONFLICT DO NOTHING", [
    env("BASELINE_MERCHANT_ID"),
    PARTNER
  ])

  // One statement, one round trip, one transaction: the key and the merchant, the
  // compare-and-set, the event (its data the JSON paymentView makes, written out here), the
  // fan-out.
  // $1 key hash, $2 merchant, $3 payment, $4 event id, $5 now.
  const CANCEL = `WITH auth AS (
      SELECT k.partner_id, m.name FROM api_keys k
      JOIN merchants m ON m.id = $2 AND m.partner_id = k.partner_id WHERE k.hash = $1
    ), p AS (
      UPDATE payments SET status = 'cancelled', updated_at = $5
      WHERE id = $3 AND merchant_id = $2 AND status = 'requires_action'
        AND EXISTS (SELECT 1 FROM auth)
      RETURNING id, merchant_id, reference_id, amount_value, expires_at, created_at
    ), e AS (
      INSERT INTO events (id, partner_id, type, payment_id, merchant_id, data, created_at)
      SELECT $4, auth.partner_id, 'payment.cancelled', p.id, p.merchant_id,
        '{"paymentId":' || to_json(p.id) || ',"merchant":{"id":' || to_json(p.merchant_id)
          || ',"name":' || to_json(auth.name) || ',"iconUrl":null},"referenceId":'
          || to_json(p.reference_id) || ',"status":"cancelled","isTerminal":true,"fiatAmount":'
          || amount.json || ',"createdAt":' || to_json(to_char(p.created_at AT TIME ZONE 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) || ',"lastUpdatedAt":'
          || to_json(to_char($5::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          || ',"amount":' || amount.json || ',"isFinal":true,"expiresAt":' || p.expires_at
          || ',"gatewayUrl":' || to_json('http://127.0.0.1:0/' || p.id)
          || ',"cancelledReason":"cancelled_by_merchant","info":null,"checkout":null,'
          || '"refund":null}',
        $5
      FROM p, auth, LATERAL (SELECT '{"unit":"iso4217/USD","value":' || to_json(p.amount_value)
        || ',"display":{"assetSymbol":"USD","assetName":"US Dollar","decimals":2}}' AS json) amount
      RETURNING seq, id, partner_id, type, payment_id, merchant_id, created_at
    ), d AS (
      INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, payment_id, state,
        attempts, next_attempt_at, created_at)
      SELECT w.id, e.id, e.seq, e.payment_id, 'pending', 0, e.created_at, e.created_at
      FROM e JOIN webhook_endpoints w ON w.partner_id = e.partner_id
        AND w.deleted_at IS NULL AND w.status = 'enabled'
        AND (w.merchant_id IS NULL OR w.merchant_id = e.merchant_id)
        AND (w.events IS NULL OR EXISTS (
          SELECT 1 FROM jsonb_array_elements_text(w.events::jsonb) t WHERE t = e.type))
    )
    SELECT (SELECT count(*) FROM auth)::int AS authorized, (SELECT count(*) FROM e)::int AS written`

  // One statement: the due deliveries picked (skipping rows another claim holds) and leased,
  // with what their attempts need. $1 now, $2 limit, $3 token, $4 lease until.
  const CLAIM = `WITH picked AS (
      SELECT d.endpoint_id, d.event_id FROM webhook_deliveries d
      JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= $1
        AND (d.lease_until IS NULL OR d.lease_until <= $1)
        AND w.status = 'enabled' AND w.deleted_at IS NULL
        AND (d.payment_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM webhook_deliveries p
          WHERE p.endpoint_id = d.endpoint_id AND p.payment_id = d.payment_id
            AND p.state = 'pending' AND p.event_seq < d.event_seq))
      ORDER BY d.next_attempt_at, d.event_seq LIMIT $2
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries t SET lease_token = $3, lease_until = $4
    FROM picked, events e, webhook_endpoints w
    WHERE t.endpoint_id = picked.endpoint_id AND t.event_id = picked.event_id
      AND e.id = t.event_id AND w.id = t.endpoint_id
    RETURNING t.endpoint_id, t.event_id, e.type, e.data, e.created_at, w.url, w.secret`

  // One statement: delivered (fenced by the token), the attempt, the failing run cleared.
  const RECORD = `WITH d AS (
      UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1,
        lease_token = NULL, lease_until = NULL
      WHERE endpoint_id = $1 AND event_id = $2 AND lease_token = $3
      RETURNING endpoint_id, event_id
    ), a AS (
      INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at, duration_ms,
        response_status, response_body, error)
      SELECT endpoint_id, event_id, $4, $5, $6, $7, $8 FROM d
    )
    UPDATE webhook_endpoints SET failing_since = NULL
    WHERE id IN (SELECT endpoint_id FROM d) AND failing_since IS NOT NULL`

  return {
    cancel: async (keyHash, merchantId, paymentId) => {
      const now = new Date()
      const { rows } = await pool.query({
        name: "cancel",
        text: CANCEL,
        values: [keyHash, merchantId, paymentId, newId("evt", now.getTime()), now]
      })
      const row = rows[0] as { authorized: number; written: number }
      return row.authorized === 0
        ? "unauthorized"
        : row.written === 1
          ? "cancelled"
          : "invalid_state"
    },
    claim: async (limit, now) => {
      const token = randomUUID()
      const { rows } = await pool.query({
        name: "claim",
        text: CLAIM,
        values: [new Date(now), limit, token, new Date(now + 60_000)]
      })
      return (
        rows as Array<{
          endpoint_id: string
          event_id: string
          type: string
          data: string
          created_at: Date
          url: string
          secret: string
        }>
      ).map((r) => ({
        endpointId: r.endpoint_id,
        eventId: r.event_id,
        token,
        type: r.type,
        data: r.data,
        createdAt: r.created_at.getTime(),
        url: r.url,
        secret: r.secret
      }))
    },
    record: async (c, a) => {
      await pool.query({
        name: "record",
        text: RECORD,
        values: [
          c.endpointId,
          c.eventId,
          c.token,
          new Date(a.at),
          a.durationMs,
          a.status,
          a.body,
          a.error
        ]
      })
    },
    seedPayments: async (ids, now) => {
      const at = new Date(now)
      await pool.query(
        `INSERT INTO payments (id, merchant_id, reference_id, amount_value, status, expires_at,
          created_at, updated_at)
        SELECT id, $2, 'order-' || n, '1050', 'requires_action', $3, $4, $4
        FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)`,
        [ids, env("BASELINE_MERCHANT_ID"), Math.floor(now / 1000) + 3600, at]
      )
    },
    addEndpoint: async (id, url, secret) => {
      await pool.query(
        `INSERT INTO webhook_endpoints (id, partner_id, url, secret, status)
        VALUES ($1, $2, $3, $4, 'enabled')`,
        [id, PARTNER, url, secret]
      )
    },
    close: () => pool.end()
  }
}

// ---------------------------------------------------------------------------------------
// Sending

/** The POST as the engine's sender makes it: a connection of its own, one time limit. */
const send = (c: Claimed): Promise<Attempt> => {
  const at = Date.now()
  const started = performance.now()
  const body = `{"id":${JSON.stringify(c.eventId)},"type":${JSON.stringify(c.type)},"createdAt":${JSON.stringify(
    new Date(c.createdAt).toISOString()
  )},"apiVersion":"${API_VERSION}","data":{"object":${c.data}}}`
  const timestamp = Math.floor(at / 1000)
  const key = Buffer.from(c.secret.slice("whsec_".length), "base64")
  const signature = createHmac("sha256", key)
    .update(`${c.eventId}.${timestamp}.${body}`)
    .digest("base64")
  const payload = Buffer.from(body, "utf8")
  const url = new URL(c.url)
  return new Promise((settle) => {
    let done = false
    const finish = (status: number | null, text: string | null, error: string | null) => {
      if (done) return
      done = true
      clearTimeout(timer)
      request.destroy()
      settle({
        at,
        durationMs: Math.round(performance.now() - started),
        status,
        body: text,
        error
      })
    }
    const request = http.request({
      host: url.hostname,
      port: Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      agent: false,
      headers: {
        "webhook-id": c.eventId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`,
        "content-type": "application/json",
        "user-agent": "pay-bench-baseline-webhooks",
        "content-length": String(payload.byteLength)
      }
    })
    const timer = setTimeout(() => finish(null, null, "timed out"), SEND_TIMEOUT_MS)
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      let received = 0
      response.on("data", (chunk: Buffer) => {
        if (received < MAX_RESPONSE_BYTES)
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - received))
        received += chunk.length
      })
      response.on("end", () => {
        const status = response.statusCode ?? null
        const ok = status !== null && status >= 200 && status < 300
        finish(status, Buffer.concat(chunks).toString("utf8"), ok ? null : `HTTP ${status}`)
      })
      response.on("error", (error) => finish(response.statusCode ?? null, null, error.message))
    })
    request.on("error", (error) => finish(null, null, error.message))
    request.end(payload)
  })
}

// ---------------------------------------------------------------------------------------
// The dispatcher and the routes

const database = env("BASELINE_DATABASE")
const store = /^postgres(ql)?:\/\//i.test(database)
  ? await postgresStore(database)
  : sqliteStore(database)

let inFlight = 0
let claiming = false
let again = false

/** Claims what is due, as long as there is room, and starts each one. */
const pump = async (): Promise<void> => {
  if (claiming) {
    again = true
    return
  }
  claiming = true
  try {
    do {
      again = false
      const room = PER_ENDPOINT - inFlight
      if (room <= 0) break
      const claimed = await store.claim(room, Date.now())
      for (const c of claimed) {
        inFlight++
        void send(c)
          .then((attempt) => store.record(c, attempt))
          .catch((error: unknown) => console.error(error))
          .finally(() => {
            inFlight--
            void pump()
          })
      }
    } while (again)
  } catch (error) {
    console.error(error)
  } finally {
    claiming = false
  }
}

const poll = setInterval(() => void pump(), POLL_MS)

const CANCEL_PATH = /^\/v1\/payments\/([^/]+)\/cancel$/

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const path = (req.url ?? "/").split("?")[0]!
  if (req.method === "GET" && path === "/health") return sendJson(res, 200, { status: "ok" })
  if (req.method !== "POST") return fail(res, 404, "not_found", "no such route")
  const cancelled = CANCEL_PATH.exec(path)
  if (cancelled !== null) {
    const key = header(req, "api-key")
    if (key === undefined) return fail(res, 401, "missing_api_key", "Api-Key is required")
    const paymentId = decodeURIComponent(cancelled[1]!)
    const outcome = await store.cancel(sha256(key), header(req, "merchant-id") ?? "", paymentId)
    if (outcome === "unauthorized") return fail(res, 401, "invalid_api_key", "refused")
    if (outcome === "invalid_state") return fail(res, 400, "invalid_state", "not cancellable")
    if (WAKE_ON_WRITE) void pump()
    return sendJson(res, 200, {
      paymentId,
      status: "cancelled",
      cancelledReason: "cancelled_by_merchant",
      cancelledAt: new Date().toISOString()
    })
  }
  if (path === "/setup/payments") {
    const { count } = JSON.parse(await readText(req)) as { count: number }
    const now = Date.now()
    const ids = Array.from({ length: count }, () => newId("pay", now))
    await store.seedPayments(ids, now)
    return sendJson(res, 201, { paymentIds: ids })
  }
  if (path === "/v1/webhook-endpoints") {
    const { url } = JSON.parse(await readText(req)) as { url: string }
    const id = newId("whep", Date.now())
    const secret = `whsec_${randomBytes(32).toString("base64")}`
    await store.addEndpoint(id, url, secret, Date.now())
    return sendJson(res, 201, { id, url, secret })
  }
  return fail(res, 404, "not_found", "no such route")
}

// Until SIGTERM or SIGINT; then the bench's kept-alive connections are closed too, so that
// it stops at once.
serveBaseline(
  handle,
  () => {
    clearInterval(poll)
    void store.close().finally(() => process.exit(0))
  },
  { closeConnections: true }
)
