/**
 * The logo store on PostgreSQL: a logo's master (size 0) and sizes written in
 * one statement, each row kept once (the name is the content's hash, so a
 * second copy is the same bytes).
 */
import type { SqlClient } from "@effect/sql"
import { LogoStore } from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

/** The master's row. */
const MASTER = 0

/** node-postgres sends a Buffer as bytea; a plain Uint8Array is viewed as one without copying. */
const asBuffer = (bytes: Uint8Array) =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export const makePgLogoStore = (sql: SqlClient.SqlClient) =>
  LogoStore.of({
    put: (logo) => {
      const at = new Date()
      const rows = [
        [MASTER, logo.master] as const,
        ...[...logo.sizes].map(([size, bytes]) => [size, bytes] as const)
      ].map(([size, bytes]) => ({
        name: logo.name,
        size,
        content_type: logo.contentType,
        bytes: asBuffer(bytes),
        created_at: at
      }))
      return sql`INSERT INTO logos ${sql.insert(rows)} ON CONFLICT (name, size) DO NOTHING`.pipe(
        Effect.asVoid,
        orDieSql
      )
    },
    get: (name, size) =>
      // The size asked for when there is one, else the master (the larger size sorts first).
      sql<{ readonly content_type: string; readonly bytes: Uint8Array }>`SELECT content_type, bytes
        FROM logos WHERE name = ${name} AND size IN (${size ?? MASTER}, ${MASTER})
        ORDER BY size DESC LIMIT 1`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (r) => ({
            contentType: r.content_type,
            bytes: r.bytes
          }))
        ),
        orDieSql
      )
  })
