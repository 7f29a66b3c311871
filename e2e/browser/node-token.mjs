// node-token.mjs drives @azure/data-tables from Node.js with a
// TokenCredential (Authorization: Bearer) against the HTTPS endpoint in
// argv[2], the token in argv[3] and a table name in argv[4]. It prints one
// JSON line of what it observed; node_token_test.go asserts it. Run with
// NODE_EXTRA_CA_CERTS naming the server's certificate.
import { TableClient, TableServiceClient } from "@azure/data-tables";

const [endpoint, token, table] = process.argv.slice(2);
const scopes = [];
const credential = {
  getToken: async (s) => {
    scopes.push(...[s].flat());
    return { token, expiresOnTimestamp: Date.now() + 3600e3 };
  },
};
const opts = { retryOptions: { maxRetries: 0 } };
const svc = new TableServiceClient(endpoint, credential, opts);
const client = new TableClient(endpoint, table, credential, opts);
const out = {};

await svc.createTable(table);
await client.createEntity({ partitionKey: "p", rowKey: "r", n: 42 });
out.n = (await client.getEntity("p", "r")).n;
try {
  await client.getAccessPolicy();
  out.acl = "accepted";
} catch (err) {
  out.acl = `${err.statusCode} ${err.code ?? err.response?.headers?.get("x-ms-error-code")}`;
}
out.scopes = scopes;
console.log(JSON.stringify(out));
