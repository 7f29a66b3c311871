// Package deploy describes the AWS deployment that template.yaml declares:
// the Lambda functions (Functions), the API Gateway routes each receives
// and how a request is routed to one (RouteFor, RouteForProfile), the
// three ways clients reach them (Profile), and the DynamoDB IAM actions
// each function needs (Function.DynamoDBActions, PurgeActions).
//
// It derives all of it from shared/operation's table: a function serves
// the operations whose routes it receives, and may call the store methods
// of those operations. shared/lambdafn, the runtime, reads it to know what
// the running function may do; the tests in functions/ compare it with
// template.yaml, so the template grants each function exactly what this
// package says, no more.
//
// API Gateway path parameters are whole segments and literal path parts
// may not hold "(", "'" or "$", so GET /{account}/{resource} carries Query
// Entities, Get Entity, Get Table (Tables('t')) and Get Table ACL alike;
// such a group is one function, which tells them apart itself.
package deploy
