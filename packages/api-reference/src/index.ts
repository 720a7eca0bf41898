/**
 * @pay/api-reference: the engine's API reference page at `/docs`, rendered in
 * the browser by Scalar's standalone bundle served from the engine itself. A
 * package of its own, so embedders who do not want the page do not install it.
 */
export * from "./ApiReferencePage.js"
export * from "./ApiReferenceRoutes.js"
export * from "./ScalarBundle.js"
