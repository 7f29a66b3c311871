package loadgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
)

// minimalMetadataQuery is the $format query aztables puts on the request
// line of every insert inside a changeset, encoded as url.Values.Encode does.
const minimalMetadataQuery = "%24format=application%2Fjson%3Bodata%3Dminimalmetadata"

// batchBuilder writes $batch request bodies byte-for-byte as aztables v1.4.1
// SubmitTransaction does for TransactionTypeAdd actions
// (transactional_batch.go), so the server parses exactly what the SDK sends:
//
//	--batch_<uuid>\r\n
//	Content-Type: multipart/mixed; boundary=changeset_<uuid>\r\n
//	\r\n
//	--changeset_<uuid>\r\n                       (later parts: \r\n--changeset_<uuid>\r\n)
//	Content-Transfer-Encoding: binary\r\n
//	Content-Type: application/http\r\n
//	\r\n
//	POST <endpoint>/<table>?$format=... HTTP/1.1\r\n
//	<the generated request's headers, sorted>\r\n
//	\r\n
//	<entity JSON>
//	\r\n--changeset_<uuid>--\r\n
//	\r\n--batch_<uuid>--\r\n
//
// The SDK writes each part's headers with http.Header.Get on the raw map
// keys; for the non-canonical keys "DataServiceVersion" and "x-ms-version"
// that lookup misses, so the SDK sends both with empty values. We copy that
// quirk on purpose: the server must cope with what the SDK really sends.
type batchBuilder struct {
	requestLine []byte // "POST <url> HTTP/1.1\r\n" + headers up to the Content-Length value
	afterLength []byte // the rest of the part's headers and the blank line
}

func newBatchBuilder(endpoint *url.URL, table string) *batchBuilder {
	// The part carries the absolute URL the SDK would have requested:
	// runtime.JoinPaths(endpoint, url.PathEscape(table)) plus $format.
	u := *endpoint
	u.Path = endpoint.Path + "/" + table
	u.RawPath = ""
	u.RawQuery = minimalMetadataQuery
	line := "POST " + u.String() + " HTTP/1.1\r\n" +
		"Accept: application/json;odata=minimalmetadata\r\n" +
		"Content-Length: "
	return &batchBuilder{
		requestLine: []byte(line),
		afterLength: []byte("\r\n" +
			"Content-Type: application/json\r\n" +
			"DataServiceVersion: \r\n" +
			"Prefer: return-no-content\r\n" +
			"x-ms-version: \r\n" +
			"\r\n"),
	}
}

// batchContentType is the Content-Type of the outer $batch request.
func batchContentType(batchID string) string {
	return "multipart/mixed; boundary=batch_" + batchID
}

// begin appends the opening of the batch and its one changeset part.
func (bb *batchBuilder) begin(b []byte, batchID, changesetID string) []byte {
	b = append(b, "--batch_"...)
	b = append(b, batchID...)
	b = append(b, "\r\nContent-Type: multipart/mixed; boundary=changeset_"...)
	b = append(b, changesetID...)
	return append(b, "\r\n\r\n"...)
}

// appendInsert appends one insert operation. first tells whether it is the
// changeset's first part (multipart.Writer omits the leading CRLF there).
func (bb *batchBuilder) appendInsert(b []byte, changesetID string, first bool, entity []byte) []byte {
	if !first {
		b = append(b, "\r\n"...)
	}
	b = append(b, "--changeset_"...)
	b = append(b, changesetID...)
	b = append(b, "\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n"...)
	b = append(b, bb.requestLine...)
	b = strconv.AppendInt(b, int64(len(entity)), 10)
	b = append(b, bb.afterLength...)
	return append(b, entity...)
}

// end closes the changeset and the batch.
func (bb *batchBuilder) end(b []byte, batchID, changesetID string) []byte {
	b = append(b, "\r\n--changeset_"...)
	b = append(b, changesetID...)
	b = append(b, "--\r\n\r\n--batch_"...)
	b = append(b, batchID...)
	return append(b, "--\r\n"...)
}

// newUUID returns a random version-4 UUID in its 8-4-4-4-12 text form, as
// the SDK uses for boundaries. Boundaries need only be unique, not secret,
// so the worker's fast PRNG is enough.
func newUUID(rng *rand.Rand) string {
	var u [16]byte
	hi, lo := rng.Uint64(), rng.Uint64()
	for i := range 8 {
		u[i] = byte(hi >> (56 - 8*i))
		u[8+i] = byte(lo >> (56 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0x0f])
	}
	return string(out)
}

// checkBatchResponse verifies an entity group transaction's response body:
// one changeset response per operation, each 2xx. Azure answers a failed
// transaction with 202 too and a single part carrying the failing
// operation's status and odata.error ("Performing entity group transactions",
// sample error response), so the status line of every part must be read.
func checkBatchResponse(body []byte, want int) error {
	ok := 0
	rest := body
	for {
		i := bytes.Index(rest, []byte("HTTP/1.1 "))
		if i < 0 {
			break
		}
		// Only a status line at the start of a line counts.
		if i > 0 && rest[i-1] != '\n' {
			rest = rest[i+len("HTTP/1.1 "):]
			continue
		}
		line := rest[i:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		line = bytes.TrimRight(line, "\r")
		rest = rest[i+len(line):]
		if len(line) < len("HTTP/1.1 200") {
			return fmt.Errorf("batch response: malformed status line %q", line)
		}
		code, err := strconv.Atoi(string(line[9:12]))
		if err != nil {
			return fmt.Errorf("batch response: malformed status line %q", line)
		}
		if code < 200 || code > 299 {
			return fmt.Errorf("batch operation failed: %s%s", line, errorCodeSuffix(rest))
		}
		ok++
	}
	if ok != want {
		return fmt.Errorf("batch response: %d successful operation responses, want %d", ok, want)
	}
	return nil
}

// errorCodeSuffix finds the odata.error code and message that follow a
// failing status line, for the error report.
func errorCodeSuffix(b []byte) string {
	const codeKey = `"code":"`
	i := bytes.Index(b, []byte(codeKey))
	if i < 0 {
		return ""
	}
	b = b[i+len(codeKey):]
	j := bytes.IndexByte(b, '"')
	if j < 0 {
		return ""
	}
	suffix := " " + string(b[:j])
	const valueKey = `"value":"`
	if k := bytes.Index(b, []byte(valueKey)); k >= 0 {
		msg := b[k+len(valueKey):]
		if end := bytes.IndexAny(msg, "\"\\"); end >= 0 {
			msg = msg[:end]
		}
		suffix += ": " + string(msg)
	}
	return suffix
}
