/** The smoke flow on Deno: `deno run -A --sloppy-imports test/runtimes/deno.ts <kubeconfig> [other-url]`. */
import * as DenoKube from "../../packages/effect-kube/src/DenoKube.js"
import { main } from "./flow.js"

const [kubeconfig, other] = process.argv.slice(2)
main("deno", `deno ${process.versions["deno"]}`, DenoKube.layerFromFile({ path: kubeconfig }), other)
