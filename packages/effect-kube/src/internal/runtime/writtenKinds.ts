/**
 * The generated kinds the controller runtime writes: coordination.k8s.io/v1 Leases for
 * leader election and events.k8s.io/v1 Events for the recorder.
 *
 * @internal
 */
export { type Lease, Leases } from "../../resources/generated.js"
export { EventEventsV1 as EventV1, EventsEventsV1 as EventsV1 } from "../../resources/generated.js"
