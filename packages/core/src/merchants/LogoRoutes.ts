/**
 * `GET /logos/{name}` (`?size=64|128|256|512`): the engine's frozen copy of a
 * merchant logo, the URL every merchant view shows. The name is the content's
 * hash, so the bytes behind a URL never change: cached for a year, immutable,
 * never sniffed.
 */
import { Effect, Option } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import type { Reply } from "../http/Exchange.js"
import { RequestError } from "../http/RequestError.js"
import { publicRoute } from "../http/Route.js"
import { isLogoName, isLogoSize, LOGO_SIZES, LogoStore } from "./Logo.js"

const IMMUTABLE = "public, max-age=31536000, immutable"

export const logoRoutes = Effect.gen(function* () {
  const logos = yield* LogoStore
  return [
    publicRoute("GET", "/logos/:name", (exchange) =>
      Effect.gen(function* () {
        const name = exchange.pathParams.name ?? ""
        const sizeParam = exchange.query.get("size")
        const size = sizeParam === null ? undefined : Number(sizeParam)
        if (size !== undefined && !isLogoSize(size)) {
          return yield* RequestError.invalid(
            ApiErrors.InvalidParams,
            "size",
            `must be one of ${LOGO_SIZES.join(", ")}, or left out for the largest`
          )
        }
        const found = isLogoName(name) ? yield* logos.get(name, size) : Option.none()
        return yield* Option.match(found, {
          onNone: () => RequestError.of(ApiErrors.NotFound, "No such logo"),
          onSome: (image): Effect.Effect<Reply> =>
            Effect.succeed({
              status: 200,
              body: "",
              bytes: image.bytes,
              contentType: image.contentType,
              headers: { "cache-control": IMMUTABLE, "x-content-type-options": "nosniff" }
            })
        })
      })
    )
  ]
})
