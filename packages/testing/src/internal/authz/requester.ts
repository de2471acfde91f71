/**
 * Who a request is from and what it asks: what the authorizer and the admission checks
 * of RBAC writes decide on.
 *
 * @internal
 */
import type { Attributes } from "./attributes.js"

/** Who a request is from, as the authenticator and impersonation make it. @internal */
export interface UserInfo {
  readonly username: string
  readonly uid?: string | undefined
  readonly groups: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/** Who sent a request and what it asked. @internal */
export interface Requester {
  readonly user: UserInfo
  readonly attributes: Attributes
}
