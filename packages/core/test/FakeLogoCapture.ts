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
  const hex = (text: string) =>
    Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0"))
      .join("")
      .padEnd(64, "0")
      .slice(0, 64)
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
          name: `${hex(`${image}:${url}`.slice(-32))}.webp`,
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
    refuse: (url: string, code: LogoRefusalCode) => refusals.set(url, code)
  }
}
