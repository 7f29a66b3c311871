"""The Python SDK scenario of e2e/python: azure-data-tables against a real
`tablebridge serve`, driven by TestPythonSDK (python_test.go).

Usage: scenario.py CONNECTION_STRING TABLE_PREFIX

Every step asserts what Azure answers; the first failed assertion or
unexpected exception exits non-zero with a traceback. On success the last
line printed is a JSON summary: the SDK versions and the steps run.
"""

import datetime
import json
import sys
import uuid

import azure.core
import azure.data.tables
from azure.core import MatchConditions
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import (HttpResponseError, ResourceExistsError,
                                   ResourceModifiedError, ResourceNotFoundError)
from azure.data.tables import (EdmType, EntityProperty, TableClient, TableCorsRule,
                               TableSasPermissions, TableServiceClient,
                               TableTransactionError, UpdateMode,
                               generate_table_sas)

STEPS = []


def step(name):
    STEPS.append(name)
    print("step:", name, file=sys.stderr)


def expect_error(exc_type, status, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        assert e.status_code == status, f"{fn.__name__}: status {e.status_code}, want {status}: {e}"
        return e
    raise AssertionError(f"{fn.__name__} succeeded, want {exc_type.__name__} {status}")


def main(conn_str, prefix):
    svc = TableServiceClient.from_connection_string(conn_str)
    name = prefix + "py"

    step("create table")
    svc.create_table(name)
    expect_error(ResourceExistsError, 409, svc.create_table, name)
    listed = [t.name for t in svc.query_tables("TableName eq @n", parameters={"n": name})]
    assert listed == [name], f"query_tables: {listed}"
    client = svc.get_table_client(name)

    step("insert all 8 Edm types")
    guid = uuid.UUID("0b7a1d3c-5f4e-4a2b-9c8d-7e6f5a4b3c2d")
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc)
    entity = {
        "PartitionKey": "p", "RowKey": "001",
        "S": "héllo 'q' 😀", "B": True, "I32": 42,
        "I64": EntityProperty(2**53 + 1, EdmType.INT64),
        "D": 1.5, "DInt": EntityProperty(3.0, EdmType.DOUBLE),
        "G": guid, "DT": when, "BIN": b"\x00\x01\xfe\xff",
    }
    meta = client.create_entity(entity)
    etag = meta["etag"]
    assert etag.startswith('W/"datetime\''), f"etag {etag}"
    expect_error(ResourceExistsError, 409, client.create_entity, entity)

    got = client.get_entity("p", "001")
    assert got["S"] == "héllo 'q' 😀" and got["B"] is True and got["I32"] == 42, got
    i64 = got["I64"]
    assert (i64.value if isinstance(i64, EntityProperty) else i64) == 2**53 + 1, f"I64 {i64!r}"
    assert got["D"] == 1.5, f"D {got['D']!r}"
    dint = got["DInt"]
    assert (dint.value if isinstance(dint, EntityProperty) else dint) == 3.0, f"DInt {dint!r}"
    assert got["G"] == guid, f"G {got['G']!r}"
    assert got["DT"] == when, f"DT {got['DT']!r}"
    assert bytes(got["BIN"]) == b"\x00\x01\xfe\xff", f"BIN {got['BIN']!r}"
    assert got.metadata["etag"] == etag

    step("replace and merge with ETags")
    replaced = client.update_entity({"PartitionKey": "p", "RowKey": "001", "S": "replaced", "I32": 7},
                                    mode=UpdateMode.REPLACE, etag=etag, match_condition=MatchConditions.IfNotModified)
    expect_error(ResourceModifiedError, 412, client.update_entity, {"PartitionKey": "p", "RowKey": "001", "S": "late"},
                 mode=UpdateMode.REPLACE, etag=etag, match_condition=MatchConditions.IfNotModified)
    client.update_entity({"PartitionKey": "p", "RowKey": "001", "Extra": "merged"},
                         mode=UpdateMode.MERGE, etag=replaced["etag"], match_condition=MatchConditions.IfNotModified)
    got = client.get_entity("p", "001")
    assert got["S"] == "replaced" and got["I32"] == 7 and got["Extra"] == "merged" and "B" not in got, dict(got)

    step("upsert")
    client.upsert_entity({"PartitionKey": "p", "RowKey": "002", "I32": 20}, mode=UpdateMode.REPLACE)
    client.upsert_entity({"PartitionKey": "p", "RowKey": "002", "More": True}, mode=UpdateMode.MERGE)
    got = client.get_entity("p", "002")
    assert got["I32"] == 20 and got["More"] is True, dict(got)
    expect_error(ResourceNotFoundError, 404, client.update_entity, {"PartitionKey": "p", "RowKey": "missing"}, mode=UpdateMode.MERGE)

    step("transaction")
    ops = [("create", {"PartitionKey": "p", "RowKey": f"1{i:02d}", "I32": i}) for i in range(10)]
    ops += [("upsert", {"PartitionKey": "p", "RowKey": "002", "I32": 21}, {"mode": "merge"}),
            ("update", {"PartitionKey": "p", "RowKey": "001", "I32": 8}, {"mode": "merge"})]
    results = client.submit_transaction(ops)
    assert len(results) == len(ops), results
    try:
        client.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "200"}),
                                   ("create", {"PartitionKey": "p", "RowKey": "100"})])
        raise AssertionError("a transaction creating an existing entity succeeded")
    except TableTransactionError as e:
        assert e.status_code == 409, e
    expect_error(ResourceNotFoundError, 404, client.get_entity, "p", "200")  # nothing applied

    step("query with filter, select and paging")
    pages = client.query_entities("PartitionKey eq @pk and I32 ge @n", parameters={"pk": "p", "n": 5},
                                  select=["RowKey", "I32"], results_per_page=3).by_page()
    rows, sizes = [], []
    for page in pages:
        items = list(page)
        sizes.append(len(items))
        rows += [(e["RowKey"], e["I32"]) for e in items]
        for e in items:
            assert set(e.keys()) <= {"RowKey", "I32"}, f"select returned {sorted(e.keys())}"
    assert rows == [("001", 8), ("002", 21)] + [(f"1{i:02d}", i) for i in range(5, 10)], rows
    assert sizes == [3, 3, 1], sizes
    assert len(list(client.query_entities("true"))) == 12  # a Boolean literal is a filter
    assert list(client.query_entities("false")) == []

    step("delete with ETags")
    current = client.get_entity("p", "002").metadata["etag"]
    expect_error(ResourceModifiedError, 412, client.delete_entity, "p", "002", etag=etag, match_condition=MatchConditions.IfNotModified)
    client.delete_entity("p", "002", etag=current, match_condition=MatchConditions.IfNotModified)
    expect_error(ResourceNotFoundError, 404, client.get_entity, "p", "002")

    step("table SAS")
    account, key = svc.credential.named_key
    sas = generate_table_sas(AzureNamedKeyCredential(account, key), name, permission=TableSasPermissions(read=True, add=True),
                             expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
    sas_client = TableClient(endpoint=svc.url.rstrip("/"), table_name=name, credential=AzureSasCredential(sas))
    assert sas_client.get_entity("p", "001")["I32"] == 8
    sas_client.create_entity({"PartitionKey": "p", "RowKey": "sas"})
    expect_error(HttpResponseError, 403, sas_client.delete_entity, "p", "sas")

    step("service properties and stats on the secondary")
    svc.set_service_properties(cors=[TableCorsRule(["https://app.example"], ["GET", "PUT"], max_age_in_seconds=60)])
    props = svc.get_service_properties()
    assert props["cors"][0].allowed_origins == ["https://app.example"], props
    svc.set_service_properties(cors=[])
    # The SDK sends Get Table Service Stats to the secondary location itself.
    stats = svc.get_service_stats()
    assert stats["geo_replication"]["status"] == "live", stats
    secondary = TableServiceClient(endpoint=svc.url.rstrip("/") + "-secondary", credential=AzureNamedKeyCredential(account, key))
    assert [e["RowKey"] for e in secondary.get_table_client(name).query_entities("RowKey eq '001'")] == ["001"]
    expect_error(HttpResponseError, 403, secondary.get_table_client(name).create_entity, {"PartitionKey": "p", "RowKey": "sec"})

    step("delete table")
    svc.delete_table(name)
    expect_error(ResourceNotFoundError, 404, client.get_entity, "p", "001")

    print(json.dumps({"azure-data-tables": azure.data.tables.__version__, "azure-core": azure.core.__version__,
                      "python": sys.version.split()[0], "steps": STEPS}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
