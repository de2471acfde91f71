/**
 * A link to the apiserver that the chaos cases can break: a network namespace of our own joined to the host by a
 * veth pair with addresses of a private /30 that exists only on that pair (10.203.x.1 on the host side, 10.203.x.2
 * inside), routed nowhere else. Inside, a forwarder on 10.203.x.2:6443 relays each connection to the host side's
 * forwarder (10.203.x.1), which relays it to the apiserver on 127.0.0.1: every byte between the client and the
 * apiserver crosses the veth, where it is dropped (the namespace's end set down: a dead connection, silent both ways)
 * or slowed (`tc netem`, where the kernel has it). Needs root and iproute2 (ip, tc); everything is removed at release.
 */
import { Effect } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const ip = (...args: Array<string>) => execFileSync("ip", args, { stdio: ["ignore", "pipe", "pipe"] }).toString()
const tc = (...args: Array<string>) => execFileSync("tc", args, { stdio: ["ignore", "pipe", "pipe"] }).toString()

/** Whether this machine can make the link (root, ip and tc with netem). */
export const available = (): boolean => {
  if (process.getuid?.() !== 0) return false
  try {
    ip("-V")
    tc("-V")
    return true
  } catch {
    return false
  }
}

export interface Link {
  /** `https://10.203.x.2:6443`: the apiserver through the namespace. */
  readonly server: string
  /** netem on both ends of the veth (`delay 50ms loss 1%` …), or none with undefined. Needs sch_netem in the kernel. */
  readonly impair: (netem: string | undefined) => void
  /**
   * Drops every packet both ways without a word (the namespace's end of the veth down: the host's side keeps its
   * address and route and sends into the void), or carries them again. Needs nothing but iproute2.
   */
  readonly drop: (on: boolean) => void
  /** The client's open TCP connections to `server`, by local port. */
  readonly connections: () => ReadonlyArray<number>
}

const relay = (listenHost: string, listenPort: number, toHost: string, toPort: number) => `
const net = require("node:net")
const server = net.createServer((c) => {
  const u = net.connect(${toPort}, "${toHost}")
  c.pipe(u); u.pipe(c)
  const end = () => { c.destroy(); u.destroy() }
  c.on("error", end); u.on("error", end); c.on("close", end); u.on("close", end)
})
server.listen(${listenPort}, "${listenHost}", () => console.log("listening"))
`

/** The link to the apiserver at `apiserver` (host:port on loopback), removed when the scope closes. */
export const make = (apiserver: URL) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const tag = crypto.randomBytes(2).toString("hex")
      const octet = 1 + (parseInt(tag, 16) % 250)
      const name = `ekchaos-${tag}`
      const host = `vek${tag}h`
      const peer = `vek${tag}p`
      const hostAddr = `10.203.${octet}.1`
      const nsAddr = `10.203.${octet}.2`
      ip("netns", "add", name)
      ip("link", "add", host, "type", "veth", "peer", "name", peer)
      ip("link", "set", peer, "netns", name)
      ip("addr", "add", `${hostAddr}/30`, "dev", host)
      ip("link", "set", host, "up")
      ip("netns", "exec", name, "ip", "addr", "add", `${nsAddr}/30`, "dev", peer)
      ip("netns", "exec", name, "ip", "link", "set", peer, "up")
      ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
      // the host side's relay, in this process; its sockets are kept to be destroyed at the end (below)
      const relayed = new Set<net.Socket>()
      const outer = net.createServer((c) => {
        const u = net.connect(Number(apiserver.port), apiserver.hostname)
        for (const s of [c, u]) {
          relayed.add(s)
          s.once("close", () => relayed.delete(s))
        }
        c.pipe(u)
        u.pipe(c)
        const end = () => {
          c.destroy()
          u.destroy()
        }
        c.on("error", end)
        u.on("error", end)
        c.on("close", end)
        u.on("close", end)
      })
      await new Promise<void>((resolve) => outer.listen(0, hostAddr, resolve))
      const outerPort = (outer.address() as net.AddressInfo).port
      // the inner relay, a node process in the namespace
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chaos-netns-"))
      const script = path.join(dir, "relay.cjs")
      fs.writeFileSync(script, relay(nsAddr, 6443, hostAddr, outerPort))
      const inner: ChildProcess = spawn("ip", ["netns", "exec", name, process.execPath, script], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      await new Promise<void>((resolve, reject) => {
        inner.stdout!.once("data", () => resolve())
        inner.once("exit", (code) => reject(new Error(`chaos: the relay in ${name} exited (${code})`)))
      })
      const impair = (netem: string | undefined) => {
        for (const [prefix, dev] of [[[], host], [["ip", "netns", "exec", name], peer]] as const) {
          const run = (...args: Array<string>) =>
            prefix.length === 0 ? tc(...args) : execFileSync(prefix[0]!, [...prefix.slice(1), "tc", ...args])
          try {
            run("qdisc", "del", "dev", dev, "root")
          } catch {
            // none yet
          }
          if (netem !== undefined) run("qdisc", "add", "dev", dev, "root", "netem", ...netem.split(" "))
        }
      }
      const connections = () =>
        execFileSync("ss", ["-Htn", "state", "established", "dst", `${nsAddr}:6443`]).toString()
          .split("\n").filter((l) => l.trim() !== "")
          .map((l) => Number(l.trim().split(/\s+/)[2]!.split(":").pop()))
      const release = () => {
        inner.kill("SIGKILL")
        outer.close()
        // a connection from the inner relay whose far end went with the namespace (its FIN or RST never crossed the
        // veth before it was deleted) would stay open here, and its twin to the apiserver with it, for ever. They are
        // this fixture's, not the client's; by our reading they were the 2 sockets the leak probe saw left once.
        for (const s of relayed) s.destroy()
        try {
          ip("link", "del", host)
        } catch {
          // gone with the namespace
        }
        ip("netns", "del", name)
        fs.rmSync(dir, { recursive: true, force: true })
      }
      const drop = (on: boolean) => void ip("netns", "exec", name, "ip", "link", "set", peer, on ? "down" : "up")
      return { link: { server: `https://${nsAddr}:6443`, impair, drop, connections } satisfies Link, release }
    }),
    ({ release }) => Effect.sync(release)
  ).pipe(Effect.map(({ link }) => link))
