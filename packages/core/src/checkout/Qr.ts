/**
 * The QR code of a payment's link, as inline SVG rendered on the server with
 * `qrcode` (node-qrcode: the most used QR encoder on npm, pure JavaScript, no
 * network, no canvas). Medium error correction and the standard quiet zone, so
 * phone cameras read it from a screen; dark modules on white in every theme.
 */
import { Effect } from "effect"
import QRCode from "qrcode"
import { escapeHtml } from "../shared/Html.js"

/** The SVG element, labelled for assistive technology. */
export const qrSvg = (text: string, label: string): Effect.Effect<string> =>
  Effect.promise(() =>
    QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 4 })
  ).pipe(
    Effect.map((svg) =>
      svg
        .replace(/^<svg /, `<svg role="img" aria-label="${escapeHtml(label)}" focusable="false" `)
        .trim()
    )
  )
