/**
 * The kubeconfig the harnesses read: a cluster with its CA in a file (none for plain HTTP) and
 * a user with a `tokenFile`, written into `dir`, so that each request pays the credentials
 * look-up a real kubeconfig costs.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** Writes the token, the CA and a kubeconfig naming them into `dir`; returns the kubeconfig's path. */
export const writeTokenFileKubeconfig = (dir: string, server: string, token: string, ca: string | undefined): string => {
  Fs.writeFileSync(Path.join(dir, "token"), token)
  if (ca !== undefined) Fs.writeFileSync(Path.join(dir, "ca.crt"), ca)
  const kubeconfig = Path.join(dir, "kubeconfig")
  Fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "bench",
      clusters: [{ name: "c", cluster: ca === undefined ? { server } : { server, "certificate-authority": "ca.crt" } }],
      users: [{ name: "u", user: { tokenFile: "token" } }],
      contexts: [{ name: "bench", context: { cluster: "c", user: "u", namespace: "default" } }]
    })
  )
  return kubeconfig
}
