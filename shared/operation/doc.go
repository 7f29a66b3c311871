// Package operation is the one table of the Table service's REST
// operations: their names, what authorizes each (the permissions of
// Azure's account SAS and service SAS tables, and the data role a bearer
// token needs), whether the read-only secondary serves it, how its
// requests look (path shape, method, restype and comp, If-Match) and the
// store methods it calls.
//
// The rest derives from it: shared/httpapi resolves a request to an
// Operation with Resolve and logs its Name, and resolves each operation of
// a $batch the same way (after EffectiveMethod, the X-HTTP-Method tunnel
// both follow), admitting the entity writes to a changeset and an entity
// read alone (WritesEntity, ReadsEntities); shared/tables takes the
// Operation of an entity write and says in one place what it does to the
// store; shared/auth builds its permission rules from it, and
// shared/deploy gives each Lambda function the operations of its API
// Gateway routes (Operation.Routes, derived from the request shape) and
// the IAM actions of their store methods. Adding an operation is one entry
// here plus its handler (CONTRIBUTING.md, "Adding an operation").
package operation
