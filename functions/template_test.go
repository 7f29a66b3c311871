package functions_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// node helpers over yaml.v3 nodes: CloudFormation's short tags (!Ref,
// !Sub, !GetAtt) stay on the nodes as Tag, so decoding into yaml.Node
// keeps them instead of failing on unknown tags.

func loadTemplate(t testing.TB) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		t.Fatal("template.yaml is not one YAML document")
	}
	return doc.Content[0]
}

// get follows mapping keys; nil when a key is missing.
func get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

func str(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// tagged reports a CloudFormation intrinsic: "!Ref TableApi" and the like.
func tagged(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	if n.Tag == "!!str" || n.Tag == "" {
		return n.Value
	}
	return n.Tag + " " + n.Value
}

// scalars returns a scalar or a sequence of scalars as a list.
func scalars(n *yaml.Node) []string {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.ScalarNode:
		return []string{tagged(n)}
	case n.Kind == yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			out = append(out, tagged(c))
		}
		return out
	}
	return nil
}

func mappingKeys(n *yaml.Node) []string {
	var out []string
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// resourcesOfType maps logical IDs to resources of one type.
func resourcesOfType(tpl *yaml.Node, typ string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	res := get(tpl, "Resources")
	for _, id := range mappingKeys(res) {
		r := get(res, id)
		if str(get(r, "Type")) == typ {
			out[id] = r
		}
	}
	return out
}

const (
	catalogARN = "!GetAtt CatalogTable.Arn"
	tablesARN  = "!Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TablePrefix}${AccountName}.*"
	// The shared layout's table and its order index.
	sharedARN      = "!GetAtt EntityTable.Arn"
	sharedIndexARN = "!Sub ${EntityTable.Arn}/index/*"
	secretRef      = "!Ref AccountKeysSecret"
)

func TestTemplateFunctions(t *testing.T) {
	tpl := loadTemplate(t)
	if got := str(get(tpl, "Transform")); got != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform = %q", got)
	}
	globals := get(tpl, "Globals", "Function")
	setting := func(fn *yaml.Node, key string) *yaml.Node {
		if v := get(fn, "Properties", key); v != nil {
			return v
		}
		return get(globals, key)
	}
	fns := resourcesOfType(tpl, "AWS::Serverless::Function")
	var ids []string
	for id := range fns {
		if id != purgeFunctionID { // no API route: TestTemplatePurgeFunction
			ids = append(ids, id)
		}
	}
	var want []string
	for _, f := range deploy.Functions() {
		want = append(want, f.LogicalID)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("template functions %v, want lambdafn's %v", ids, want)
	}

	for _, f := range deploy.Functions() {
		t.Run(f.Name, func(t *testing.T) {
			r := fns[f.LogicalID]
			if got := str(setting(r, "Runtime")); got != "provided.al2023" {
				t.Errorf("Runtime = %q", got)
			}
			if got := scalars(setting(r, "Architectures")); !slices.Equal(got, []string{"arm64"}) {
				t.Errorf("Architectures = %v", got)
			}
			if got := str(setting(r, "Handler")); got != "bootstrap" {
				t.Errorf("Handler = %q", got)
			}

			// CodeUri is make build's output for the function, built from
			// functions/<name>, whose main hands over to lambdafn.Main.
			if got := str(get(r, "Properties", "CodeUri")); got != "build/"+f.Name {
				t.Errorf("CodeUri = %q, want build/%s (make build writes build/<function>/bootstrap)", got, f.Name)
			}
			main, err := os.ReadFile(filepath.Join(f.Name, "main.go"))
			if err != nil {
				t.Fatalf("the CodeUri's source: %v", err)
			}
			if !strings.Contains(string(main), `lambdafn.Main("`+f.Name+`")`) {
				t.Errorf("functions/%s/main.go does not run lambdafn.Main(%q)", f.Name, f.Name)
			}

			if f.CatchAll {
				// Every operation, for the Function URL and the HTTP API's
				// $default route, deployed only in those profiles.
				if str(get(r, "Condition")) != "NeedsCatchAll" {
					t.Errorf("%s: want Condition NeedsCatchAll", f.LogicalID)
				}
			}
			events := get(r, "Properties", "Events")
			var routes []string
			for _, name := range mappingKeys(events) {
				ev := get(events, name)
				if str(get(ev, "Type")) != "Api" {
					t.Errorf("event %s is %q, want Api (a REST API: payload format 1.0)", name, str(get(ev, "Type")))
				}
				if got := tagged(get(ev, "Properties", "RestApiId")); got != "!Ref TableApi" {
					t.Errorf("event %s RestApiId = %q", name, got)
				}
				routes = append(routes, strings.ToUpper(str(get(ev, "Properties", "Method")))+" "+str(get(ev, "Properties", "Path")))
			}
			var wantRoutes []string
			for _, rt := range f.Routes {
				wantRoutes = append(wantRoutes, rt.String())
			}
			slices.Sort(routes)
			slices.Sort(wantRoutes)
			if !slices.Equal(routes, wantRoutes) {
				t.Errorf("routes %v, want %v", routes, wantRoutes)
			}

			checkPolicy(t, f, get(r, "Properties", "Policies"))
		})
	}
}

// checkPolicy: only inline statements (no SAM policy templates, whose
// actions the test cannot see), no wildcard action, and exactly the
// DynamoDB actions the function's operations need, on the catalog table
// and on the account's tables, plus reading the keys secret.
func checkPolicy(t *testing.T, f deploy.Function, policies *yaml.Node) {
	t.Helper()
	if policies == nil || policies.Kind != yaml.SequenceNode {
		t.Fatal("no Policies list")
	}
	got := map[string][]string{}
	for _, p := range policies.Content {
		if p.Tag == "!If" && len(p.Content) == 3 && p.Content[0].Value == "HasKmsKey" {
			// The customer managed key, for the functions that create
			// tables, only when the parameter names one.
			if !slices.Contains(f.StoreMethods(), operation.StoreCreateTable) {
				t.Errorf("%s gets the tables' KMS key but creates no table", f.Name)
			}
			st := get(p.Content[1], "Statement").Content[0]
			if a := scalars(get(st, "Action")); !slices.Equal(a, []string{"kms:CreateGrant", "kms:DescribeKey"}) || tagged(get(st, "Resource")) != "!Ref TablesCmkArn" {
				t.Errorf("KMS statement %v on %s", a, tagged(get(st, "Resource")))
			}
			continue
		}
		stmts := get(p, "Statement")
		if stmts == nil {
			t.Errorf("policy %v is not an inline Statement list", mappingKeys(p))
			continue
		}
		for _, st := range stmts.Content {
			if str(get(st, "Effect")) != "Allow" {
				t.Errorf("statement %s: Effect %q", str(get(st, "Sid")), str(get(st, "Effect")))
			}
			actions := scalars(get(st, "Action"))
			for _, a := range actions {
				if strings.Contains(a, "*") {
					t.Errorf("wildcard action %q", a)
				}
			}
			where := ""
			if cond := get(st, "Condition"); cond != nil {
				// The one condition: the catalog's copies of table entries.
				keys := scalars(get(cond, "ForAllValues:StringLike", "dynamodb:LeadingKeys"))
				if len(mappingKeys(cond)) != 1 || !slices.Equal(keys, []string{deploy.CatalogCopyKeys}) {
					t.Errorf("statement %s: Condition %v, want ForAllValues:StringLike dynamodb:LeadingKeys [%s]", str(get(st, "Sid")), mappingKeys(cond), deploy.CatalogCopyKeys)
				}
				where = " where LeadingKeys " + deploy.CatalogCopyKeys
			}
			for _, res := range scalars(get(st, "Resource")) {
				got[res+where] = append(got[res+where], actions...)
			}
		}
	}
	catalog, data := f.DynamoDBActions()
	want := map[string][]string{catalogARN: catalog, secretRef: {"secretsmanager:GetSecretValue"}}
	if copies := f.CatalogCopyActions(); len(copies) > 0 {
		want[catalogARN+" where LeadingKeys "+deploy.CatalogCopyKeys] = copies
	}
	if len(data) > 0 {
		want[tablesARN] = data
	}
	if table, index := f.SharedTableActions(); len(table) > 0 {
		want[sharedARN] = table
		if len(index) > 0 {
			want[sharedIndexARN] = index
		}
	}
	for res, actions := range got {
		slices.Sort(actions)
		if !slices.Equal(actions, want[res]) {
			t.Errorf("on %s: actions %v, want %v", res, actions, want[res])
		}
	}
	for res := range want {
		if _, ok := got[res]; !ok {
			t.Errorf("no statement on %s", res)
		}
	}
}

// TestTemplateRoutesEveryOperation: every REST operation, as a client
// sends it, reaches through the template's routes a function that serves
// it. Routing follows API Gateway: literal parts before {parameters}, one
// trailing slash ignored, a declared method before ANY.
func TestTemplateRoutesEveryOperation(t *testing.T) {
	tpl := loadTemplate(t)
	type route struct{ method, path, fn string }
	var routes []route
	for id, r := range resourcesOfType(tpl, "AWS::Serverless::Function") {
		events := get(r, "Properties", "Events")
		for _, name := range mappingKeys(events) {
			p := get(events, name, "Properties")
			routes = append(routes, route{strings.ToUpper(str(get(p, "Method"))), str(get(p, "Path")), id})
		}
	}
	match := func(tmpl, path string) (literal int, ok bool) {
		ts := strings.Split(strings.Trim(tmpl, "/"), "/")
		ps := strings.Split(strings.Trim(path, "/"), "/")
		if len(ts) != len(ps) {
			return 0, false
		}
		for i := range ts {
			switch {
			case strings.HasPrefix(ts[i], "{"):
			case ts[i] == ps[i]:
				literal++
			default:
				return 0, false
			}
		}
		return literal, true
	}
	resolve := func(method, path string) string {
		bestLiteral, best, bestAny := -1, "", ""
		for _, r := range routes {
			lit, ok := match(r.path, path)
			if !ok || lit < bestLiteral {
				continue
			}
			if lit > bestLiteral {
				bestLiteral, best, bestAny = lit, "", ""
			}
			switch r.method {
			case method:
				best = r.fn
			case operation.MethodAny:
				bestAny = r.fn
			}
		}
		if best != "" {
			return best
		}
		return bestAny
	}
	const (
		acct   = "/myaccount"
		entity = acct + "/t(PartitionKey='a',RowKey='b')"
	)
	ops := []struct {
		op           operation.Operation
		method, path string
	}{
		{operation.QueryTables, http.MethodGet, acct + "/Tables"},
		{operation.CreateTable, http.MethodPost, acct + "/Tables"},
		{operation.GetTable, http.MethodGet, acct + "/Tables('t')"},
		{operation.DeleteTable, http.MethodDelete, acct + "/Tables('t')"},
		{operation.QueryEntities, http.MethodGet, acct + "/t()"},
		{operation.GetEntity, http.MethodGet, entity},
		{operation.InsertEntity, http.MethodPost, acct + "/t"},
		{operation.UpdateEntity, http.MethodPut, entity},
		{operation.InsertOrReplaceEntity, http.MethodPut, entity},
		{operation.MergeEntity, http.MethodPatch, entity},
		{operation.InsertOrMergeEntity, http.MethodPatch, entity},
		{operation.MergeEntity, http.MethodPost, entity}, // X-HTTP-Method: MERGE
		{operation.MergeEntity, "MERGE", entity},         // if API Gateway passes it to ANY
		{operation.DeleteEntity, http.MethodDelete, entity},
		{operation.DeleteEntity, http.MethodPost, entity}, // X-HTTP-Method: DELETE
		{operation.EntityGroupTransaction, http.MethodPost, acct + "/$batch"},
		{operation.GetTableACL, http.MethodGet, acct + "/t"},
		{operation.GetTableACL, http.MethodHead, acct + "/t"},
		{operation.SetTableACL, http.MethodPut, acct + "/t"},
		{operation.GetServiceProperties, http.MethodGet, acct + "/"},
		{operation.SetServiceProperties, http.MethodPut, acct + "/"},
		{operation.GetServiceStats, http.MethodGet, acct + "/"},
		{operation.Preflight, http.MethodOptions, acct + "/"},
		{operation.Preflight, http.MethodOptions, acct + "/Tables"},
		{operation.Preflight, http.MethodOptions, acct + "/t()"},
	}
	byID := map[string]deploy.Function{}
	for _, f := range deploy.Functions() {
		byID[f.LogicalID] = f
	}
	for _, tc := range ops {
		t.Run(tc.op.String()+" "+tc.method+" "+tc.path, func(t *testing.T) {
			id := resolve(tc.method, tc.path)
			if id == "" {
				t.Fatal("no route")
			}
			if f := byID[id]; !f.Serves(tc.op) {
				t.Errorf("routed to %s, which does not serve %s", id, tc.op)
			}
		})
	}
}

func TestTemplateResources(t *testing.T) {
	tpl := loadTemplate(t)
	for _, p := range []string{"Stage", "TablePrefix", "AccountName"} {
		if get(tpl, "Parameters", p) == nil {
			t.Errorf("no parameter %s", p)
		}
	}
	for _, p := range mappingKeys(get(tpl, "Parameters")) {
		if strings.Contains(strings.ToLower(p), "key") || strings.Contains(strings.ToLower(p), "secret") {
			t.Errorf("parameter %s: keys never travel as parameters", p)
		}
	}
	for _, o := range []string{"TableEndpoint", "ConnectionStringTemplate"} {
		if get(tpl, "Outputs", o, "Value") == nil {
			t.Errorf("no output %s", o)
		}
	}
	if cs := str(get(tpl, "Outputs", "ConnectionStringTemplate", "Value")); !strings.Contains(cs, "AccountName=${AccountName};AccountKey=") ||
		!strings.Contains(cs, "TableEndpoint=https://${TableApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/${Stage}/${AccountName}") {
		t.Errorf("connection string template %q", cs)
	}

	apis := resourcesOfType(tpl, "AWS::Serverless::Api")
	api := apis["TableApi"]
	if len(apis) != 1 || api == nil {
		t.Fatalf("want one AWS::Serverless::Api TableApi (a REST API, payload 1.0), got %v", mappingKeys(get(tpl, "Resources")))
	}
	if len(resourcesOfType(tpl, "AWS::Serverless::HttpApi")) > 0 {
		t.Error("an HttpApi sends payload 2.0 events by default")
	}
	if got := scalars(get(api, "Properties", "BinaryMediaTypes")); !slices.Equal(got, []string{"*~1*"}) {
		t.Errorf("BinaryMediaTypes = %v, want [*~1*] (*/*: every body binary-safe)", got)
	}
	if get(api, "Properties", "Cors") != nil {
		t.Error("Cors on the API would answer preflights with a mock instead of the account's CORS rules")
	}
	if got := tagged(get(api, "Properties", "StageName")); got != "!Ref Stage" {
		t.Errorf("StageName = %q", got)
	}

	cat := get(tpl, "Resources", "CatalogTable")
	if str(get(cat, "Type")) != "AWS::DynamoDB::Table" || str(get(cat, "Properties", "BillingMode")) != "PAY_PER_REQUEST" ||
		str(get(cat, "Properties", "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled")) != "true" {
		t.Error("the catalog table must be PAY_PER_REQUEST with point-in-time recovery")
	}
	if got := tagged(get(cat, "Properties", "TableName")); got != "!Sub ${TablePrefix}catalog" {
		t.Errorf("catalog TableName = %q, want the store's default TablePrefix + catalog", got)
	}

	sec := get(tpl, "Resources", "AccountKeysSecret")
	gen := get(sec, "Properties", "GenerateSecretString")
	if str(get(sec, "Type")) != "AWS::SecretsManager::Secret" || str(get(gen, "GenerateStringKey")) != "keys" ||
		str(get(gen, "PasswordLength")) != "176" || str(get(gen, "ExcludePunctuation")) != "true" || str(get(gen, "IncludeSpace")) != "false" {
		t.Error("the keys secret must generate 176 letters and digits under \"keys\" (two 88-character keys)")
	}
	if got := tagged(get(gen, "SecretStringTemplate")); !strings.Contains(got, `"accountName":"${AccountName}"`) {
		t.Errorf("SecretStringTemplate = %q", got)
	}

	// The functions' environment is complete: lambdafn accepts it.
	vars := get(tpl, "Globals", "Function", "Environment", "Variables")
	env := map[string]string{}
	for _, k := range mappingKeys(vars) {
		v := get(vars, k)
		if k == lambdafn.EnvBasePath {
			// What HTTP API events leave out of rawPath: the HTTP API's
			// mapping key on the custom domain in the HttpApi profile.
			if got := scalars(v); v.Tag != "!If" || !slices.Equal(got, []string{"IsHttpApi", "!Ref HttpApiBasePath", "!Ref BasePath"}) {
				t.Errorf("%s = %s %q, want the HTTP API's mapping key in the HttpApi profile", k, v.Tag, got)
			}
			env[k] = str(get(tpl, "Parameters", "HttpApiBasePath", "Default"))
			continue
		}
		switch tagged(v) {
		case "!Ref AccountName":
			env[k] = "myaccount"
		case "!Ref TablePrefix":
			env[k] = "tablebridge-"
		case "!Ref CatalogTable":
			env[k] = "tablebridge-catalog"
		case "!Ref EntityTable":
			env[k] = "tablebridge-entities"
		case secretRef:
			env[k] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tablebridge/x-AbCdEf"
		case "!Ref AWS::StackName":
			env[k] = "tablebridge"
		case "!Ref OAuthIssuers", "!Ref OAuthAudiences", "!Ref OAuthRoles":
			env[k] = "" // bearer tokens off, the parameters' default
		default:
			if v.Tag != "!!str" && v.Tag != "" {
				t.Errorf("%s = %s: unexpected intrinsic", k, tagged(v))
			}
			env[k] = v.Value
		}
	}
	if env[lambdafn.EnvKeysSecret] == "" || env[lambdafn.EnvUseEmulatorKey] != "false" {
		t.Errorf("deployed functions read the secret and never the emulator key: %v", env)
	}
	cfg, err := lambdafn.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the template's environment does not configure a function: %v", err)
	}
	if cfg.Store.CatalogTable != "tablebridge-catalog" || cfg.Store.SharedTable != "tablebridge-entities" || cfg.AccountName != "myaccount" || cfg.StackName != "tablebridge" {
		t.Errorf("config %+v", cfg)
	}
}

// TestTemplateOperations: the operational surface is there and wired to
// its parameters: memory, tracing, reserved concurrency, log retention,
// stage throttling, alarms with an optional topic, custom domain, and the
// protection of new tables.
func TestTemplateOperations(t *testing.T) {
	tpl := loadTemplate(t)
	for _, p := range []string{"LambdaMemorySize", "LogRetentionDays", "ThrottlingRateLimit", "ThrottlingBurstLimit", "ReservedConcurrency",
		"Tracing", "AlarmEmail", "Error5xxRateThreshold", "DomainName", "CertificateArn", "BasePath", "HttpApiBasePath", "TablesCmkArn", "TableClass", "DeletionProtection", "Profile"} {
		if get(tpl, "Parameters", p) == nil {
			t.Errorf("no parameter %s", p)
		}
	}
	fn := get(tpl, "Globals", "Function")
	for key, want := range map[string]string{"MemorySize": "!Ref LambdaMemorySize", "Tracing": "!Ref Tracing"} {
		if got := tagged(get(fn, key)); got != want {
			t.Errorf("Globals.Function.%s = %q, want %q", key, got, want)
		}
	}
	if get(fn, "ReservedConcurrentExecutions") == nil || tagged(get(fn, "LoggingConfig", "LogGroup")) != "!Ref FunctionLogs" {
		t.Error("functions need reserved concurrency and the stack's log group")
	}
	if got := tagged(get(tpl, "Resources", "FunctionLogs", "Properties", "RetentionInDays")); got != "!Ref LogRetentionDays" {
		t.Errorf("log retention %q", got)
	}
	ms := get(tpl, "Resources", "TableApi", "Properties", "MethodSettings")
	if ms == nil || tagged(get(ms.Content[0], "ThrottlingRateLimit")) != "!Ref ThrottlingRateLimit" || tagged(get(ms.Content[0], "ThrottlingBurstLimit")) != "!Ref ThrottlingBurstLimit" {
		t.Error("stage throttling is not wired to its parameters")
	}
	alarms := resourcesOfType(tpl, "AWS::CloudWatch::Alarm")
	for _, a := range []string{"Api5xxRateAlarm", "HttpApi5xxRateAlarm", "FunctionUrl5xxRateAlarm", "FunctionErrorsAlarm", "FunctionThrottlesAlarm",
		"TableServiceErrorsAlarm", "TableServiceThrottlesAlarm", "DynamoDBThrottledAlarm", "SystemErrorsAlarm"} {
		r := alarms[a]
		if r == nil {
			t.Errorf("no alarm %s", a)
			continue
		}
		if get(r, "Properties", "AlarmActions") == nil {
			t.Errorf("%s notifies nobody", a)
		}
	}
	// The per-operation alarms cover every per-operation function.
	for _, a := range []string{"FunctionErrorsAlarm", "FunctionThrottlesAlarm"} {
		covered := map[string]bool{}
		for _, m := range get(alarms[a], "Properties", "Metrics").Content {
			if d := get(m, "MetricStat", "Metric", "Dimensions"); d != nil {
				covered[strings.TrimPrefix(tagged(get(d.Content[0], "Value")), "!Ref ")] = true
			}
		}
		for _, f := range deploy.Functions() {
			if !f.CatchAll && !covered[f.LogicalID] {
				t.Errorf("%s does not watch %s", a, f.LogicalID)
			}
		}
	}
	for id, cond := range map[string]string{"AlarmTopic": "HasAlarmEmail", "CustomDomain": "HasCustomDomain", "CustomDomainMapping": "HasCustomDomain",
		"HttpApiDomainMapping": "HasHttpApiCustomDomain"} {
		if got := str(get(tpl, "Resources", id, "Condition")); got != cond {
			t.Errorf("%s: Condition %q, want %q", id, got, cond)
		}
	}
	// The HTTP API is mapped on the same custom domain, at its own key.
	m := get(tpl, "Resources", "HttpApiDomainMapping")
	if str(get(m, "Type")) != "AWS::ApiGatewayV2::ApiMapping" || tagged(get(m, "Properties", "DomainName")) != "!Ref CustomDomain" ||
		tagged(get(m, "Properties", "ApiId")) != "!Ref HttpApi" || tagged(get(m, "Properties", "Stage")) != "!Ref HttpApiStage" ||
		tagged(get(m, "Properties", "ApiMappingKey")) != "!Ref HttpApiBasePath" {
		t.Error("HttpApiDomainMapping must map the HTTP API's stage on CustomDomain at HttpApiBasePath")
	}
}

// TestTemplateProfiles: the HttpApi profile routes exactly lambdafn's routes
// to the same functions with payload format 2.0, and $default to the
// catch-all; the FunctionUrl profile puts a URL (AuthType NONE: the
// function authenticates every request) on the catch-all.
func TestTemplateProfiles(t *testing.T) {
	tpl := loadTemplate(t)
	res := get(tpl, "Resources")
	integrationOf := map[string]string{} // integration id -> function id
	for id, r := range resourcesOfType(tpl, "AWS::ApiGatewayV2::Integration") {
		if str(get(r, "Condition")) != "IsHttpApi" || str(get(r, "Properties", "PayloadFormatVersion")) != "2.0" ||
			str(get(r, "Properties", "IntegrationType")) != "AWS_PROXY" {
			t.Errorf("%s: want an IsHttpApi AWS_PROXY integration with payload 2.0", id)
		}
		integrationOf[id] = strings.TrimSuffix(tagged(get(r, "Properties", "IntegrationUri")), ".Arn")
		integrationOf[id] = strings.TrimPrefix(integrationOf[id], "!GetAtt ")
	}
	got := map[string][]string{} // function id -> route keys
	for id, r := range resourcesOfType(tpl, "AWS::ApiGatewayV2::Route") {
		target := tagged(get(r, "Properties", "Target"))
		integ := strings.TrimSuffix(strings.TrimPrefix(target, "!Sub integrations/${"), "}")
		fn := integrationOf[integ]
		if fn == "" || str(get(r, "Condition")) != "IsHttpApi" {
			t.Errorf("route %s targets %q", id, target)
			continue
		}
		got[fn] = append(got[fn], str(get(r, "Properties", "RouteKey")))
	}
	for _, f := range deploy.Functions() {
		var want []string
		for _, rt := range f.Routes {
			want = append(want, rt.String())
		}
		if f.CatchAll {
			want = append(want, "$default")
		}
		slices.Sort(want)
		slices.Sort(got[f.LogicalID])
		if !slices.Equal(got[f.LogicalID], want) {
			t.Errorf("%s: HTTP API routes %v, want %v", f.LogicalID, got[f.LogicalID], want)
		}
		perm := get(res, strings.TrimSuffix(f.LogicalID, "Function")+"HttpPermission")
		if tagged(get(perm, "Properties", "FunctionName")) != "!Ref "+f.LogicalID || str(get(perm, "Properties", "Principal")) != "apigateway.amazonaws.com" {
			t.Errorf("%s: no invoke permission for the HTTP API", f.LogicalID)
		}
	}
	url := get(res, "TableServiceUrl")
	if str(get(url, "Condition")) != "IsFunctionUrl" || str(get(url, "Properties", "AuthType")) != "NONE" ||
		tagged(get(url, "Properties", "TargetFunctionArn")) != "!GetAtt TableServiceFunction.Arn" {
		t.Error("the FunctionUrl profile needs a URL with AuthType NONE on TableServiceFunction")
	}
	if str(get(res, "TableServiceUrlPermission", "Properties", "FunctionUrlAuthType")) != "NONE" {
		t.Error("the Function URL needs its public invoke permission")
	}
}

// purgeFunctionID is the scheduled function of lambdafn.MainPurge.
const purgeFunctionID = "PurgeTablesFunction"

// TestTemplatePurgeFunction: the purge function runs functions/purgetables
// on a schedule, one run at a time, with exactly deploy.PurgeActions on
// the catalog, the shared table and its index, and the per-table tables;
// it reads no keys and has no route.
func TestTemplatePurgeFunction(t *testing.T) {
	tpl := loadTemplate(t)
	r := resourcesOfType(tpl, "AWS::Serverless::Function")[purgeFunctionID]
	if r == nil {
		t.Fatal("no purge function")
	}
	if got := str(get(r, "Properties", "CodeUri")); got != "build/"+deploy.PurgeFunctionName {
		t.Errorf("CodeUri = %q", got)
	}
	main, err := os.ReadFile(filepath.Join(deploy.PurgeFunctionName, "main.go"))
	if err != nil || !strings.Contains(string(main), "lambdafn.MainPurge()") {
		t.Errorf("functions/%s/main.go does not run lambdafn.MainPurge: %v", deploy.PurgeFunctionName, err)
	}
	ev := get(r, "Properties", "Events", "Schedule")
	if str(get(ev, "Type")) != "ScheduleV2" || str(get(ev, "Properties", "ScheduleExpression")) == "" {
		t.Errorf("want a ScheduleV2 event")
	}
	if str(get(r, "Properties", "ReservedConcurrentExecutions")) != "1" {
		t.Errorf("ReservedConcurrentExecutions = %q, want 1", str(get(r, "Properties", "ReservedConcurrentExecutions")))
	}
	catalog, shared, perTable := deploy.PurgeActions()
	want := map[string][]string{catalogARN: catalog, sharedARN: {"dynamodb:BatchWriteItem"}, sharedIndexARN: {"dynamodb:Query"}, tablesARN: perTable}
	if !slices.Equal(shared, []string{"dynamodb:BatchWriteItem", "dynamodb:Query"}) {
		t.Errorf("PurgeActions shared = %v: update this test and the template", shared)
	}
	got := map[string][]string{}
	for _, p := range get(r, "Properties", "Policies").Content {
		for _, st := range get(p, "Statement").Content {
			for _, res := range scalars(get(st, "Resource")) {
				got[res] = append(got[res], scalars(get(st, "Action"))...)
			}
		}
	}
	for res, actions := range got {
		slices.Sort(actions)
		if !slices.Equal(actions, want[res]) {
			t.Errorf("on %s: actions %v, want %v", res, actions, want[res])
		}
	}
	if len(got) != len(want) {
		t.Errorf("statements on %v, want %v", mappingKeysOf(got), mappingKeysOf(want))
	}
}

func mappingKeysOf(m map[string][]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestTemplateCapacityOperations: what the stack declares for DynamoDB's
// per-key limits: the catalog's TTL attribute (dynamostore's catExpires,
// on Delete Table's tombstones), throttling alarms on the catalog and on
// the order index beside the shared table's, the optional warm throughput
// of the shared table and its index, and the purge function's rate.
func TestTemplateCapacityOperations(t *testing.T) {
	tpl := loadTemplate(t)
	tables := resourcesOfType(tpl, "AWS::DynamoDB::Table")
	ttl := get(tables["CatalogTable"], "Properties", "TimeToLiveSpecification")
	if str(get(ttl, "AttributeName")) != "Expires" || str(get(ttl, "Enabled")) != "true" {
		t.Errorf("CatalogTable TimeToLiveSpecification = %v %v; want Expires, enabled", str(get(ttl, "AttributeName")), str(get(ttl, "Enabled")))
	}
	entities := get(tables["EntityTable"], "Properties")
	for what, warm := range map[string]*yaml.Node{
		"table": get(entities, "WarmThroughput"), "index": get(entities, "GlobalSecondaryIndexes").Content[0]} {
		if what == "index" {
			warm = get(warm, "WarmThroughput")
		}
		if warm == nil || warm.Tag != "!If" || warm.Content[0].Value != "HasWarmThroughput" {
			t.Errorf("EntityTable %s: WarmThroughput is not the optional HasWarmThroughput one", what)
		}
	}
	alarms := resourcesOfType(tpl, "AWS::CloudWatch::Alarm")
	for name, dims := range map[string][]string{
		"EntityTableThrottledAlarm": {"TableName=!Ref EntityTable"},
		"CatalogThrottledAlarm":     {"TableName=!Ref CatalogTable"},
		"EntityIndexThrottledAlarm": {"TableName=!Ref EntityTable", "GlobalSecondaryIndexName=order-20"},
	} {
		a := alarms[name]
		if a == nil {
			t.Errorf("no %s", name)
			continue
		}
		var names []string
		for _, m := range get(a, "Properties", "Metrics").Content {
			metric := get(m, "MetricStat", "Metric")
			if metric == nil {
				continue
			}
			names = append(names, str(get(metric, "MetricName")))
			var got []string
			for _, d := range get(metric, "Dimensions").Content {
				got = append(got, str(get(d, "Name"))+"="+tagged(get(d, "Value")))
			}
			if !slices.Equal(got, dims) {
				t.Errorf("%s: dimensions %v, want %v", name, got, dims)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"ReadThrottleEvents", "WriteThrottleEvents"}) {
			t.Errorf("%s graphs %v, want the read and write throttle events", name, names)
		}
	}
	purge := resourcesOfType(tpl, "AWS::Serverless::Function")[purgeFunctionID]
	if got := tagged(get(purge, "Properties", "Environment", "Variables", lambdafn.EnvPurgeRate)); got != "!Ref PurgeRate" {
		t.Errorf("the purge function's %s = %q, want !Ref PurgeRate", lambdafn.EnvPurgeRate, got)
	}
}
