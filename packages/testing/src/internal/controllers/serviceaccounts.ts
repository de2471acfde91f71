/**
 * What every active namespace gets from kube-controller-manager: the ServiceAccount
 * `default` (the serviceaccount controller) and the ConfigMap `kube-root-ca.crt` with
 * the cluster's CA (the root-ca-cert publisher), put back when deleted or changed.
 *
 * @internal
 */
import { isObject, type JsonObject } from "../store/json.js"
import type { FakeState } from "../store/state.js"
import { builtinKind, createObject, editObject, entriesOf, entryOf, isDeleting } from "./api.js"
import { WorkQueue } from "./queue.js"

const rootCaName = "kube-root-ca.crt"

const rootCaDescription = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal " +
  "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across " +
  "distributions of Kubernetes clusters."

/**
 * The CA of a fake served without TLS (or with a certificate and no CA): a self-signed
 * certificate of its own, so that the bundle is a real PEM certificate as clients expect.
 */
const fakeCa = `-----BEGIN CERTIFICATE-----
MIIBsjCCAVmgAwIBAgIUFR/V436vF+a/1LHkfc7XKhocnhUwCgYIKoZIzj0EAwIw
JjEkMCIGA1UEAwwbZWZmZWN0LWt1YmUtZmFrZS1jbHVzdGVyLWNhMCAXDTI2MTIw
MTEwMzcxOFoYDzIxMjYxMTA3MTAzNzE4WjAmMSQwIgYDVQQDDBtlZmZlY3Qta3Vi
ZS1mYWtlLWNsdXN0ZXItY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQh5HYK
xJfOcZeNkgXB3tZndGz8f8jyLslwReQ9+qFoZs3lIrEvTABhczAiMQmLt/BXqMXf
3Wbp5iRPFlT3VRnco2MwYTAdBgNVHQ4EFgQUDxETWVra7xsQ+j65XUCXtsHLqkMw
HwYDVR0jBBgwFoAUDxETWVra7xsQ+j65XUCXtsHLqkMwDwYDVR0TAQH/BAUwAwEB
/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwIDRwAwRAIgO7Zw+Js9kZ5qoe8b
kBUjhgwgrSakfle4jFIOevogRhACIHOwSMMWnkubgDpK51ck+6aNk14ArOClVFiv
xq63ZRbp
-----END CERTIFICATE-----
`

/** The cluster's CA bundle: the CA `serve` was given (or its certificate), else the fake's own. @internal */
export const clusterCa = (state: FakeState): string => {
  // `serve` hands its listen options (with `tls`) to the server with the rest
  const tls = (state.options as { readonly tls?: { readonly cert?: string; readonly ca?: string } }).tls
  const pem = tls?.ca ?? tls?.cert
  return pem === undefined ? fakeCa : pem.endsWith("\n") ? pem : `${pem}\n`
}

/** @internal */
export const installServiceAccounts = (
  state: FakeState,
  options: { readonly serviceAccount: boolean; readonly rootCa: boolean }
): void => {
  const nsKind = builtinKind(state, "", "v1", "namespaces")
  const saKind = builtinKind(state, "", "v1", "serviceaccounts")
  const cmKind = builtinKind(state, "", "v1", "configmaps")
  const queue = new WorkQueue(state, (namespace) => {
    const ns = entryOf(state, nsKind, "", namespace)
    if (ns === undefined || isDeleting(ns)) return
    if ((ns.obj.status as JsonObject | undefined)?.phase === "Terminating") return
    if (options.serviceAccount && entryOf(state, saKind, namespace, "default") === undefined) {
      const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } }
      createObject(state, saKind, account)
    }
    if (!options.rootCa) return
    const data = { "ca.crt": clusterCa(state) }
    const cm = entryOf(state, cmKind, namespace, rootCaName)
    if (cm === undefined) {
      createObject(state, cmKind, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: rootCaName, namespace, annotations: { "kubernetes.io/description": rootCaDescription } },
        data
      })
    } else if (JSON.stringify(cm.obj.data) !== JSON.stringify(data)) {
      editObject(state, cmKind, cm, (draft) => {
        draft.data = data
        const metadata = draft.metadata as JsonObject
        metadata.annotations = {
          ...(isObject(metadata.annotations) ? metadata.annotations : {}),
          "kubernetes.io/description": rootCaDescription
        }
      })
    }
  })
  const concerns = (group: string, plural: string, name: string): boolean =>
    group === "" &&
    ((plural === "serviceaccounts" && name === "default" && options.serviceAccount) ||
      (plural === "configmaps" && name === rootCaName && options.rootCa))
  state.onWrite((kind, entry) => {
    if (kind.group === "" && kind.plural === "namespaces") queue.add(entry.name)
    else if (concerns(kind.group, kind.plural, entry.name)) queue.add(entry.namespace)
  })
  state.onRemove((kind, removed) => {
    if (concerns(kind.group, kind.plural, removed.name)) queue.add(removed.namespace)
  })
  for (const ns of entriesOf(state, nsKind, undefined)) queue.add(ns.name)
}
