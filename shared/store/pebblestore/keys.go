package pebblestore

import (
	"bytes"
	"fmt"
)

// Key spaces: the first byte of every key (see the package doc).
const (
	spaceMeta     byte = 0x01 // "format" -> layout version
	spaceCatalog  byte = 0x02 // account, lower-cased table -> table info record
	spaceService  byte = 0x03 // account -> service properties record
	spaceEntities byte = 0x04 // account, lower-cased table, PartitionKey, RowKey -> entity record
)

// keyFormat is the meta key holding the layout version.
var keyFormat = []byte{spaceMeta, 'f', 'o', 'r', 'm', 'a', 't'}

// A component (account, table, PartitionKey) is written with every 0x00
// byte escaped as 0x00 0xFF and ends with 0x00 0x01. Byte order of the
// encodings is then the byte order of the strings, whatever they hold: a
// string that is a prefix of another ends with 0x00 0x01, below anything
// the longer one continues with (a byte of at least 0x01, or 0x00 0xFF),
// and at the first differing byte the encodings differ as the strings do.
// The RowKey, the last component of an entity key, is written raw: nothing
// follows it. Azure forbids control characters in keys, so the escape
// never happens for data the service accepts; it keeps the order exact for
// any string anyway, the empty one included.
const (
	escByte       = 0x00
	escEscaped    = 0xFF // 0x00 0xFF: a 0x00 byte of the string
	escTerminator = 0x01 // 0x00 0x01: the end of the component
	// escPast follows 0x00 in the key just past every key whose component
	// equals a given string (0x00 0x02 > 0x00 0x01 and < 0x00 0xFF).
	escPast = 0x02
)

// appendComponent appends s, escaped and terminated.
func appendComponent(b []byte, s string) []byte {
	for {
		i := indexZero(s)
		if i < 0 {
			b = append(b, s...)
			return append(b, escByte, escTerminator)
		}
		b = append(b, s[:i]...)
		b = append(b, escByte, escEscaped)
		s = s[i+1:]
	}
}

func indexZero(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// componentPast turns a key ending with a component's terminator into the
// least key after every key that starts with it: the component's 0x00 0x01
// becomes 0x00 0x02.
func componentPast(k []byte) []byte {
	k[len(k)-1] = escPast
	return k
}

// readComponent splits an escaped, terminated component off the front of
// k, returning it unescaped and the rest of k.
func readComponent(k []byte) (component []byte, rest []byte, err error) {
	i := bytes.IndexByte(k, escByte)
	if i < 0 || i+1 >= len(k) {
		return nil, nil, fmt.Errorf("%w: key component without terminator", ErrCorrupt)
	}
	if k[i+1] == escTerminator {
		// The usual case: no escaped byte, so the component is a slice of k.
		return k[:i], k[i+2:], nil
	}
	var out []byte
	for {
		switch k[i+1] {
		case escTerminator:
			return append(out, k[:i]...), k[i+2:], nil
		case escEscaped:
			out = append(out, k[:i]...)
			out = append(out, 0)
			k = k[i+2:]
		default:
			return nil, nil, fmt.Errorf("%w: key holds a bad escape 0x00 0x%02x", ErrCorrupt, k[i+1])
		}
		i = bytes.IndexByte(k, escByte)
		if i < 0 || i+1 >= len(k) {
			return nil, nil, fmt.Errorf("%w: key component without terminator", ErrCorrupt)
		}
	}
}

// catalogPrefix is the start of every catalog key of account.
func catalogPrefix(account string) []byte {
	return appendComponent([]byte{spaceCatalog}, account)
}

// catalogKey is the catalog key of a table, by its lower-cased name.
func catalogKey(account, lowerTable string) []byte {
	return appendComponent(catalogPrefix(account), lowerTable)
}

// serviceKey is the key of account's service properties.
func serviceKey(account string) []byte {
	return appendComponent([]byte{spaceService}, account)
}

// tablePrefix is the start of every entity key of a table: the range a
// Delete Table removes and a query stays within.
func tablePrefix(account, lowerTable string) []byte {
	b := make([]byte, 0, 1+len(account)+len(lowerTable)+4+64)
	b = append(b, spaceEntities)
	b = appendComponent(b, account)
	return appendComponent(b, lowerTable)
}

// appendEntityKey appends the key suffix of an entity within its table:
// the escaped PartitionKey, then the RowKey as it is.
func appendEntityKey(b []byte, pk, rk string) []byte {
	b = appendComponent(b, pk)
	return append(b, rk...)
}

// splitEntityKey returns the PartitionKey and RowKey of an entity key with
// its table prefix removed.
func splitEntityKey(suffix []byte) (pk, rk []byte, err error) {
	pk, rk, err = readComponent(suffix)
	if err != nil {
		return nil, nil, fmt.Errorf("entity key %q: %w", suffix, err)
	}
	return pk, rk, nil
}
