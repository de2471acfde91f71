/** The smoke flow on Bun: `bun test/runtimes/bun.ts <kubeconfig> [other-url]`. */
import * as BunKube from "../../packages/effect-kube/src/BunKube.js"
import { main } from "./flow.js"

const [kubeconfig, other] = process.argv.slice(2)
main("bun", `bun ${process.versions["bun"]}`, BunKube.layerFromFile({ path: kubeconfig }), other)
