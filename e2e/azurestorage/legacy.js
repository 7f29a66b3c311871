// legacy.js drives the legacy Node.js SDK, azure-storage 2.10.7, against a
// tablebridge serve: node legacy.js <connection string> <table prefix>.
// It prints one JSON object of what each step saw; azurestorage_test.go
// checks it. A step that fails records its HTTP status (or message) rather
// than stopping the run, so the Go test reports every difference at once.
'use strict';

const azure = require('azure-storage');

const [connStr, prefix] = process.argv.slice(2);
const svc = azure.createTableService(connStr);
const gen = azure.TableUtilities.entityGenerator;
const table = prefix + 'legacy';
const out = {};

// call turns a callback API into a promise of [error, result, response].
function call(fn, ...args) {
  return new Promise((resolve) => fn(...args, (err, result, response) => resolve([err, result, response])));
}

function status(err) {
  return err ? String(err.statusCode || err.message) : 'ok';
}

async function main() {
  let [err] = await call(svc.createTable.bind(svc), table);
  out.create = status(err);
  let [, exists] = await call(svc.doesTableExist.bind(svc), table);
  out.exists = exists && exists.exists;
  [, exists] = await call(svc.doesTableExist.bind(svc), prefix + 'missing');
  out.missingExists = exists && exists.exists;

  // Typed entity: every Edm type through the entity generator.
  const when = new Date(Date.UTC(1973, 9, 4, 0, 0, 0));
  const entity = {
    PartitionKey: gen.String('p'),
    RowKey: gen.String('typed'),
    Int32: gen.Int32(42),
    Int64: gen.Int64('9223372036854775807'),
    Double: gen.Double(1.5),
    Bool: gen.Boolean(true),
    When: gen.DateTime(when),
    Id: gen.Guid('c9da6455-213d-42c9-9a79-3e9149a57833'),
    Bin: gen.Binary(Buffer.from([0, 1, 254, 255])),
    Text: gen.String("héllo 'q'"),
  };
  let result;
  [err, result] = await call(svc.insertEntity.bind(svc), table, entity);
  out.insert = status(err);
  const etag = result && result['.metadata'] && result['.metadata'].etag;
  let got;
  [err, got] = await call(svc.retrieveEntity.bind(svc), table, 'p', 'typed');
  out.retrieve = status(err);
  if (got) {
    out.typed = {
      int32: got.Int32._, int32Type: got.Int32.$ || 'Edm.Int32',
      int64: got.Int64._, int64Type: got.Int64.$,
      double: got.Double._,
      bool: got.Bool._,
      when: got.When._ instanceof Date ? got.When._.toISOString() : String(got.When._), whenType: got.When.$,
      id: got.Id._, idType: got.Id.$,
      bin: got.Bin._ ? Array.from(got.Bin._) : null, binType: got.Bin.$,
      text: got.Text._,
      etagMatches: got['.metadata'].etag === etag,
    };
  }
  // Merge with the ETag, then a replace with the stale one is refused.
  [err] = await call(svc.mergeEntity.bind(svc), table, { PartitionKey: gen.String('p'), RowKey: gen.String('typed'), '.metadata': { etag }, Added: gen.String('yes') });
  out.merge = status(err);
  [err] = await call(svc.replaceEntity.bind(svc), table, { PartitionKey: gen.String('p'), RowKey: gen.String('typed'), '.metadata': { etag } });
  out.staleReplace = status(err);
  [err] = await call(svc.insertEntity.bind(svc), table, { PartitionKey: gen.String('p'), RowKey: gen.String('typed') });
  out.duplicate = status(err);

  // Batch: inserts, an insert-or-merge and a delete in one changeset.
  const batch = new azure.TableBatch();
  for (let i = 0; i < 3; i++) {
    batch.insertEntity({ PartitionKey: gen.String('b'), RowKey: gen.String('r' + i), N: gen.Int32(i) });
  }
  batch.insertOrMergeEntity({ PartitionKey: gen.String('b'), RowKey: gen.String('r3'), N: gen.Int32(3) });
  [err, result] = await call(svc.executeBatch.bind(svc), table, batch);
  out.batch = { status: status(err), parts: result ? result.length : 0, ok: result ? result.every((r) => !r.error) : false };
  const del = new azure.TableBatch();
  del.deleteEntity({ PartitionKey: gen.String('b'), RowKey: gen.String('r0') });
  del.mergeEntity({ PartitionKey: gen.String('b'), RowKey: gen.String('r1'), M: gen.String('m') });
  [err, result] = await call(svc.executeBatch.bind(svc), table, del);
  out.batch2 = { status: status(err), parts: result ? result.length : 0, ok: result ? result.every((r) => !r.error) : false };

  // Query continuation: pages of two over partition q's five entities.
  for (let i = 0; i < 5; i++) {
    await call(svc.insertEntity.bind(svc), table, { PartitionKey: gen.String('q'), RowKey: gen.String('r' + i) });
  }
  const query = new azure.TableQuery().where('PartitionKey eq ?', 'q').top(2);
  const pages = [];
  const rows = [];
  let token = null;
  do {
    [err, result] = await call(svc.queryEntities.bind(svc), table, query, token);
    if (err) {
      out.queryError = status(err);
      break;
    }
    pages.push(result.entries.length);
    result.entries.forEach((e) => rows.push(e.RowKey._));
    token = result.continuationToken;
  } while (token);
  out.query = { pages, rows };
  [err, result] = await call(svc.queryEntities.bind(svc), table, new azure.TableQuery().select('N').where('PartitionKey eq ?', 'b'), null);
  out.select = result ? result.entries.map((e) => (e.N ? e.N._ : null)) : status(err);

  // SAS: a read-only table SAS for partition q reads it and cannot write.
  const start = new Date(Date.now() - 5 * 60 * 1000);
  const expiry = new Date(Date.now() + 60 * 60 * 1000);
  const sas = svc.generateSharedAccessSignature(table, {
    AccessPolicy: { Permissions: azure.TableUtilities.SharedAccessPermissions.QUERY, Start: start, Expiry: expiry, StartPk: 'q', EndPk: 'q' },
  });
  const sasSvc = azure.createTableServiceWithSas(svc.host.primaryHost, sas);
  [err, result] = await call(sasSvc.queryEntities.bind(sasSvc), table, new azure.TableQuery().where('PartitionKey eq ?', 'q'), null);
  out.sasQuery = result ? result.entries.length : status(err);
  [err] = await call(sasSvc.insertEntity.bind(sasSvc), table, { PartitionKey: gen.String('q'), RowKey: gen.String('sas') });
  out.sasInsert = status(err);

  [err] = await call(svc.deleteTable.bind(svc), table);
  out.deleteTable = status(err);
  [err] = await call(svc.deleteTable.bind(svc), table);
  out.deleteMissing = status(err);
}

main().then(
  () => console.log(JSON.stringify(out)),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    console.log(JSON.stringify(out));
    process.exit(1);
  },
);
