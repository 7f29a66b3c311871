package httpapi

import (
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// resource is a request path below the account: its shape (which
// shared/operation's table matches to an operation) and what it names.
type resource struct {
	kind         operation.Path
	table        string
	partitionKey string
	rowKey       string
}

// parseResource parses the decoded path below the account. Keys appear as
// OData string literals: quoted, with a quote inside doubled ("Query
// Entities": "PartitionKey='<pk>',RowKey='<rk>'").
func parseResource(p string) (resource, error) {
	p = strings.TrimPrefix(p, "/")
	switch {
	case p == "":
		return resource{kind: operation.PathService}, nil
	case strings.EqualFold(p, "Tables") || strings.EqualFold(p, "Tables()"):
		return resource{kind: operation.PathTables}, nil
	case p == "$batch":
		return resource{kind: operation.PathBatch}, nil
	}
	if strings.Contains(p, "/") {
		return resource{}, apierr.New(apierr.InvalidURI)
	}
	open := strings.IndexByte(p, '(')
	if open < 0 {
		return resource{kind: operation.PathEntities, table: p}, nil
	}
	name, args := p[:open], p[open+1:]
	if !strings.HasSuffix(args, ")") {
		return resource{}, apierr.New(apierr.InvalidURI)
	}
	args = args[:len(args)-1]
	if strings.EqualFold(name, "Tables") {
		t, rest, err := parseStringLiteral(args)
		if err != nil || rest != "" {
			return resource{}, apierr.New(apierr.InvalidURI)
		}
		return resource{kind: operation.PathTable, table: t}, nil
	}
	if args == "" {
		return resource{kind: operation.PathEntities, table: name}, nil
	}
	pk, rk, err := parseEntityKeys(args)
	if err != nil {
		return resource{}, err
	}
	return resource{kind: operation.PathEntity, table: name, partitionKey: pk, rowKey: rk}, nil
}

// parseEntityKeys parses "PartitionKey='a',RowKey='b'" (either order).
func parseEntityKeys(s string) (pk, rk string, err error) {
	var havePK, haveRK bool
	for s != "" {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return "", "", apierr.New(apierr.InvalidURI)
		}
		val, rest, err := parseStringLiteral(rest)
		if err != nil {
			return "", "", err
		}
		switch strings.TrimSpace(name) {
		case "PartitionKey":
			if havePK {
				return "", "", apierr.New(apierr.InvalidURI)
			}
			pk, havePK = val, true
		case "RowKey":
			if haveRK {
				return "", "", apierr.New(apierr.InvalidURI)
			}
			rk, haveRK = val, true
		default:
			return "", "", apierr.New(apierr.InvalidURI)
		}
		if rest != "" {
			if rest[0] != ',' {
				return "", "", apierr.New(apierr.InvalidURI)
			}
			rest = rest[1:]
			if rest == "" {
				return "", "", apierr.New(apierr.InvalidURI)
			}
		}
		s = rest
	}
	if !havePK || !haveRK {
		return "", "", apierr.New(apierr.InvalidURI)
	}
	return pk, rk, nil
}

// parseStringLiteral reads 'text' with ” as an escaped quote and returns
// the text and what follows the closing quote.
func parseStringLiteral(s string) (string, string, error) {
	s = strings.TrimLeft(s, " ")
	if s == "" || s[0] != '\'' {
		return "", "", apierr.New(apierr.InvalidURI)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteString(s[1 : i+1])
			s = s[i+1:]
			i = 0
			continue
		}
		b.WriteString(s[1:i])
		return b.String(), strings.TrimLeft(s[i+1:], " "), nil
	}
	return "", "", apierr.New(apierr.InvalidURI)
}
