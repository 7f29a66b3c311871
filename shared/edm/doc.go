// Package edm implements the eight Entity Data Model types of the Azure Table
// service (Edm.Binary, Edm.Boolean, Edm.DateTime, Edm.Double, Edm.Guid,
// Edm.Int32, Edm.Int64 and Edm.String) as typed values, their JSON wire form
// with "@odata.type" annotations, and the typed comparison rules $filter uses.
//
// It imports no other tablebridge package.
package edm
