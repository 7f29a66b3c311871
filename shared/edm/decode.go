package edm

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"sync"
	"unicode/utf8"
)

// DecodeObject decodes one entity as the Table service receives it: a flat
// JSON object of properties in the OData JSON ("JSON light") format. It calls
// fn once per property, in document order. A property sent as null arrives
// with null=true, and its Value carries only the annotated type, if any.
//
// Members are handled as follows:
//   - "Name@odata.type" declares Name's Edm type. It may come before or after
//     the value. Edm.Int64 comes as a JSON string ("123"; a number is
//     accepted too). Edm.Double comes as a number or as "NaN", "Infinity",
//     "-Infinity" (a numeric string is accepted too). Edm.DateTime, Edm.Guid
//     and Edm.Binary (standard base64) come as strings.
//   - Without an annotation, a string is an Edm.String and true or false is
//     an Edm.Boolean. An integral number (no fraction, no exponent) within
//     the Int32 range is an Edm.Int32, and any other number is an Edm.Double.
//     That includes 3000000000. Azure infers Double for integral values
//     beyond Int32 (github.com/microsoft/AzureStorageExplorer/issues/1382:
//     an unannotated 5454161346626 "become[s] a Double"), never Int64.
//   - Members named "odata.*" (odata.metadata, odata.etag, odata.type,
//     odata.id, odata.editLink, ...) and any annotation other than
//     "@odata.type" ("@odata.etag", "Name@some.term", ...) are ignored. So is
//     a type annotation whose property is absent.
//
// Errors are *Error values whose Kind tells malformed JSON (ErrSyntax), a
// nested object or array (ErrNested; Azure answers InvalidInput), an unknown
// type (ErrUnknownType), a value that does not fit its type (ErrBadValue), a
// value out of range (ErrOutOfRange), a repeated member (ErrDuplicate) and
// a body past MaxMembers (ErrTooManyMembers, found
// while scanning, so nothing past the bound is even tokenized).
// All of these are found before fn is called for the first time, except for
// the per-value errors (bad value, out of range), which are found in order.
// An error returned by fn stops decoding and is returned as it is.
func DecodeObject(data []byte, fn func(name string, v Value, null bool) error) error {
	d := decoderPool.Get().(*decoder)
	defer d.release()
	d.data = data
	if err := d.scanObject(); err != nil {
		return err
	}
	if err := d.resolve(); err != nil {
		return err
	}
	d.text = d.collectStrings()
	for i := range d.members {
		m := &d.members[i]
		if m.role != roleProperty {
			continue
		}
		name := d.text[m.nameA:m.nameB]
		v, null, err := d.value(m, name)
		if err != nil {
			return err
		}
		if err := fn(name, v, null); err != nil {
			return err
		}
	}
	return nil
}

// collectStrings copies every string the callbacks will receive (property
// names, Edm.String values and canonical Edm.Guid values) into d.arena and
// converts the arena to one string. Names and values are substrings of it,
// so an entity costs one allocation for all of its text instead of one per
// name and value; they share one backing array, which lives as long as
// any of them and is about the entity's size. Each member records its
// spans in nameA..nameB and strA..strB.
func (d *decoder) collectStrings() string {
	d.arena = d.arena[:0]
	for i := range d.members {
		m := &d.members[i]
		if m.role != roleProperty {
			continue
		}
		m.nameA = len(d.arena)
		d.arena = append(d.arena, d.name(m)...)
		m.nameB = len(d.arena)
		if m.kind != kindString {
			continue
		}
		var typ Type
		if m.annotation >= 0 {
			typ = d.members[m.annotation].annotated
		}
		start := len(d.arena)
		switch typ {
		case 0, String:
			raw := d.data[m.valStart:m.valEnd]
			if m.valEscaped {
				d.arena = unescape(d.arena, raw)
			} else {
				d.arena = append(d.arena, raw...)
			}
			m.strReady = true
		case Guid:
			// A Guid that does not parse is left to value, which reports it
			// in document order.
			d.arena, m.strReady = appendGuid(d.arena, d.stringBytes(m))
		}
		m.strA, m.strB = start, len(d.arena)
	}
	return string(d.arena)
}

// valueKind is the JSON kind of a member's value.
type valueKind uint8

const (
	kindString valueKind = iota + 1
	kindNumber
	kindTrue
	kindFalse
	kindNull
)

// memberRole says what a member means to the entity.
type memberRole uint8

const (
	roleIgnored    memberRole = iota // odata.* and foreign annotations
	roleProperty                     // a property value
	roleAnnotation                   // Name@odata.type
)

// member is one "name": value pair found by the scanner. Names and values
// are kept as spans of the input so that nothing is copied until it is used.
type member struct {
	nameStart, nameEnd int
	valStart, valEnd   int // for strings, the content between the quotes
	// nameEscaped tells that the name has escapes; unescapedA..unescapedB
	// is then the unescaped name in the decoder's unescaped buffer. (A
	// member holds no pointer, so filling one needs no write barrier and
	// nothing has to be cleared before the decoder is pooled again.)
	nameEscaped            bool
	unescapedA, unescapedB int
	valEscaped             bool
	integral               bool // a number with neither fraction nor exponent
	kind                   valueKind
	role                   memberRole
	propLen                int  // annotations: length of the property part of the name
	annotation             int  // properties: index of the type annotation, or -1
	annotated              Type // annotations: the declared type
	// hash is a hash of the unescaped name and, for an annotation,
	// propHash one of its property's name: resolve compares them before
	// comparing names.
	hash, propHash uint32
	// nameA..nameB and strA..strB are the name and the string value in
	// the arena (see collectStrings); strReady tells that the value is
	// there.
	nameA, nameB, strA, strB int
	strReady                 bool
}

type decoder struct {
	data    []byte
	pos     int
	members []member
	// unescaped holds the names written with escapes, unescaped.
	unescaped []byte
	scratch   []byte
	// arena collects the strings of one decode, and text is the arena as a
	// string (see collectStrings).
	arena []byte
	text  string
}

// decoderPool recycles decoders so that a decode allocates nothing but the
// names and values it hands out.
var decoderPool = sync.Pool{New: func() any { return &decoder{members: make([]member, 0, 16)} }}

// release pools d unless a huge request grew its byte buffers, which would
// then stay pinned. Its members need no such check: scanObject stops at
// MaxMembers+1, so they are as many as a legal entity may need, and a
// refused hostile body reuses the same decoder as a legal one.
func (d *decoder) release() {
	if cap(d.scratch) > 64<<10 || cap(d.arena) > 64<<10 || cap(d.unescaped) > 64<<10 {
		return
	}
	d.data, d.pos, d.members, d.unescaped, d.scratch, d.arena, d.text = nil, 0, d.members[:0], d.unescaped[:0], d.scratch[:0], d.arena[:0], ""
	decoderPool.Put(d)
}

func (d *decoder) syntax(msg string) *Error {
	return &Error{Kind: ErrSyntax, Offset: d.pos, Msg: msg}
}

// skipSpace moves past JSON whitespace. Compact JSON, what the SDKs send,
// has none, so the check for it is small enough to inline at every call.
func (d *decoder) skipSpace() {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' {
		return
	}
	d.skipSpaceSlow()
}

func (d *decoder) skipSpaceSlow() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// scanObject tokenizes the whole body into d.members, checking the JSON
// grammar, escapes and UTF-8 as it goes.
func (d *decoder) scanObject() error {
	// A UTF-8 byte order mark is tolerated, as .NET readers tolerate it.
	if bytes.HasPrefix(d.data, []byte("\xEF\xBB\xBF")) {
		d.pos = 3
	}
	d.skipSpace()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return d.syntax("the body must be a JSON object")
	}
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return d.finish()
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.syntax("expected a member name")
		}
		// The member is filled in place: it is large enough that building
		// it on the stack and copying it in is a cost of its own.
		d.members = append(d.members, member{annotation: -1, nameStart: d.pos + 1})
		m := &d.members[len(d.members)-1]
		esc, err := d.scanString()
		if err != nil {
			return err
		}
		m.nameEnd = d.pos - 1
		if esc {
			m.nameEscaped, m.unescapedA = true, len(d.unescaped)
			d.unescaped = unescape(d.unescaped, d.data[m.nameStart:m.nameEnd])
			m.unescapedB = len(d.unescaped)
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.syntax("expected ':' after a member name")
		}
		d.pos++
		d.skipSpace()
		if err := d.scanValue(m); err != nil {
			return err
		}
		if len(d.members) > MaxMembers {
			return &Error{Kind: ErrTooManyMembers, Offset: m.nameStart, Msg: "more than " + strconv.Itoa(MaxMembers) + " members"}
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.syntax("unterminated object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
			continue
		case '}':
			d.pos++
			return d.finish()
		}
		return d.syntax("expected ',' or '}'")
	}
}

// MaxMembers bounds what DecodeObject scans, so a hostile body of a few
// MiB holding hundreds of thousands of tiny members costs no more than one
// with a legal entity: scanning stops at the first member past it with
// ErrTooManyMembers. An entity holds "up to 255 properties, including
// three system properties", each of which can come with its
// "@odata.type" annotation, plus a few "odata.*" members: 1024 members
// leave room for that twice over. How many properties an entity may have
// is the model's to enforce.
const MaxMembers = 1024

func (d *decoder) finish() error {
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.syntax("data after the object")
	}
	return nil
}

func (d *decoder) scanValue(m *member) error {
	if d.pos >= len(d.data) {
		return d.syntax("expected a value")
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		m.kind, m.valStart = kindString, d.pos+1
		esc, err := d.scanString()
		if err != nil {
			return err
		}
		m.valEnd, m.valEscaped = d.pos-1, esc
		return nil
	case c == '{' || c == '[':
		// Entities are flat: Azure rejects complex and collection values.
		return &Error{Kind: ErrNested, Property: d.nameString(m), Offset: d.pos, Msg: "nested objects and arrays are not supported"}
	case c == 't':
		return d.scanLiteral(m, "true", kindTrue)
	case c == 'f':
		return d.scanLiteral(m, "false", kindFalse)
	case c == 'n':
		return d.scanLiteral(m, "null", kindNull)
	case c == '-' || (c >= '0' && c <= '9'):
		m.kind, m.valStart = kindNumber, d.pos
		end, integral, ok := scanNumber(d.data, d.pos)
		if !ok {
			d.pos = end
			return d.syntax("malformed number")
		}
		d.pos, m.valEnd, m.integral = end, end, integral
		return nil
	}
	return d.syntax("expected a value")
}

func (d *decoder) scanLiteral(m *member, lit string, kind valueKind) error {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(lit)) {
		return d.syntax("invalid literal")
	}
	m.kind, m.valStart, m.valEnd = kind, d.pos, d.pos+len(lit)
	d.pos += len(lit)
	return nil
}

// scanString moves past the string that starts at d.pos (the opening quote)
// and reports whether it holds escapes. It rejects raw control characters,
// invalid escapes, lone surrogates and invalid UTF-8.
func (d *decoder) scanString() (escaped bool, err error) {
	b := d.data
	i := d.pos + 1
	for {
		i = skipPlain(b, i)
		if i >= len(b) {
			d.pos = i
			return false, d.syntax("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			d.pos = i + 1
			return escaped, nil
		case c == '\\':
			n := escapeLen(b, i)
			if n == 0 {
				d.pos = i
				return false, d.syntax("invalid escape sequence")
			}
			escaped = true
			i += n
		case c < 0x20:
			d.pos = i
			return false, d.syntax("control character in string")
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				d.pos = i
				return false, d.syntax("invalid UTF-8")
			}
			i += size
		}
	}
}

// name returns a member's unescaped name: from the unescaped buffer for a
// name written with escapes (scanObject unescapes it), the input
// otherwise. It runs several times per member and is small enough to
// inline.
func (d *decoder) name(m *member) []byte {
	if m.nameEscaped {
		return d.unescaped[m.unescapedA:m.unescapedB]
	}
	return d.data[m.nameStart:m.nameEnd]
}

func (d *decoder) nameString(m *member) string { return string(d.name(m)) }

// propertyName is the name a member speaks for: the property itself, or the
// property an annotation annotates.
func (d *decoder) propertyName(m *member) string {
	n := d.name(m)
	if m.role == roleAnnotation {
		n = n[:m.propLen]
	}
	return string(n)
}

var (
	odataPrefix    = []byte("odata.")
	typeAnnotation = []byte("odata.type")
)

// smallObject is the member count up to which duplicate and annotation
// lookups use a smallIndex on the stack instead of a map.
const smallObject = 64

// smallIndex is an open-addressing hash table of up to smallObject member
// indexes, keyed by the members' name hashes. A slot holds index+1, so the
// zero value is empty; twice as many slots as members keep probes short.
type smallIndex [2 * smallObject]uint8

func (t *smallIndex) insert(hash uint32, i int) {
	slot := hash % uint32(len(t))
	for t[slot] != 0 {
		slot = (slot + 1) % uint32(len(t))
	}
	t[slot] = uint8(i + 1)
}

// lookup returns the index of the member named name in t, or -1.
func (d *decoder) lookup(t *smallIndex, hash uint32, name []byte) int {
	slot := hash % uint32(len(t))
	for t[slot] != 0 {
		j := int(t[slot]) - 1
		if m := &d.members[j]; m.hash == hash && string(d.name(m)) == string(name) {
			return j
		}
		slot = (slot + 1) % uint32(len(t))
	}
	return -1
}

// resolve classifies the members, rejects duplicates and pairs every type
// annotation with its property.
func (d *decoder) resolve() error {
	annotations := 0
	for i := range d.members {
		m := &d.members[i]
		n := d.name(m)
		m.hash = hashName(n)
		switch at := bytes.IndexByte(n, '@'); {
		case bytes.HasPrefix(n, odataPrefix):
			m.role = roleIgnored
		case at < 0:
			m.role = roleProperty
		case at > 0 && bytes.Equal(n[at+1:], typeAnnotation):
			m.role, m.propLen = roleAnnotation, at
			m.propHash = hashName(n[:at])
			annotations++
		default:
			m.role = roleIgnored // instance annotation or another term
		}
	}
	var index map[string]int
	var small smallIndex
	if len(d.members) > smallObject {
		index = make(map[string]int, len(d.members))
		for i := range d.members {
			m := &d.members[i]
			if _, dup := index[string(d.name(m))]; dup {
				return d.duplicate(m)
			}
			index[string(d.name(m))] = i
		}
	} else {
		for i := range d.members {
			m := &d.members[i]
			if d.lookup(&small, m.hash, d.name(m)) >= 0 {
				return d.duplicate(m)
			}
			small.insert(m.hash, i)
		}
	}
	if annotations == 0 {
		return nil
	}
	for i := range d.members {
		a := &d.members[i]
		if a.role != roleAnnotation {
			continue
		}
		t, err := d.annotationType(a)
		if err != nil {
			return err
		}
		a.annotated = t
		prop := d.name(a)[:a.propLen]
		p := -1
		if index != nil {
			if j, ok := index[string(prop)]; ok {
				p = j
			}
		} else {
			p = d.lookup(&small, a.propHash, prop)
		}
		if p >= 0 && d.members[p].role == roleProperty {
			d.members[p].annotation = i
		}
	}
	return nil
}

// hashName is enough to tell names apart before comparing them: a
// multiply-xorshift mix of the name's length and its 8-byte words (the last
// one overlapping, or for a short name its one word zero-padded), which
// costs a few instructions per word instead of per byte.
func hashName(n []byte) uint32 {
	const mul = 0x9E3779B97F4A7C15
	h := uint64(len(n)) * mul
	if len(n) <= 8 {
		var w uint64
		if cap(n) >= 8 {
			// A name is a slice of the body (or of its unescaped copy),
			// so the word can usually be read in place and masked (a
			// shift by 64 is 0 in Go, so 8 bytes keep the whole word).
			w = binary.LittleEndian.Uint64(n[:8]) & (1<<(8*len(n)) - 1)
		} else {
			var buf [8]byte
			copy(buf[:], n)
			w = binary.LittleEndian.Uint64(buf[:])
		}
		h = (h ^ w) * mul
		return uint32(h ^ h>>32)
	}
	last := binary.LittleEndian.Uint64(n[len(n)-8:])
	for ; len(n) > 8; n = n[8:] {
		h = (h ^ binary.LittleEndian.Uint64(n)) * mul
		h ^= h >> 32
	}
	h = (h ^ last) * mul
	return uint32(h ^ h>>32)
}

func (d *decoder) duplicate(m *member) error {
	return &Error{Kind: ErrDuplicate, Property: d.propertyName(m), Offset: m.nameStart, Msg: "member " + quoteForMsg(d.nameString(m)) + " appears more than once"}
}

// annotationType reads the Edm type an "@odata.type" annotation declares.
func (d *decoder) annotationType(a *member) (Type, error) {
	if a.kind == kindString {
		if t, ok := parseTypeBytes(d.stringBytes(a)); ok {
			return t, nil
		}
	}
	return 0, &Error{Kind: ErrUnknownType, Property: d.propertyName(a), Offset: a.valStart,
		Msg: "unsupported type " + quoteForMsg(string(d.data[a.valStart:a.valEnd]))}
}

// parseTypeBytes is ParseType on the bytes of an annotation, which every
// typed property of a request carries: a switch on the bytes converts
// nothing and compares against the names by length first.
func parseTypeBytes(name []byte) (Type, bool) {
	switch string(name) {
	case "Edm.Binary":
		return Binary, true
	case "Edm.Boolean":
		return Boolean, true
	case "Edm.DateTime":
		return DateTime, true
	case "Edm.Double":
		return Double, true
	case "Edm.Guid":
		return Guid, true
	case "Edm.Int32":
		return Int32, true
	case "Edm.Int64":
		return Int64, true
	case "Edm.String":
		return String, true
	}
	return 0, false
}

// str returns a string member's value prepared by collectStrings.
func (d *decoder) str(m *member) string { return d.text[m.strA:m.strB] }

// stringBytes returns the unescaped content of a string member's value. The
// result may alias d.scratch and is valid until the next call.
func (d *decoder) stringBytes(m *member) []byte {
	raw := d.data[m.valStart:m.valEnd]
	if !m.valEscaped {
		return raw
	}
	d.scratch = unescape(d.scratch[:0], raw)
	return d.scratch
}

// quoteForMsg quotes s for an error message, shortened so that a huge input
// cannot make a huge message.
func quoteForMsg(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}
