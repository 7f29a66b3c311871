package auth

import (
	"errors"
	"strings"
)

// DevStoreTableEndpoint is where "UseDevelopmentStorage=true" points: the
// emulator's table endpoint for its development account, path-style.
const DevStoreTableEndpoint = "http://127.0.0.1:10002/" + DevStoreAccountName

// ConnectionString is what an Azure Storage connection string says about
// the Table service: the account and its key (base64, as written) or a
// shared access signature, and the table endpoint without a trailing slash.
type ConnectionString struct {
	Account       string
	Key           string
	SAS           string
	TableEndpoint string
}

// ParseConnectionString reads a connection string the way the Azure SDKs do:
// key=value pairs separated by semicolons, names case-insensitive
// (AccountName, AccountKey, SharedAccessSignature, TableEndpoint,
// DefaultEndpointsProtocol, EndpointSuffix), and "UseDevelopmentStorage=true"
// for the emulator. Without a TableEndpoint the endpoint is
// <protocol>://<account>.table.<suffix>, https and core.windows.net by
// default.
func ParseConnectionString(s string) (ConnectionString, error) {
	fields := map[string]string{}
	for _, part := range strings.Split(strings.TrimRight(s, ";"), ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return ConnectionString{}, errors.New("connection string: expected key=value pairs separated by semicolons")
		}
		fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(fields["usedevelopmentstorage"], "true") {
		return ConnectionString{Account: DevStoreAccountName, Key: DevStoreAccountKey, TableEndpoint: DevStoreTableEndpoint}, nil
	}
	cs := ConnectionString{Account: fields["accountname"], Key: fields["accountkey"], SAS: fields["sharedaccesssignature"]}
	if cs.Key == "" && cs.SAS == "" {
		return ConnectionString{}, errors.New("connection string: needs AccountKey or SharedAccessSignature")
	}
	if ep := fields["tableendpoint"]; ep != "" {
		cs.TableEndpoint = strings.TrimRight(ep, "/")
	} else {
		if cs.Account == "" {
			return ConnectionString{}, errors.New("connection string: needs AccountName or TableEndpoint")
		}
		proto := fields["defaultendpointsprotocol"]
		if proto == "" {
			proto = "https"
		}
		suffix := fields["endpointsuffix"]
		if suffix == "" {
			suffix = "core.windows.net"
		}
		cs.TableEndpoint = proto + "://" + cs.Account + ".table." + suffix
	}
	if cs.Key != "" && cs.Account == "" {
		return ConnectionString{}, errors.New("connection string: AccountKey needs AccountName")
	}
	return cs, nil
}
