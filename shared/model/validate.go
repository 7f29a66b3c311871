package model

import (
	"strconv"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

// ValidateValue checks one property value against the limits of its type:
//   - An Edm.String holds at most MaxStringLength UTF-16 code units, and an
//     Edm.Binary at most MaxBinaryLength bytes. Past that is 400
//     PropertyValueTooLarge.
//   - An Edm.DateTime lies within edm.MinDateTime..edm.MaxDateTime. Outside
//     is 400 OutOfRangeInput.
//
// A value the decoder cannot produce (no type, a malformed Guid, invalid
// UTF-8) is 400 InvalidInput. name is only used in error details.
func ValidateValue(name string, v edm.Value) error {
	switch v.Type {
	case edm.String:
		if len(v.Str) > MaxStringLength && utf16Len(v.Str) > MaxStringLength {
			return newError(apierr.PropertyValueTooLarge, msgPropertyValueTooLarge, "PropertyName: "+quote(name))
		}
		if !utf8.ValidString(v.Str) {
			return newError(apierr.InvalidInput, "", "The value of "+quote(name)+" is not valid UTF-8.")
		}
	case edm.Binary:
		if len(v.Bin) > MaxBinaryLength {
			return newError(apierr.PropertyValueTooLarge, msgPropertyValueTooLarge, "PropertyName: "+quote(name))
		}
	case edm.DateTime:
		if v.Time.Before(edm.MinDateTime) || v.Time.After(edm.MaxDateTime) {
			return newError(apierr.OutOfRangeInput, "", "The Edm.DateTime value of "+quote(name)+" is outside 1601-01-01 to 9999-12-31.")
		}
	case edm.Guid:
		if g, ok := edm.ParseGuid(v.Str); !ok || g != v.Str {
			return newError(apierr.InvalidInput, "", "The Edm.Guid value of "+quote(name)+" is not canonical.")
		}
	case edm.Int32:
		if v.Int != int64(int32(v.Int)) {
			return newError(apierr.InvalidInput, "", "The Edm.Int32 value of "+quote(name)+" is out of range.")
		}
	case edm.Boolean, edm.Int64, edm.Double:
	default:
		return newError(apierr.InvalidInput, "", "The property "+quote(name)+" has no valid Edm type.")
	}
	return nil
}

// checkDecodedValue is ValidateValue for a value edm.DecodeObject made.
// The decoder refuses invalid UTF-8 and lone surrogates, values outside the
// Int32 and DateTime ranges, and Guids it cannot put in canonical form, so
// only the size limits are left to check rather than parsing each value
// again. FuzzDecodeEntity checks that every decoded entity still passes
// ValidateEntity.
func checkDecodedValue(name string, v edm.Value) error {
	switch v.Type {
	case edm.String:
		if len(v.Str) > MaxStringLength && utf16Len(v.Str) > MaxStringLength {
			return newError(apierr.PropertyValueTooLarge, msgPropertyValueTooLarge, "PropertyName: "+quote(name))
		}
	case edm.Binary:
		if len(v.Bin) > MaxBinaryLength {
			return newError(apierr.PropertyValueTooLarge, msgPropertyValueTooLarge, "PropertyName: "+quote(name))
		}
	}
	return nil
}

// ValidateEntity checks a whole entity against the data model. Every
// insert, update, merge result and batch operation goes through it before
// anything is stored. Checks run in this order, and the first violation is
// returned:
//  1. The keys (ValidateKey).
//  2. Each custom property's name (ValidatePropertyName) and value
//     (ValidateValue). A system name used as a custom property is 400
//     PropertyNameInvalid. When several properties break a rule, the one
//     whose name sorts first is reported, so the answer does not depend on
//     map order.
//  3. The count: more than MaxProperties custom properties is 400
//     TooManyProperties.
//  4. The size: EntitySize above MaxEntitySize is 400 EntityTooLarge.
func ValidateEntity(e *Entity) error {
	if err := ValidateKey(e.PartitionKey, false); err != nil {
		return err
	}
	if err := ValidateKey(e.RowKey, true); err != nil {
		return err
	}
	var (
		firstBad string
		badErr   error
	)
	for name, v := range e.Properties {
		if badErr != nil && name >= firstBad {
			continue
		}
		if err := validateProperty(name, v); err != nil {
			firstBad, badErr = name, err
		}
	}
	if badErr != nil {
		return badErr
	}
	if len(e.Properties) > MaxProperties {
		return tooManyProperties(len(e.Properties))
	}
	if size := EntitySize(e); size > MaxEntitySize {
		return entityTooLarge(size)
	}
	return nil
}

func validateProperty(name string, v edm.Value) error {
	if isSystemName(name) {
		return newError(apierr.PropertyNameInvalid, "", "The system property "+quote(name)+" cannot be a custom property.")
	}
	if err := ValidatePropertyName(name); err != nil {
		return err
	}
	return ValidateValue(name, v)
}

func isSystemName(name string) bool {
	return name == PartitionKeyName || name == RowKeyName || name == TimestampName
}

func tooManyProperties(n int) error {
	return newError(apierr.TooManyProperties, msgTooManyProperties, "Custom properties: "+strconv.Itoa(n))
}

func entityTooLarge(size int) error {
	return newError(apierr.EntityTooLarge, msgEntityTooLarge, "Entity size: "+strconv.Itoa(size)+" bytes")
}

// ValidateBatchSize refuses an entity group transaction of more than
// MaxBatchOperations operations with Azure's 400 InvalidInput. The caller
// places it at index 0, as Azure does whichever operation is the 101st.
func ValidateBatchSize(operations int) error {
	if operations > MaxBatchOperations {
		return newError(apierr.InvalidInput, msgTooManyBatchOperations, "")
	}
	return nil
}
