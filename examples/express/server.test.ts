/**
 * The Express example: the app's own routes and the engine under /pay side by
 * side, a whole payment taken on the sandbox chain through the mount, and the
 * app's own body parser unharmed by the engine mounted before it.
 */
import { expect, it } from "vitest"
import { describeMountedShop } from "../embed-support.js"
import { startShop } from "./server.js"

describeMountedShop("the Express example", startShop, (running) => {
  it("leaves the app's own JSON routes to its body parser", async () => {
    const { base } = running()
    const order = await fetch(`${base}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ item: "coffee" })
    })
    expect(order.status).toBe(201)
    expect(await order.json()).toEqual({ order: { item: "coffee" } })
  })
})
