// node-large.mjs drives @azure/data-tables from Node.js against the
// endpoint of the connection string in argv[2] with requests past the
// 4 MiB a request may carry, as Azurite's table suite does ("Should not
// insert entities with request body greater than 4 MB" and "Should reject
// batches with request body larger than 4 MB",
// tests/table/apis/table.entity.azure.data-tables.test.ts): an entity of
// 4.5 MB and a transaction of 32 entities of 128 KiB, each argv[4] times,
// on the table argv[3]. It prints one JSON line of the answers it got; the
// Go test (node_large_test.go) asserts them.
import { TableClient, TableTransaction } from "@azure/data-tables";

const [connStr, table, rounds] = process.argv.slice(2);
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const client = TableClient.fromConnectionString(connStr, table, opts);
await client.createTable();

// The status, and the error code the message names (Azurite's test reads
// the message too).
const answer = (err) => `${err.statusCode ?? err.code} ${/RequestBodyTooLarge/.test(err.message) ? "RequestBodyTooLarge" : err.code}`;
const out = { entity: [], batch: [] };
const large = { partitionKey: "p", rowKey: "large" };
for (let i = 0; i < 140; i++) large["bigString" + i] = "x".repeat(32 * 1024);
for (let round = 0; round < Number(rounds); round++) {
  try {
    await client.createEntity(large);
    out.entity.push("accepted");
  } catch (err) {
    out.entity.push(answer(err));
  }
  const tx = new TableTransaction();
  for (let i = 0; i < 32; i++) {
    tx.createEntity({ partitionKey: "p", rowKey: "rk" + i, a: "a".repeat(32 * 1024), b: "b".repeat(32 * 1024),
      c: "c".repeat(32 * 1024), d: "d".repeat(32 * 1024) });
  }
  try {
    await client.submitTransaction(tx.actions);
    out.batch.push("accepted");
  } catch (err) {
    out.batch.push(answer(err));
  }
}
console.log(JSON.stringify(out));
