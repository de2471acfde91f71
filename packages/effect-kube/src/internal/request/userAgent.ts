/**
 * The package version, sent as the `User-Agent` so cluster admins can tell this client
 * apart in audit logs. Kept as a constant (not read from package.json at run time) so it
 * works the same from ESM, require(esm) and bundles; bump it with the package version.
 *
 * @internal
 */
export const version = "0.2.0"

/** @internal */
export const userAgent = `effect-kube/${version}`
