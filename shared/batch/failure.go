package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// timeLayout is the Time line of Azure error messages: UTC with seven
// fractional digits ("Time:2020-10-02T04:44:44.0585931Z").
const timeLayout = "2006-01-02T15:04:05.0000000Z"

// FailureMessage is the message value of a failed operation's error:
// its 0-based index, a colon, the error text, then the RequestId and Time
// lines every Azure error carries. The .NET and Python SDKs read the
// failed index from the digits before the first colon.
func FailureMessage(index int, err *apierr.Error, requestID string, at time.Time) string {
	return strconv.Itoa(index) + ":" + err.Text() +
		"\nRequestId:" + requestID +
		"\nTime:" + at.UTC().Format(timeLayout)
}

// odataError is the JSON error body: {"odata.error":{"code":..,"message":
// {"lang":"en-US","value":..}}}. Field order is the wire order.
type odataError struct {
	Error struct {
		Code    apierr.Code `json:"code"`
		Message struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		} `json:"message"`
	} `json:"odata.error"`
}

// FailureResponse is the part of a failed operation: its status, its
// Content-ID, and a one-line, compact odata.error body. Compact because
// the .NET SDK matches `"value":"(\d+):` and the JS SDK finds the body
// with a single-line pattern.
func FailureResponse(failure *OperationError, requestID string, at time.Time) (Response, error) {
	if failure == nil || failure.Err == nil {
		return Response{}, errors.New("batch: FailureResponse needs an OperationError with an Err")
	}
	status := failure.Err.HTTPStatus()
	if status < 400 {
		return Response{}, errors.New("batch: a failure needs a 4xx or 5xx status")
	}
	var body odataError
	body.Error.Code = failure.Err.Code
	body.Error.Message.Lang = "en-US"
	body.Error.Message.Value = FailureMessage(failure.Index, failure.Err, requestID, at)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Azure writes <, > and & as they are
	if err := enc.Encode(body); err != nil {
		return Response{}, err
	}
	return Response{
		Status:             status,
		ContentID:          failure.ContentID,
		DataServiceVersion: DataServiceVersion3,
		ContentType:        JSONContentType,
		Body:               bytes.TrimSuffix(buf.Bytes(), []byte("\n")),
	}, nil
}

// WriteFailure writes the response of a failed changeset: still 202 (send
// it with StatusCode and b.ContentType()), with one part that holds the
// failing operation's error. Nothing of the other operations appears,
// since none of them took effect.
func WriteFailure(w io.Writer, b Boundaries, failure *OperationError, requestID string, at time.Time) error {
	buf, err := AppendFailure(nil, b, failure, requestID, at)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// AppendFailure is WriteFailure appending to dst. On error dst is returned
// as it was.
func AppendFailure(dst []byte, b Boundaries, failure *OperationError, requestID string, at time.Time) ([]byte, error) {
	part, err := FailureResponse(failure, requestID, at)
	if err != nil {
		return dst, err
	}
	return appendChangeset(dst, b, []Response{part})
}
