// Package httpapi serves the Azure Table REST API over a tables.Service. It
// owns the URL grammar (Tables, Tables('t'), t(), t(PartitionKey='a',RowKey='b'),
// $batch, ?comp=acl, ?restype=service&comp=properties|stats), verb handling
// (PATCH, MERGE, and POST with X-HTTP-Method), authentication, the JSON
// metadata levels, continuation headers and CORS.
//
// Operations return a response value or an error; exactly one function
// (writeError) writes errors, and only internal errors are logged as errors;
// a request whose client went away is logged at info level.
//
// Query answers are bounded in bytes (Options.AnswerBudget, counted by
// Options.AnswerCost): a page whose answer would grow past the budget ends
// early with a continuation naming the last entity or table sent, so the
// next page starts at the first one not sent (answer_budget.go).
//
// The same http.Handler serves the local server (cmd/tablebridge serve) and
// every Lambda function (through package lambdafn).
package httpapi
