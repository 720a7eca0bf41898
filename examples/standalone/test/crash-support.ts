/**
 * Test support (not a test) for the crash suite on PostgreSQL (crash-postgres.e2e.test.ts):
 * a seeded random sequence, so a failing run's choices can be made again; a pair of server
 * processes on one database, one of which may be down while the other serves; the load that
 * runs through whichever of them is up, recording every answer it was given; and the points
 * at which a round kills an instance.
 */
import type { ChildProcess } from "node:child_process"
import { newKey } from "./e2e-support.js"
import { type Instance, startInstance } from "./instances-support.js"
import { cancel, createPaymentRequest, usd } from "./payments-support.js"
import { type HoldPredicate, type ReleaseMode, SELECTORS, sendsCallTo } from "./rpc-proxy.js"

/**
 * mulberry32: a small seeded generator of numbers in [0, 1). The suite draws every choice it
 * makes (when to kill, how many payments) from it, so the same seed makes the same choices.
 */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Two server processes on one database, each started again with its own environment (`envs`,
 * slot by slot). `kill` takes one down with SIGKILL (no shutdown, no lease let go), `restart`
 * starts it again on the same database (a new port); meanwhile `pick` hands out only the other.
 * Every process started is added to `spawned`.
 */
export class InstancePair {
  private readonly slots: [Instance, Instance]
  private readonly up = [true, true]
  private turn = 0
  private readonly starts = [1, 1]
  /** Every process the pair ran, the killed ones too, for their logs. */
  readonly everyInstance: Array<Instance>

  constructor(
    first: Instance,
    second: Instance,
    private readonly envs: readonly [NodeJS.ProcessEnv, NodeJS.ProcessEnv],
    private readonly spawned: Array<ChildProcess>
  ) {
    this.slots = [first, second]
    this.everyInstance = [first, second]
  }

  /** The log lines of every process the pair ran that name `id`, each with its process's name. */
  linesAbout(id: string): Array<string> {
    return this.everyInstance.flatMap((instance) =>
      instance
        .output()
        .split("\n")
        .filter((line) => line.includes(id))
        .map((line) => `${instance.name} ${line}`)
    )
  }

  /** The instance in `slot` (0 or 1), up or not. */
  at(slot: number): Instance {
    return this.slots[slot]!
  }

  /** One of the instances up, in turn. */
  pick(): Instance {
    this.turn++
    const slot = this.up[this.turn % 2] ? this.turn % 2 : (this.turn + 1) % 2
    return this.slots[slot]!
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(slot: number): Promise<void> {
    this.up[slot] = false
    const instance = this.slots[slot]!
    instance.child.kill("SIGKILL")
    await instance.exited
  }

  /** Starts `slot` again on the same database; handed out again once its banner is printed. */
  async restart(slot: number): Promise<Instance> {
    const name = `${slot === 0 ? "A" : "B"}${++this.starts[slot]!}`
    const instance = await startInstance(name, this.envs[slot]!, this.spawned)
    this.slots[slot] = instance
    this.everyInstance.push(instance)
    this.up[slot] = true
    return instance
  }
}

/** The load's record of what it was answered. */
export interface LoadRecord {
  /** Payments answered 201, in the order the answers came. */
  readonly acknowledged: Array<string>
  /** Payments whose cancel was answered 200. */
  readonly cancelled: Array<string>
  /** Requests whose connection died with a killed instance: not acknowledged, not refused. */
  cutOff: number
  /** Any other answer (a 4xx or 5xx), with the request: none is expected. */
  readonly refused: Array<string>
}

export interface Load extends LoadRecord {
  /**
   * Cancels `count` of the latest acknowledged payments not cancelled yet, through whichever
   * instances are up (each a `payment.cancelled` event); resolves once every cancel has its
   * answer or its error.
   */
  readonly cancelSome: (count: number) => Promise<void>
  /** Stops the creates; resolves once every worker's last request has ended. */
  readonly stop: () => Promise<void>
}

/**
 * `workers` loops creating payments for `merchantId` one after another, each through the
 * instance `pair.pick()` hands out, at most `perWorker` each, pausing `pauseMs` between two
 * (a bound on the rate, not a wait for anything: on a fast machine a loop without it would
 * take every core from the instance starting again); every answer recorded.
 */
export const startLoad = (
  pair: InstancePair,
  merchantId: string,
  {
    workers,
    perWorker,
    pauseMs
  }: { readonly workers: number; readonly perWorker: number; readonly pauseMs: number }
): Load => {
  const record: LoadRecord = { acknowledged: [], cancelled: [], cutOff: 0, refused: [] }
  let stopped = false
  const worker = async (w: number) => {
    for (let i = 0; !stopped && i < perWorker; i++) {
      const instance = pair.pick()
      try {
        const created = await createPaymentRequest(
          instance.api,
          { referenceId: `crash-${w}-${i}`, amount: usd("1050") },
          { merchantId, idempotencyKey: newKey() }
        )
        if (created.status === 201) record.acknowledged.push(created.body.paymentId)
        else record.refused.push(`create on ${instance.name}: ${created.status} ${created.text}`)
      } catch {
        // The instance was killed with the request in flight: no answer, nothing acknowledged.
        record.cutOff++
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }
  const running = Array.from({ length: workers }, (_, w) => worker(w))
  const toCancel = new Set<string>()
  const cancelSome = async (count: number) => {
    const picked: Array<string> = []
    for (let i = record.acknowledged.length - 1; i >= 0 && picked.length < count; i--) {
      const id = record.acknowledged[i]!
      if (toCancel.has(id)) continue
      toCancel.add(id)
      picked.push(id)
    }
    await Promise.all(
      picked.map(async (id) => {
        const instance = pair.pick()
        try {
          const answer = await cancel(instance.api, id, merchantId)
          if (answer.status === 200) record.cancelled.push(id)
          else record.refused.push(`cancel on ${instance.name}: ${answer.status} ${answer.text}`)
        } catch {
          record.cutOff++
        }
      })
    )
  }
  return Object.assign(record, {
    cancelSome,
    stop: async () => {
      stopped = true
      await Promise.all(running)
    }
  })
}

/**
 * Where a round's victim dies. Three are calls of its chain work held at its own RPC proxy
 * until it is dead, then let go as `release` says: the collect's first call (its gas estimate,
 * before anything is signed), the collect's transaction, the settlement's transaction. Two are
 * free moments: just after the round's confirms were answered (and the other instance is up
 * again), or after a drawn number of further creates were acknowledged.
 */
export const KILL_POINTS = ["estimate", "collect", "settle", "confirmed", "creates"] as const
export type KillPoint = (typeof KILL_POINTS)[number]

/** The held chain call of each held kill point. */
export const HELD_CALLS: Partial<Record<KillPoint, HoldPredicate>> = {
  estimate: (call) => call.method === "eth_estimateGas",
  collect: sendsCallTo([SELECTORS.receiveWithAuthorization]),
  settle: sendsCallTo([SELECTORS.transfer])
}

/**
 * How held calls are let go once their sender is dead: never sent, or sent with the answer
 * lost (the transaction on chain, its sender never told). A gas estimate is only dropped or
 * forwarded; either way nothing was signed.
 */
export const releaseModes = (point: KillPoint): ReadonlyArray<ReleaseMode> =>
  point === "estimate" ? ["drop", "forward"] : ["drop", "forward", "forward-then-drop"]

/** One of `choices`, drawn from `random`. */
export const draw = <A>(random: () => number, choices: ReadonlyArray<A>): A =>
  choices[Math.floor(random() * choices.length)]!
