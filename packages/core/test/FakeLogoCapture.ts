/**
 * A `LogoCapture` for unit tests of the core: no network, no image library.
 * A URL's logo is made from the URL and its current "image" (`setImage`), so a
 * test can change the image behind an unchanged URL; a URL listed in
 * `refuse` is refused with that code. Counts every capture.
 */
import { Effect, Layer } from "effect"
import { type FrozenLogo, LogoCapture, type LogoRefusalCode, LogoRefused } from "../src/index.js"

export const makeFakeLogoCapture = () => {
  const images = new Map<string, string>()
  const refusals = new Map<string, LogoRefusalCode>()
  const captured: Array<string> = []
  // A content-addressed name without node:crypto: eight seeded FNV-1a hashes.
  const nameOf = (text: string) =>
    Array.from({ length: 8 }, (_, seed) => {
      let h = (0x811c9dc5 ^ seed) >>> 0
      for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 16777619) >>> 0
      return h.toString(16).padStart(8, "0")
    }).join("")
  const service = LogoCapture.of({
    capture: (url) =>
      Effect.suspend(() => {
        captured.push(url)
        const refused = refusals.get(url)
        if (refused !== undefined) {
          return Effect.fail(new LogoRefused({ code: refused, message: `refused: ${refused}` }))
        }
        const image = images.get(url) ?? "default"
        const master = new TextEncoder().encode(`${url}#${image}`)
        return Effect.succeed<FrozenLogo>({
          name: `${nameOf(`${url}#${image}`)}.webp`,
          contentType: "image/webp",
          side: 1024,
          master,
          sizes: new Map([[64, master.slice(0, 8)]])
        })
      })
  })
  return {
    layer: Layer.succeed(LogoCapture, service),
    /** The URLs fetched, in order. */
    captured,
    setImage: (url: string, image: string) => images.set(url, image),
    /** Refuses the URL with that code from now on; `undefined` lets it through again. */
    refuse: (url: string, code: LogoRefusalCode | undefined) =>
      code === undefined ? refusals.delete(url) : refusals.set(url, code)
  }
}
