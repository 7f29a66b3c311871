package protocoltest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// RunProtocol is the conformance suite for the protocol features
// around the entity operations: entity group transactions ($batch), shared
// access signatures, table ACLs, service properties and statistics, CORS,
// the secondary location, and the requests of real clients where
// tablebridge was seen to differ from Azure (suiteClientCompat, and
// suiteAzureRecorded and suiteJavaRecorded for the answers of Azure's recorded traffic). Like RunSDK it drives the official Go SDK (aztables v1.4.1)
// wherever the SDK can express a case, and raw signed requests otherwise,
// and after every refusal it checks that the stored data did not change.
//
//	protocoltest.RunProtocol(t, func(t *testing.T) *protocoltest.Server { return protocoltest.New(t) })
//
// newServer must return a server whose accounts start empty. Each group
// gets its own server, because the Service and CORS groups change
// account-wide settings, and the groups run in parallel.
func RunProtocol(t *testing.T, newServer func(t *testing.T) *Server) {
	groups := []struct {
		name string
		run  func(t *testing.T, newServer func(t *testing.T) *Server)
	}{
		{"Transactions", suiteTransactions},
		{"TransactionRules", suiteTransactionRules},
		{"SAS", suiteSAS},
		{"AccountSAS", suiteAccountSAS},
		{"ServiceSettings", suiteServiceSettings},
		{"CORS", suiteCORS},
		{"ClientCompat", suiteClientCompat},
		{"Secondary", suiteSecondary},
		{"AzureRecorded", suiteAzureRecorded},
		{"JavaRecorded", suiteJavaRecorded},
		{"Anonymous", suiteAnonymous},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, newServer)
		})
	}
}

// batchOp is one embedded request of a raw $batch body.
type batchOp struct {
	Method string
	// Path is below the account, as in Request.Path; the embedded request
	// line carries the absolute URL, as every SDK writes it.
	Path   string
	Header http.Header
	Body   []byte
}

// batchBody writes a $batch body the way aztables does (multipart/mixed,
// one changeset, CRLF line ends). A lone GET is written directly in the
// batch, without a changeset, as "Performing entity group transactions"
// requires for a query.
func (s *Server) batchBody(ops []batchOp) (contentType string, body []byte) {
	const batchB, changeB = "batch_5b1a8e5e-7d5c-4c9b-9b43-protocolsuite", "changeset_0c6f1f0e-2f1d-4f4e-8c1f-protocolsuite"
	var b bytes.Buffer
	writeOp := func(op batchOp) {
		b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", op.Method, s.AccountURL(auth.DevStoreAccountName)+op.Path)
		b.WriteString("Accept: application/json;odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\n")
		if op.Body != nil {
			b.WriteString("Content-Type: application/json\r\n")
		}
		for k, vs := range op.Header {
			for _, v := range vs {
				fmt.Fprintf(&b, "%s: %s\r\n", k, v)
			}
		}
		b.WriteString("\r\n")
		b.Write(op.Body)
		b.WriteString("\r\n")
	}
	if len(ops) == 1 && ops[0].Method == http.MethodGet {
		fmt.Fprintf(&b, "--%s\r\n", batchB)
		writeOp(ops[0])
		fmt.Fprintf(&b, "--%s--\r\n", batchB)
		return "multipart/mixed; boundary=" + batchB, b.Bytes()
	}
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchB, changeB)
	for _, op := range ops {
		fmt.Fprintf(&b, "--%s\r\n", changeB)
		writeOp(op)
	}
	fmt.Fprintf(&b, "--%s--\r\n--%s--\r\n", changeB, batchB)
	return "multipart/mixed; boundary=" + batchB, b.Bytes()
}

// doBatch sends a raw $batch signed with the account key.
func (s *Server) doBatch(t testing.TB, ops []batchOp) *Response {
	t.Helper()
	ct, body := s.batchBody(ops)
	return s.Do(t, Request{Method: http.MethodPost, Path: "/$batch", Body: body,
		Header: http.Header{"Content-Type": {ct}}})
}

// parseBatchResponse reads a $batch response body (ReadBatchParts), or
// fails the test.
func parseBatchResponse(t testing.TB, contentType string, body []byte) []BatchPart {
	t.Helper()
	parts, err := ReadBatchParts(contentType, body)
	if err != nil {
		t.Fatalf("batch response (%s): %v\n%s", contentType, err, truncate(body))
	}
	return parts
}

// wantTransactionFailure asserts that SubmitTransaction failed the way
// Azure fails a changeset: 202 Accepted whose single changeset part holds
// the failing operation's status and an odata.error with the code and a
// message starting "<index>:". aztables v1.4.1 surfaces this as an
// *azcore.ResponseError of status 202 without an ErrorCode, so the part is
// read from the raw response. It returns the first line of the message.
func wantTransactionFailure(t testing.TB, err error, index, status int, code string) string {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Errorf("got %v (%T), want a failed changeset (index %d, %d %s)", err, err, index, status, code)
		return ""
	}
	if re.RawResponse == nil {
		t.Errorf("ResponseError without a raw response: %v", err)
		return ""
	}
	body, perr := runtime.Payload(re.RawResponse)
	if perr != nil {
		t.Errorf("read the failed batch response: %v", perr)
		return ""
	}
	return wantBatchFailure(t, re.StatusCode, re.RawResponse.Header.Get("Content-Type"), body, index, status, code)
}

// wantRawTransactionFailure is wantTransactionFailure for a raw response.
func wantRawTransactionFailure(t testing.TB, resp *Response, index, status int, code string) string {
	t.Helper()
	return wantBatchFailure(t, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Body, index, status, code)
}

func wantBatchFailure(t testing.TB, outer int, contentType string, body []byte, index, status int, code string) string {
	t.Helper()
	if outer != http.StatusAccepted {
		t.Errorf("batch answered %d %s, want 202 with a failed changeset", outer, truncate(body))
		return ""
	}
	parts := parseBatchResponse(t, contentType, body)
	if len(parts) != 1 || !parts[0].InChangeset {
		t.Errorf("failed changeset has %d parts (in changeset: %v), want exactly one inside the changeset", len(parts), len(parts) > 0 && parts[0].InChangeset)
		return ""
	}
	p := parts[0]
	failed, err := p.Failure()
	if err != nil {
		t.Errorf("failed part: %v", err)
		return ""
	}
	if p.StatusCode != status || failed.Code != code || failed.Index != index {
		t.Errorf("failed part: %d %s %q, want %d %s with a message starting %q", p.StatusCode, failed.Code, failed.Message, status, code, fmt.Sprintf("%d:", index))
	}
	return failed.Message
}

// wantCode asserts a raw response's status and x-ms-error-code, whatever
// the body format.
func wantCode(t testing.TB, resp *Response, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code {
		t.Errorf("got %d %s, want %d %s; body %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), status, code, truncate(resp.Body))
	}
}

// wantXMLError asserts an error of an XML operation: status,
// x-ms-error-code and the <Error><Code> body Azure writes for them.
func wantXMLError(t testing.TB, resp *Response, status int, code string) {
	t.Helper()
	wantCode(t, resp, status, code)
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
	}
	if err := xml.Unmarshal(resp.Body, &e); err != nil || e.Code != code {
		t.Errorf("error body %s does not carry <Error><Code>%s</Code>", truncate(resp.Body), code)
	}
}
