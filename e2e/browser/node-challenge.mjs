// node-challenge.mjs drives @azure/data-tables from Node.js with a
// TokenCredential against the HTTPS endpoint in argv[2], creating the
// table argv[3], and lets the SDK's own challenge handling sign it in
// (@azure/core-client authorizeRequestOnTenantChallenge, which
// TableClient installs for a TokenCredential). The credential holds two
// pre-signed tokens: argv[4], of the application's home tenant, for a
// request that names no tenant, and argv[6], for the tenant argv[5] only.
// The SDK first signs with the home tenant's token; the service, which
// takes tokens of argv[5] alone, refuses it with its challenge; the SDK
// reads the tenant and resource from it, asks for that tenant's token and
// sends the request again. It prints one JSON line: each request as the
// service answered it, and what the credential was asked for.
import { TableClient } from "@azure/data-tables";

const [endpoint, table, homeToken, tenant, tenantToken] = process.argv.slice(2);
const asked = [];
const credential = {
  getToken: async (scopes, options) => {
    asked.push({ tenant: options?.tenantId ?? "", scopes: [scopes].flat() });
    const token = options?.tenantId === tenant ? tenantToken : homeToken;
    return { token, expiresOnTimestamp: Date.now() + 3600e3 };
  },
};
const client = new TableClient(endpoint, table, credential, { retryOptions: { maxRetries: 0 } });
// After the Sign phase, so that it sees each attempt the bearer policy
// sends, with its Authorization header.
const requests = [];
client.pipeline.addPolicy({
  name: "requestLog",
  sendRequest: async (request, next) => {
    const response = await next(request);
    const authorization = request.headers.get("authorization");
    requests.push({
      method: request.method,
      path: new URL(request.url).pathname,
      authorization: authorization ? authorization.split(" ")[0] : "",
      status: response.status,
      code: response.headers.get("x-ms-error-code") ?? "",
      challenge: response.headers.get("www-authenticate") ?? "",
    });
    return response;
  },
}, { afterPhase: "Sign" });

await client.createTable();
console.log(JSON.stringify({ requests, asked }));
