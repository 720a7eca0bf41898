import { describe, expect, it } from "vitest"
import {
  closestSetting,
  editDistance,
  keyVariables,
  unknownSettingWarnings
} from "./unknownSettings.js"

describe("an unknown PAY_ variable", () => {
  it("is warned about, naming the closest setting when one is near", () => {
    expect(
      unknownSettingWarnings({
        PAY_DATABSE: "./x.sqlite",
        PAY_DATABASE: "./y.sqlite",
        PAY_NOTHING_LIKE_IT: "1",
        HOME: "/root",
        PAYDAY: "1"
      })
    ).toEqual([
      "warning: PAY_DATABSE is not a setting of this server; did you mean PAY_DATABASE?",
      "warning: PAY_NOTHING_LIKE_IT is not a setting of this server; the settings are in docs/configuration.md"
    ])
  })

  it("knows the variables PAY_CONFIG names for its collecting and deploying keys", () => {
    const named = keyVariables(
      JSON.stringify({
        networks: [
          { collectorKeyEnv: "PAY_BASE_KEY", deployerKeyEnv: "PAY_BASE_DEPLOYER" },
          { collectorKey: "0x", deployerKeyEnv: 7 }
        ]
      })
    )
    expect(named).toEqual(["PAY_BASE_KEY", "PAY_BASE_DEPLOYER"])
    expect(unknownSettingWarnings({ PAY_BASE_KEY: "0x", PAY_BASE_DEPLOYER: "0x" }, named)).toEqual(
      []
    )
    expect(keyVariables("not json")).toEqual([])
  })

  it("counts edits, a swap of neighbours as one", () => {
    expect(editDistance("PAY_DATABSE", "PAY_DATABASE")).toBe(1)
    expect(editDistance("PAY_PROT", "PAY_PORT")).toBe(1)
    expect(closestSetting("PAY_MAX_BODY_BYTE")).toBe("PAY_MAX_BODY_BYTES")
    expect(closestSetting("PAY_LOGLEVEL")).toBe("PAY_LOG_LEVEL")
    expect(closestSetting("PAY_X")).toBeUndefined()
  })
})
