package lambdafn

import "strings"

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
