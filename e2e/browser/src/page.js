// page.js drives @azure/data-tables from a browser page against a
// tablebridge server on another origin, so every request goes through
// CORS. The Go test (browser_test.go) passes the endpoint, the table and a
// table SAS in the query string: the SDK's browser build has no Shared Key
// support, and a SAS is what browser apps are given.
//
// The outcome is written into #result as "PASS <json>" or "FAIL <reason>",
// which the test reads from Chromium's --dump-dom output.
import { AzureSASCredential, TableClient } from "@azure/data-tables";

const result = document.getElementById("result");

function check(cond, what) {
  if (!cond) {
    throw new Error(`check failed: ${what}`);
  }
}

async function run() {
  const params = new URLSearchParams(window.location.search);
  const endpoint = params.get("endpoint");
  const table = params.get("table");
  const sas = params.get("sas");
  check(endpoint && table && sas, "endpoint, table and sas are in the page URL");

  const client = new TableClient(endpoint, table, new AzureSASCredential(sas), {
    allowInsecureConnection: true, // the test server speaks plain HTTP on loopback
    retryOptions: { maxRetries: 0 },
  });

  // Insert, then read back: typed values must survive the round trip.
  const created = await client.createEntity({
    partitionKey: "browser",
    rowKey: "r1",
    Greeting: "hello from chromium",
    Count: 42,
    Big: { value: "9007199254740993", type: "Int64" },
    When: new Date("2024-05-06T07:08:09.123Z"),
  });
  check(created.etag, "createEntity returned an ETag (exposed through CORS)");
  const got = await client.getEntity("browser", "r1");
  check(got.Greeting === "hello from chromium", `Greeting read back: ${got.Greeting}`);
  check(got.Count === 42, `Count read back: ${got.Count}`);
  // Int64 comes back as a BigInt (the SDK converts types by default).
  check(got.Big === 9007199254740993n, `Int64 read back: ${String(got.Big)}`);
  check(got.etag === created.etag, `ETag of the read ${got.etag} is the insert's ${created.etag}`);

  // An entity group transaction: a multipart/mixed POST to $batch.
  await client.submitTransaction([
    ["upsert", { partitionKey: "browser", rowKey: "r2", Greeting: "batched" }, "Replace"],
    ["update", { partitionKey: "browser", rowKey: "r1", Count: 43 }, "Merge"],
  ]);

  // A query across the partition, read through the SDK's pager.
  const listed = [];
  for await (const e of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'browser'" } })) {
    listed.push(`${e.rowKey}:${e.Greeting}:${e.Count ?? ""}`);
  }
  check(listed.length === 2, `listed ${listed.length} entities`);

  // A refusal must reach the page as the service's error, which needs the
  // CORS headers on error responses too. The SDK leaves RestError.code
  // unset for Table errors ("odata.error" is not the "error" it looks
  // for), so the code is read from x-ms-error-code, which only an
  // Access-Control-Expose-Headers rule makes visible.
  let refused = "";
  try {
    await client.createEntity({ partitionKey: "browser", rowKey: "r1" });
  } catch (e) {
    refused = `${e.statusCode} ${e.response && e.response.headers.get("x-ms-error-code")}`;
  }
  check(refused === "409 EntityAlreadyExists", `duplicate insert answered ${refused}`);

  // A failed transaction: the SDK parses the embedded error itself.
  let batchRefused = "";
  try {
    await client.submitTransaction([
      ["create", { partitionKey: "browser", rowKey: "r3" }],
      ["create", { partitionKey: "browser", rowKey: "r2" }],
    ]);
  } catch (e) {
    batchRefused = `${e.statusCode} ${e.code} ${String(e.message).split("\n")[0]}`;
  }
  check(batchRefused.startsWith("409 EntityAlreadyExists 1:"), `failed transaction answered ${batchRefused}`);

  return { greeting: got.Greeting, count: got.Count, big: String(got.Big), listed, refused, batchRefused };
}

run().then(
  (summary) => {
    result.textContent = "PASS " + JSON.stringify(summary);
  },
  (err) => {
    const detail = err && err.statusCode ? ` (status ${err.statusCode}, code ${err.code})` : "";
    result.textContent = "FAIL " + String((err && err.message) || err) + detail;
  },
);
