package lambdafn

import (
	"net/url"
	"strings"
)

// matchResource finds the API Gateway resource of a path below the stage:
// "/acct" or "/acct/" is ResourceAccount, "/acct/Tables" ResourceTables
// (API Gateway matches literal parts case-sensitively), and any other
// single segment ResourceAny. Like a REST API it ignores one trailing
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
		return ResourceAccount, map[string]string{"account": unescapeSegment(segs[0])}, true
	case 2:
		params = map[string]string{"account": unescapeSegment(segs[0])}
		if segs[1] == "Tables" {
			return ResourceTables, params, true
		}
		params["resource"] = unescapeSegment(segs[1])
		return ResourceAny, params, true
	}
	return "", nil, false
}

func unescapeSegment(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// resourceSegments is how many path segments a resource template matches.
func resourceSegments(resource string) int {
	n := 0
	for _, s := range strings.Split(resource, "/") {
		if s != "" {
			n++
		}
	}
	return n
}

// splitStagePath splits the path the client sent (requestContext.path: the
// stage or custom-domain base path, then the resource path, still
// percent-encoded) into that prefix and the path the resource template
// matched, keeping a trailing slash on the latter. ok is false when the
// path has fewer segments than the template.
func splitStagePath(full, resource string) (prefix, routed string, ok bool) {
	n := resourceSegments(resource)
	if n == 0 {
		return "", "", false
	}
	trailing := len(full) > 1 && strings.HasSuffix(full, "/")
	trimmed := strings.TrimSuffix(full, "/")
	i := len(trimmed)
	for k := 0; k < n; k++ {
		j := strings.LastIndexByte(trimmed[:i], '/')
		if j < 0 {
			return "", "", false
		}
		i = j
	}
	prefix, routed = trimmed[:i], trimmed[i:]
	if trailing {
		routed += "/"
	}
	return prefix, routed, true
}
