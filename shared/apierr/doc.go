// Package apierr holds the Azure Table service error codes, spelled as on the
// wire, each with its HTTP status and default message in one table, and
// writes the error body: JSON odata.error for the JSON operations, XML
// <Error> for the XML ones (ACL, service properties and stats), plus the
// x-ms-error-code header.
//
// Codes and messages follow "Table service error codes" and "Common REST API
// error codes" in the Azure Storage REST reference.
package apierr
