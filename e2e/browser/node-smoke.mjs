// node-smoke.mjs drives @azure/data-tables from Node.js, with the account
// key (SharedKey signing, which the browser build cannot do), against the
// endpoint in argv[2]. It prints one JSON line of what it observed; the Go
// test (node_sdk_test.go) asserts it.
import { TableClient, TableServiceClient, TableTransaction, odata } from "@azure/data-tables";

const connStr = process.argv[2];
const table = process.argv[3];
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const svc = TableServiceClient.fromConnectionString(connStr, opts);
const client = TableClient.fromConnectionString(connStr, table, opts);
const out = {};

await svc.createTable(table);
await client.createEntity({
  partitionKey: "p", rowKey: "r1", n: 42, s: "héllo 'q' 😀",
  big: { value: "9223372036854775807", type: "Int64" },
  when: new Date("2024-01-02T03:04:05.678Z"),
  bin: new Uint8Array([0, 1, 254, 255]),
});
const e = await client.getEntity("p", "r1");
out.get = { n: e.n, s: e.s, big: String(e.big), when: e.when instanceof Date ? e.when.toISOString() : String(e.when), bin: Array.from(e.bin ?? []), etag: e.etag };

await client.updateEntity({ partitionKey: "p", rowKey: "r1", extra: true }, "Merge", { etag: e.etag });
out.merged = (await client.getEntity("p", "r1")).extra === true && (await client.getEntity("p", "r1")).n === 42;
try {
  await client.updateEntity({ partitionKey: "p", rowKey: "r1", n: 1 }, "Replace", { etag: e.etag });
  out.staleETag = "accepted";
} catch (err) {
  out.staleETag = `${err.statusCode}`;
}

const tx = new TableTransaction();
for (let i = 0; i < 5; i++) tx.createEntity({ partitionKey: "p", rowKey: "b" + i, i });
const res = await client.submitTransaction(tx.actions);
out.batch = { status: res.status, parts: res.subResponses.length };

let matched = 0;
for await (const _ of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"p"} and i ge ${2}` } })) matched++;
out.query = matched;

try {
  await client.createEntity({ partitionKey: "p", rowKey: "r1" });
  out.duplicate = "accepted";
} catch (err) {
  out.duplicate = `${err.statusCode}`;
}

await client.deleteEntity("p", "r1");
await svc.deleteTable(table);
console.log(JSON.stringify(out));
