/**
 * The two modules of `qrcode` the checkout page uses (Qr.ts): its encoder and its SVG
 * renderer. `@types/qrcode` types only the package's main entry.
 */
declare module "qrcode/lib/core/qrcode.js" {
  import type { QRCode, QRCodeOptions } from "qrcode"
  export function create(text: string, options?: QRCodeOptions): QRCode
}

declare module "qrcode/lib/renderer/svg-tag.js" {
  import type { QRCode, QRCodeRenderersOptions } from "qrcode"
  export function render(qrData: QRCode, options?: QRCodeRenderersOptions): string
}
