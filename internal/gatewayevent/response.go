package gatewayevent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tablebridge/tablebridge/shared/deploy"
)

// Response is a function's answer as the client receives it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// DecodeResponse reads a function's answer in the format of the profile's
// events, strictly: a 1.0 answer must carry multiValueHeaders, a 2.0
// answer headers (a null map would lose every header), as the front door
// would read them.
func DecodeResponse(profile deploy.Profile, out []byte) (Response, error) {
	var raw struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Cookies           []string            `json:"cookies"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return Response{}, fmt.Errorf("gatewayevent: not a proxy response: %v: %.200s", err, out)
	}
	if raw.StatusCode == 0 {
		return Response{}, fmt.Errorf("gatewayevent: response without statusCode: %.200s", out)
	}
	h := http.Header{}
	switch profile {
	case deploy.ProfileRESTAPI, "":
		if raw.MultiValueHeaders == nil {
			return Response{}, fmt.Errorf("gatewayevent: format 1.0 response without multiValueHeaders: %.200s", out)
		}
		for k, v := range raw.Headers {
			h.Set(k, v)
		}
		for k, vs := range raw.MultiValueHeaders {
			h.Del(k)
			for _, v := range vs {
				h.Add(k, v)
			}
		}
	default:
		if raw.Headers == nil || raw.MultiValueHeaders != nil {
			return Response{}, fmt.Errorf("gatewayevent: format 2.0 response must have headers and no multiValueHeaders: %.200s", out)
		}
		for k, v := range raw.Headers {
			h.Set(k, v)
		}
		for _, c := range raw.Cookies {
			h.Add("Set-Cookie", c)
		}
	}
	body := []byte(raw.Body)
	if raw.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(raw.Body)
		if err != nil {
			return Response{}, fmt.Errorf("gatewayevent: isBase64Encoded body: %w", err)
		}
		body = b
	}
	h.Del("Content-Length") // the front door sets its own
	return Response{Status: raw.StatusCode, Header: h, Body: body}, nil
}
