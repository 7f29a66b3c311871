// Package edm implements the eight Entity Data Model types of the Azure Table
// service (Edm.Binary, Edm.Boolean, Edm.DateTime, Edm.Double, Edm.Guid,
// Edm.Int32, Edm.Int64 and Edm.String) as typed values, their JSON wire form
// with "@odata.type" annotations, and the typed comparison rules $filter uses.
//
// The JSON code is hand-written for the one shape the service exchanges: a
// flat object of typed properties.
//   - DecodeObject scans a request body in two passes over the bytes, with no
//     reflection and no intermediate maps. It allocates only the names and
//     values it hands out.
//   - AppendProperty, AppendValue and AppendString append to a caller's
//     buffer.
//
// The reference is Azure's documented behaviour ("Payload format for Table
// service operations", "Understanding the Table service data model"). The
// emulator's is not. Where the two differ, or Azure is silent, the choice
// is written where it is made: Compare, DecodeObject, Annotated and
// ParseDateTime.
//
// It imports no other tablebridge package.
package edm
