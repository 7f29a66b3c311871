// Package operation is the one table of the Table service's REST
// operations: their names, what authorizes each (the permissions of
// Azure's account SAS and service SAS tables, and the data role a bearer
// token needs), whether the read-only secondary serves it, the API Gateway
// routes it arrives on and the store methods it calls.
//
// The rest derives from it: shared/httpapi resolves a request to an
// Operation and logs its Name, shared/auth builds its permission rules from
// it, and shared/deploy gives each Lambda function the operations of its
// routes and the IAM actions of their store methods. Adding an operation is
// one entry here, plus its handler in shared/httpapi and, when it is a new
// URL or verb, its case in httpapi's resolveOperation.
package operation
