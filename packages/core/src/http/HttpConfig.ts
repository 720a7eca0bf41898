/**
 * The engine's place on the web: the public URL buyer links, data-collection
 * pages and logos are made from, the path requests arrive under, and the
 * largest body read. Decoding applies every default.
 */
import { Context, Schema } from "effect"
import { wholeNumber } from "../shared/WholeNumber.js"

/** Request bodies larger than this are refused with 413, unless `maxBodyBytes` says otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024

export const isHttpUrl = (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)

/** An absolute http(s) URL without query, fragment or credentials. */
export const PublicUrl = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (!isHttpUrl(s)) return false
      const url = new URL(s)
      return url.search === "" && url.hash === "" && url.username === "" && url.password === ""
    },
    {
      message: () =>
        "must be an absolute http:// or https:// URL without query, fragment or credentials, e.g. https://shop.example/pay"
    }
  )
)

/** "" or a path like `/pay`: "/"-led segments of URL path characters, no trailing "/". */
export const isBasePath = (s: string): boolean =>
  s === "" || /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(s)

const BasePath = Schema.String.pipe(
  Schema.filter(isBasePath, {
    message: () => 'must be "" or a path like /pay (starting with "/", no trailing "/")'
  })
)

export const HttpSettings = Schema.Struct({
  /**
   * The engine's full external URL, with the path it is mounted under
   * (`https://shop.example/pay`): buyer links are `{publicUrl}/pay_<id>`,
   * data-collection pages `{publicUrl}/collect/…`.
   */
  publicUrl: PublicUrl,
  /**
   * The path prefix requests reach the engine with. Default: `publicUrl`'s path
   * (`/pay` above). `""` when a proxy in front strips the prefix.
   */
  basePath: Schema.optional(BasePath),
  /** Request bodies larger than this are refused with 413. */
  maxBodyBytes: Schema.optionalWith(wholeNumber(1024, 100 * 1024 * 1024, "bytes"), {
    default: () => DEFAULT_MAX_BODY_BYTES
  })
})

/** The engine's HTTP settings as it runs with them: the URL without a trailing "/", the path decided. */
export interface HttpConfigShape {
  readonly publicUrl: string
  readonly basePath: string
  readonly maxBodyBytes: number
}

export class HttpConfig extends Context.Tag("@pay/core/HttpConfig")<
  HttpConfig,
  HttpConfigShape
>() {}

/**
 * The settings as the engine runs with them: `publicUrl` is kept without a
 * trailing "/" so links join with one, and `basePath` defaults to its path.
 */
export const httpConfigOf = (settings: typeof HttpSettings.Type): HttpConfigShape => {
  const publicUrl = settings.publicUrl.replace(/\/+$/, "")
  return {
    publicUrl,
    basePath: settings.basePath ?? new URL(publicUrl).pathname.replace(/\/+$/, ""),
    maxBodyBytes: settings.maxBodyBytes
  }
}
