package model

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

// DecodedEntity is an entity read from a request body, with what the body
// said about the keys.
type DecodedEntity struct {
	// Entity holds the body's keys (empty when absent) and its custom
	// properties. Timestamp is zero: the service sets it.
	Entity *Entity
	// HasPartitionKey and HasRowKey report whether the body carried each key.
	// Insert requires both. Update and Merge take the keys from the URL, so
	// the body may leave them out.
	HasPartitionKey bool
	HasRowKey       bool
	// propertiesSize is the custom properties' share of EntitySize, summed
	// while decoding so the size check need not walk the map again.
	propertiesSize int
}

// entitySize is EntitySize(d.Entity), from the size summed while decoding.
func (d DecodedEntity) entitySize() int {
	return keysSize(d.Entity.PartitionKey, d.Entity.RowKey) + d.propertiesSize
}

// DecodeEntity decodes and validates an entity from a JSON request body
// (Insert, Update, Merge, and the operations of a batch). It is a pure
// function: everything is checked before anything is stored.
//   - JSON and Edm typing follow edm.DecodeObject. Malformed JSON, a nested
//     value, an unknown type, or a value that does not fit its type is 400
//     InvalidInput. A DateTime outside 1601..9999, or a number beyond the
//     Double range, is 400 OutOfRangeInput. A member given twice is 400
//     DuplicatePropertiesSpecified.
//   - PartitionKey and RowKey must be strings (400
//     PrimaryKeyPropertyIsInvalidType otherwise) and pass ValidateKey. A key
//     sent as null counts as absent.
//   - A client's Timestamp is ignored: the service manages it.
//   - A property sent as null is dropped. Null means absent, and nothing
//     stores it.
//   - Each custom property must pass ValidatePropertyName and
//     ValidateValue. More than MaxProperties is 400 TooManyProperties, and
//     so is a body holding more than edm.MaxMembers members, refused before
//     the members past that bound are even scanned.
//   - The entity size (EntitySize) may not exceed MaxEntitySize (400
//     EntityTooLarge). Absent keys count as empty here. A caller that takes
//     the keys from the URL should measure the entity once it has set them.
//     DecodeUpdate does that.
func DecodeEntity(body []byte) (DecodedEntity, error) {
	d, err := decodeEntity(body)
	if err != nil {
		return DecodedEntity{}, err
	}
	if size := d.entitySize(); size > MaxEntitySize {
		return DecodedEntity{}, entityTooLarge(size)
	}
	return d, nil
}

// decodeEntity is DecodeEntity without the size check, for DecodeUpdate,
// which measures the entity with the URL's keys instead of the body's.
func decodeEntity(body []byte) (DecodedEntity, error) {
	e := &Entity{Properties: make(map[string]edm.Value, propertyCountHint(body))}
	d := DecodedEntity{Entity: e}
	err := edm.DecodeObject(body, func(name string, v edm.Value, null bool) error {
		switch name {
		case PartitionKeyName, RowKeyName:
			if null {
				return nil
			}
			if v.Type != edm.String {
				return newError(codePrimaryKeyInvalidType, msgKeyInvalidType, name+" is "+v.Type.String()+".")
			}
			isRowKey := name == RowKeyName
			if err := ValidateKey(v.Str, isRowKey); err != nil {
				return err
			}
			if isRowKey {
				e.RowKey, d.HasRowKey = v.Str, true
			} else {
				e.PartitionKey, d.HasPartitionKey = v.Str, true
			}
			return nil
		case TimestampName:
			return nil
		}
		if null {
			return nil
		}
		nameLen, err := validatePropertyName(name)
		if err != nil {
			return err
		}
		if err := checkDecodedValue(name, v); err != nil {
			return err
		}
		if len(e.Properties) == MaxProperties {
			return tooManyProperties(MaxProperties + 1)
		}
		// The decoder refuses a name given twice, so no property is
		// counted twice.
		e.Properties[name] = v
		d.propertiesSize += propertySize(nameLen, v)
		return nil
	})
	if err != nil {
		return DecodedEntity{}, decodeError(err)
	}
	return d, nil
}

// DecodeInsert decodes the body of Insert Entity (or an insert in a batch).
// The body must carry both keys. A missing key, or one sent as null, is 400
// PropertiesNeedValue ("Values have not been specified for all properties
// in the entity").
func DecodeInsert(body []byte) (*Entity, error) {
	d, err := DecodeEntity(body)
	if err != nil {
		return nil, err
	}
	switch {
	case !d.HasPartitionKey:
		return nil, newError(apierr.PropertiesNeedValue, "", "PartitionKey is required.")
	case !d.HasRowKey:
		return nil, newError(apierr.PropertiesNeedValue, "", "RowKey is required.")
	}
	return d.Entity, nil
}

// DecodeUpdate decodes the body of Update, Merge, Insert Or Replace or
// Insert Or Merge Entity, addressed by the keys in the URL. The URL's keys
// name the entity, and any keys in the body are not compared with them.
// Azure's Go SDK (aztables 1.4.1) doubles single quotes in the body's keys
// (prepareKey) but not in the URL's, so comparing would refuse its updates
// of keys that contain a quote. The whole entity, its size included, is
// validated with the URL's keys.
func DecodeUpdate(body []byte, partitionKey, rowKey string) (*Entity, error) {
	d, err := decodeEntity(body)
	if err != nil {
		return nil, err
	}
	e := d.Entity
	e.PartitionKey, e.RowKey = partitionKey, rowKey
	if err := ValidateKey(partitionKey, false); err != nil {
		return nil, err
	}
	if err := ValidateKey(rowKey, true); err != nil {
		return nil, err
	}
	if size := d.entitySize(); size > MaxEntitySize {
		return nil, entityTooLarge(size)
	}
	return e, nil
}

// decodeError maps an edm decoding error to Azure's code. Errors the
// callback raised are already *apierr.Error and pass through.
func decodeError(err error) error {
	var ee *edm.Error
	if !errors.As(err, &ee) {
		return err
	}
	switch ee.Kind {
	case edm.ErrDuplicate:
		return newError(apierr.DuplicatePropertiesSpecified, "", "PropertyName: "+quote(ee.Property))
	case edm.ErrOutOfRange:
		return &apierr.Error{Code: apierr.OutOfRangeInput, Detail: ee.Msg, Err: err}
	case edm.ErrTooManyMembers:
		// The decoder stopped scanning at the bound: the body has more
		// members than an entity of MaxProperties, each annotated, needs.
		return newError(apierr.TooManyProperties, msgTooManyProperties, "The body holds more than "+strconv.Itoa(edm.MaxMembers)+" members.")
	}
	return &apierr.Error{Code: apierr.InvalidInput, Detail: ee.Msg, Err: err}
}

// propertyCountHint estimates how many custom properties body holds, to size
// the map once: each slot holds an edm.Value, so growing the map, or sizing
// it for a typical maximum, costs more than counting bytes. It
// counts colons (one per member) less at-signs (one per type annotation) and
// the two keys, with single-byte counts that run at memory speed. A colon
// inside a value (a DateTime has two) makes the hint larger, an '@' inside a
// value smaller; either way only the map's first size is off.
func propertyCountHint(body []byte) int {
	n := bytes.Count(body, colon) - bytes.Count(body, at) - 2
	return min(max(n, 0), MaxProperties)
}

var (
	colon = []byte{':'}
	at    = []byte{'@'}
)
