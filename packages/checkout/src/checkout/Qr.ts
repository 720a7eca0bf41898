/**
 * The QR code of a payment's link, as inline SVG rendered on the server with
 * `qrcode` (node-qrcode: the most used QR encoder on npm, pure JavaScript, no
 * network, no canvas). Medium error correction and the standard quiet zone, so
 * phone cameras read it from a screen; dark modules on white in every theme.
 *
 * Its encoder and SVG renderer are imported, not its main entry: that one also
 * loads the PNG and terminal renderers (`fs`, `pngjs`), which a page never
 * needs and a runtime without Node's modules does not have. Both are
 * synchronous, so the page renders without waiting.
 */
import { escapeHtml } from "@pay/core"
import { create } from "qrcode/lib/core/qrcode.js"
import { render } from "qrcode/lib/renderer/svg-tag.js"

/** The SVG element, labelled for assistive technology. */
export const qrSvg = (text: string, label: string): string =>
  render(create(text, { errorCorrectionLevel: "M" }), { margin: 4 })
    .replace(/^<svg /, `<svg role="img" aria-label="${escapeHtml(label)}" focusable="false" `)
    .trim()
