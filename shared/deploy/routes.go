package deploy

import (
	"net/url"
	"strings"

	"github.com/tablebridge/tablebridge/shared/operation"
)

// matchResource finds the API Gateway resource of a path below the stage:
// "/acct" or "/acct/" is ResourceAccount, "/acct/Tables" ResourceTables
// (API Gateway matches literal parts case-sensitively), and any other
// single segment ResourceAny (shared/operation's resources). Like a REST API it ignores one trailing
// slash. The parameters come percent-decoded, as in the event's
// pathParameters.
func matchResource(path string) (resource string, params map[string]string, ok bool) {
	p := strings.TrimPrefix(path, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil, false
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" {
			return "", nil, false
		}
	}
	switch len(segs) {
	case 1:
		return operation.ResourceAccount, map[string]string{"account": unescapeSegment(segs[0])}, true
	case 2:
		params = map[string]string{"account": unescapeSegment(segs[0])}
		if segs[1] == "Tables" {
			return operation.ResourceTables, params, true
		}
		params["resource"] = unescapeSegment(segs[1])
		return operation.ResourceAny, params, true
	}
	return "", nil, false
}

func unescapeSegment(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
