// Package stack builds the Table endpoint over a store in one call: the
// Table service (shared/tables) over the store, and the REST API handler
// (shared/httpapi) over the service. The local server (cmd/tablebridge
// serve), every Lambda function (shared/lambdafn, over its store guard)
// and tablebridgetest build it here, so they serve the same stack and
// each dependency is given once: the clock, for instance, dates the
// answers and the entities alike.
//
// It sits above both layers it joins: shared/httpapi knows the service,
// not the store (its TestLayering), and shared/tables knows nothing of
// HTTP. The layers are described in docs/design.md.
package stack
