package dynamoproxy

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
)

// The DynamoDB JSON 1.0 protocol: every call is a POST whose X-Amz-Target
// names the operation; errors name their exception in __type ("Error
// Handling" in the DynamoDB Developer Guide).
const (
	targetPrefix    = "DynamoDB_20120810."
	jsonContentType = "application/x-amz-json-1.0"
	errorTypePrefix = "com.amazonaws.dynamodb.v20120810#"
	// crcHeader carries the CRC32 (IEEE) of the response body; the AWS SDKs
	// check it on DynamoDB responses, so a changed body gets a new one.
	crcHeader = "X-Amz-Crc32"
)

// object is a JSON object whose members stay encoded until read, so a
// request or answer can be changed member by member and re-encoded without
// touching what the proxy does not understand.
type object map[string]json.RawMessage

// decodeObject parses b as a JSON object; ok is false for anything else.
func decodeObject(b []byte) (object, bool) {
	var o object
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

func (o object) str(name string) string {
	var s string
	if raw, ok := o[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (o object) object(name string) object {
	o2, _ := decodeObject(o[name])
	return o2
}

func (o object) objects(name string) []object {
	var raws []json.RawMessage
	if raw, ok := o[name]; ok {
		_ = json.Unmarshal(raw, &raws)
	}
	out := make([]object, 0, len(raws))
	for _, r := range raws {
		if o2, ok := decodeObject(r); ok {
			out = append(out, o2)
		}
	}
	return out
}

// attrs reads a member that is an item or a key: attribute names to
// attribute values.
func (o object) attrs(name string) attrs {
	var a attrs
	if raw, ok := o[name]; ok {
		_ = json.Unmarshal(raw, &a)
	}
	return a
}

// names reads ExpressionAttributeNames.
func (o object) names() map[string]string {
	var m map[string]string
	if raw, ok := o["ExpressionAttributeNames"]; ok {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// set encodes v into member name.
func (o object) set(name string, v any) { o[name] = marshal(v) }

func (o object) encode() []byte { return marshal(o) }

// marshal encodes v as JSON, leaving <, > and & as they are (json.Marshal
// would escape them, changing bytes DynamoDB sent). v is either built here
// or made of RawMessages decoded as valid JSON, so it always encodes.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("dynamoproxy: encoding JSON: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// attrs is an item or a key in DynamoDB JSON: attribute names to attribute
// values such as {"S":"x"}.
type attrs map[string]json.RawMessage

// canonical is a stable encoding of a key, to match keys written
// differently (member order) by different senders.
func (a attrs) canonical() string {
	var v any
	b, _ := json.Marshal(a)
	_ = json.Unmarshal(b, &v)
	b, _ = json.Marshal(v) // compact, names sorted at every level
	return string(b)
}

// only returns the attributes named.
func (a attrs) only(names ...string) attrs {
	out := attrs{}
	for _, n := range names {
		if v, ok := a[n]; ok && n != "" {
			out[n] = v
		}
	}
	return out
}

// scalar returns a key attribute's value as it is written on the wire: the
// string of an S, the digits of an N, the base64 of a B. ok is false for
// other types, which cannot be keys.
func scalar(v json.RawMessage) (string, bool) {
	var av map[string]json.RawMessage
	if json.Unmarshal(v, &av) != nil || len(av) != 1 {
		return "", false
	}
	for typ, raw := range av {
		var s string
		if (typ == "S" || typ == "N" || typ == "B") && json.Unmarshal(raw, &s) == nil {
			return s, true
		}
	}
	return "", false
}

// errorBody is a DynamoDB error answer: the exception's __type and its
// members, named as the service model names them (message or Message,
// ThrottlingReasons or throttlingReasons: each exception has its own).
func errorBody(exception string, members map[string]any) []byte {
	o := object{}
	o.set("__type", errorTypePrefix+exception)
	for k, v := range members {
		o.set(k, v)
	}
	return o.encode()
}

// writeAnswer sends status, the headers and body with a fresh CRC32 and
// length, and the JSON 1.0 content type and a request id when none is
// given.
func writeAnswer(w http.ResponseWriter, status int, header http.Header, body []byte) {
	h := w.Header()
	for k, vs := range header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", crcHeader, "Connection", "Transfer-Encoding":
			continue
		}
		h[k] = vs
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", jsonContentType)
	}
	if h.Get("X-Amzn-Requestid") == "" { // an answer of the proxy's own
		h.Set("X-Amzn-Requestid", rand.Text())
	}
	h.Set(crcHeader, strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that left gets nothing, as from DynamoDB
}

// namespace is the part of a request that selects a database in DynamoDB
// Local: the access key and region of its signature's credential scope
// ("Credential=AKID/date/region/dynamodb/aws4_request"). Tables are
// described per namespace.
func namespace(h http.Header) string {
	auth := h.Get("Authorization")
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	if len(parts) < 3 {
		return cred
	}
	return parts[0] + "/" + parts[2]
}

// attempt reads the SDK's amz-sdk-request header ("attempt=2; max=3"): which
// attempt of its call a request is, 0 when the sender does not say.
func attempt(h http.Header) int {
	for _, part := range strings.Split(h.Get("Amz-Sdk-Request"), ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "attempt="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// decodedLen is the raw length of a base64 binary value.
func decodedLen(s string) int {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return len(b)
	}
	return base64.StdEncoding.DecodedLen(len(s))
}
