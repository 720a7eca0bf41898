/**
 * Page cursors: opaque to clients (`nextCursor`), inside a versioned prefix and
 * a payload in base64url. One Schema codec for every list, so a cursor is made
 * and read by the same definition and a tampered one is simply not a cursor.
 */
import { Either, Encoding, ParseResult, Schema } from "effect"

/** `<prefix><base64url of the payload's text>` ⇄ the payload's text. */
const prefixedBase64Url = (prefix: string) =>
  Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (cursor, _, ast) => {
      const text = cursor.startsWith(prefix)
        ? Encoding.decodeBase64UrlString(cursor.slice(prefix.length))
        : Either.left(undefined)
      return Either.isRight(text)
        ? ParseResult.succeed(text.right)
        : ParseResult.fail(new ParseResult.Type(ast, cursor, "is not a cursor"))
    },
    encode: (text) => ParseResult.succeed(prefix + Encoding.encodeBase64Url(text))
  })

/** A cursor codec: `encode` makes the opaque string, `decode` reads it back or says it is none. */
export const cursorCodec = <A, I extends string>(prefix: string, payload: Schema.Schema<A, I>) => {
  // Not strict: a branded id's encoded side is a branded string, read from plain text here.
  const schema = Schema.compose(prefixedBase64Url(prefix), payload, { strict: false })
  const decode = Schema.decodeUnknownEither(schema)
  return {
    encode: Schema.encodeSync(schema),
    decode: (cursor: string): A | undefined => Either.getOrUndefined(decode(cursor))
  }
}

/**
 * Keyset paging: of `limit + 1` rows fetched, the page of `limit` and the
 * cursor after its last row, or null when the extra row says there is no more.
 */
export const keysetPage = <R>(
  fetched: ReadonlyArray<R>,
  limit: number,
  cursorAfter: (last: R) => string
): { readonly rows: ReadonlyArray<R>; readonly nextCursor: string | null } => {
  const rows = fetched.slice(0, limit)
  const last = rows.at(-1)
  return {
    rows,
    nextCursor: fetched.length > limit && last !== undefined ? cursorAfter(last) : null
  }
}
