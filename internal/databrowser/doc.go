// Package databrowser is the data browser `tablebridge serve` shows at
// /_browser/, in the spirit of dynamodb-admin: a static page, embedded in
// the binary, that lists accounts and tables, pages through a table's
// entities with a $filter box and each property's Edm type, and edits,
// inserts and deletes entities and tables.
//
// The page has no API of its own: it calls the Table REST API of the same
// server with fetch, as any client does, authorized by an account SAS.
// Authorization: serve signs one account SAS per account with the
// account's key (ss=t, srt=sco, sp=rwdlacu, HTTPS only when serve speaks
// HTTPS) and prints a link that carries the tokens in the URL fragment:
//
//	http://127.0.0.1:10002/_browser/#devstoreaccount1=sv%3D...
//
// A fragment never leaves the browser (no request line, no Referer, no
// server log holds it), and the page moves the tokens to sessionStorage
// and drops them from the address bar. Nothing is authorized by where a
// request comes from: the static files are public and hold no secret, and
// every API call needs the SAS, so a page of another origin, a DNS
// rebinding of the server's name, or another user of the machine gets
// only what the REST API gives anyone without a key. Whoever has the link
// has the account until the SAS expires (Link's validity) or the key
// changes, which is what the connection string serve prints already gives.
package databrowser
