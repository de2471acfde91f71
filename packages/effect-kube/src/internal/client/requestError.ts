/**
 * What a failed request can fail with: the one error union of the request path (`execute.ts`)
 * and the concerns it is split into.
 */
import type * as HttpClientError from "effect/http/HttpClientError"
import type {
  ApiError,
  KubeConfigError,
  LimitExceeded,
  RequestTimeout,
  ServerWarning,
  ValidationError
} from "../../Errors.js"

/** What a failed request can fail with. */
export type RequestError =
  | ApiError
  | HttpClientError.HttpClientError
  | KubeConfigError
  | ValidationError
  | RequestTimeout
  | ServerWarning
  | LimitExceeded
