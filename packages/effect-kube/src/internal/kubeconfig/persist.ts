/**
 * Writing renewed oidc tokens back to the kubeconfig file that defined the user, as
 * kubectl does, only when the caller asked for it (`persistOidcTokens`). The file is
 * edited as a YAML document, so comments, order and every other entry stay as they were.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Redacted from "effect/Redacted"
import * as Yaml from "yaml"
import type { Refreshed } from "./oidc.js"

/**
 * Sets `id-token` (and `refresh-token`, when the issuer rotated it) of the named user's
 * oidc config in `path`. A failure is logged (the file and user, never a token) and the
 * fresh tokens are still used: a read-only kubeconfig must not break the client.
 *
 * @internal
 */
export const oidcTokens = (
  fs: FileSystem.FileSystem,
  path: string,
  user: string
) =>
(tokens: Refreshed): Effect.Effect<void> =>
  Effect.gen(function*() {
    const text = yield* fs.readFileString(path)
    const doc = Yaml.parseDocument(text, { uniqueKeys: false })
    const users = doc.get("users")
    if (!Yaml.isSeq(users)) return yield* Effect.fail("no users list")
    const entry = users.items.find((item) => Yaml.isMap(item) && item.get("name") === user)
    if (!Yaml.isMap(entry)) return yield* Effect.fail("the user is gone")
    const config = ["user", "auth-provider", "config"]
    entry.setIn([...config, "id-token"], Redacted.value(tokens.idToken))
    if (tokens.refreshToken !== undefined) {
      entry.setIn([...config, "refresh-token"], Redacted.value(tokens.refreshToken))
    }
    yield* fs.writeFileString(path, doc.toString())
  }).pipe(
    Effect.catch(() =>
      Effect.logWarning(`effect-kube: could not write the renewed oidc tokens of user ${user} back to ${path}`)
    )
  )
