// Package record is the compact binary encoding of the embedded stores'
// values: entities, catalog entries and service properties. The bolt store
// keeps these records on disk and the memory store keeps entity records in
// memory, so both read and write one format.
//
// Every record starts with a version byte. Keys are not part of an entity
// record (the stores keep them in their own keys). Every Edm value
// round-trips bit for bit: doubles as their IEEE bits (NaN payloads, ±Inf
// and -0 included), times as Unix seconds plus nanoseconds, which cover
// every time.Time exactly. An unknown version or a damaged record is
// reported as ErrCorrupt, never a panic.
//
// Decoding takes the record as a string: names and string values of the
// result are substrings of it, so decoding an entity allocates its map and
// its binary values only. A caller whose bytes may change (a bbolt page)
// converts them to a string once, which copies them.
package record
