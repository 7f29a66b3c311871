"""The Python SDK's challenge-based sign-in, driven by
TestPythonSDKChallenge (challenge_test.go).

Usage: challenge.py ACCOUNT_URL TABLE HOME_TOKEN TENANT TENANT_TOKEN

azure-data-tables signs a TokenCredential's requests with its own
BearerTokenChallengePolicy (azure/data/tables/_authentication.py). The
credential holds two pre-signed tokens: HOME_TOKEN, of the application's
home tenant, for a request that names no tenant, and TENANT_TOKEN, for
TENANT only. The SDK first signs with the home tenant's token; the service,
which takes tokens of TENANT alone, refuses it with its challenge; the SDK
reads the tenant and resource from it, asks for that tenant's token and
sends the request again. Prints one JSON line: each request as the
service answered it, and what the credential was asked for.
"""

import json
import sys
import time
import urllib.parse

from azure.core.credentials import AccessToken
from azure.data.tables import TableClient

account_url, table, home_token, tenant, tenant_token = sys.argv[1:6]
asked = []


class TwoTenantCredential:
    """A TokenCredential whose tokens were signed by the test's issuers."""

    def get_token(self, *scopes, tenant_id=None, **kwargs):
        asked.append({"tenant": tenant_id or "", "scopes": list(scopes)})
        token = tenant_token if tenant_id == tenant else home_token
        return AccessToken(token, int(time.time()) + 3600)


requests = []


def log_response(response):
    # raw_response_hook runs in the pipeline after the credential's
    # policy, so it sees each attempt with its Authorization header.
    request, answer = response.http_request, response.http_response
    authorization = request.headers.get("Authorization", "")
    requests.append({
        "method": request.method,
        "path": urllib.parse.urlparse(request.url).path,
        "authorization": authorization.split(" ")[0] if authorization else "",
        "status": answer.status_code,
        "code": answer.headers.get("x-ms-error-code", ""),
        "challenge": answer.headers.get("WWW-Authenticate", ""),
    })


client = TableClient(account_url, table, credential=TwoTenantCredential(),
                     raw_response_hook=log_response, retry_total=0)
client.create_table()
print(json.dumps({"requests": requests, "asked": asked}))
