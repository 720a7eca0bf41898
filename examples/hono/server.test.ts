/**
 * The Hono example (`engine.fetch` on @hono/node-server): the app's own page
 * and the engine under /pay side by side, a whole payment taken on the sandbox
 * chain through the mount.
 */
import { describeMountedShop } from "../embed-support.js"
import { startShop } from "./server.js"

describeMountedShop("the Hono example", startShop)
