package migrate

import (
	"fmt"
	"slices"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// DecodeEntity decodes one entity as a query response carries it, at any
// metadata level, with edm's decoder: an annotation wins, and without one an
// integral number in the Int32 range is an Int32 and any other number a
// Double (see edm.DecodeObject). Timestamp is read whether it is annotated
// (full metadata) or not (minimal metadata: a bare string). odata.* members
// are ignored and null properties are absent, as Azure treats them.
//
// This is why the migration never lets the SDK decode entities: aztables
// re-encodes every payload through map[string]any, so an integral Edm.Double
// such as 1.0 or -0.0 would come out as "1" or "-0" and read back as an
// Int32.
func DecodeEntity(raw []byte) (*model.Entity, error) {
	e := &model.Entity{Properties: make(map[string]edm.Value, 8)}
	var hasPK, hasRK bool
	err := edm.DecodeObject(raw, func(name string, v edm.Value, null bool) error {
		if null {
			return nil
		}
		switch name {
		case model.PartitionKeyName, model.RowKeyName:
			if v.Type != edm.String {
				return fmt.Errorf("%s is %s, not Edm.String", name, v.Type)
			}
			if name == model.PartitionKeyName {
				e.PartitionKey, hasPK = v.Str, true
			} else {
				e.RowKey, hasRK = v.Str, true
			}
			return nil
		case model.TimestampName:
			switch v.Type {
			case edm.DateTime:
				e.Timestamp = v.Time
			case edm.String:
				t, err := edm.ParseDateTime(v.Str)
				if err != nil {
					return fmt.Errorf("the Timestamp: %w", err)
				}
				e.Timestamp = t
			default:
				return fmt.Errorf("the Timestamp is %s, not Edm.DateTime", v.Type)
			}
			return nil
		}
		e.Properties[name] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasPK || !hasRK {
		return nil, fmt.Errorf("entity without PartitionKey or RowKey")
	}
	return e, nil
}

// AppendEntityJSON appends e as one JSON object in the full-metadata style:
// PartitionKey, RowKey, then Timestamp when withTimestamp (as Edm.DateTime),
// then the properties in name order. Every property that is not an
// Edm.String carries its "Name@odata.type" annotation, Int32, Double and
// Boolean included, so no reader has to infer a type:
//   - aztables' SubmitTransaction decodes each entity into map[string]any and
//     encodes it again, which turns 1.0 into 1; with the annotation the
//     service still reads an Edm.Double.
//   - the export format stays readable by any OData reader without the
//     inference rules.
func AppendEntityJSON(dst []byte, e *model.Entity, withTimestamp bool) []byte {
	return appendEntityJSON(dst, e, withTimestamp, annotateAll)
}

// annotateFor decides which properties carry a type annotation.
type annotateFor func(edm.Type) bool

// annotateAll annotates every type but Edm.String: the export format.
func annotateAll(t edm.Type) bool { return t != edm.String }

// annotateForSDK annotates what the SDK's trip through map[string]any
// would lose: types JSON carries as strings (Int64, DateTime, Guid,
// Binary) and Double, which comes out as "1" or "-0" when integral. Int32
// and Boolean come through as they are, and leaving their annotations out
// spares the SDK a map entry each on the hot path of every transaction.
func annotateForSDK(t edm.Type) bool {
	switch t {
	case edm.Int64, edm.DateTime, edm.Guid, edm.Binary, edm.Double:
		return true
	}
	return false
}

func appendEntityJSON(dst []byte, e *model.Entity, withTimestamp bool, annotate annotateFor) []byte {
	dst = append(dst, '{')
	dst = edm.AppendProperty(dst, model.PartitionKeyName, edm.NewString(e.PartitionKey), edm.NoMetadata)
	dst = append(dst, ',')
	dst = edm.AppendProperty(dst, model.RowKeyName, edm.NewString(e.RowKey), edm.NoMetadata)
	if withTimestamp && !e.Timestamp.IsZero() {
		dst = append(dst, ',')
		dst = appendAnnotated(dst, model.TimestampName, edm.Value{Type: edm.DateTime, Time: e.Timestamp}, annotate)
	}
	for _, name := range sortedNames(e) {
		dst = append(dst, ',')
		dst = appendAnnotated(dst, name, e.Properties[name], annotate)
	}
	return append(dst, '}')
}

func appendAnnotated(dst []byte, name string, v edm.Value, annotate annotateFor) []byte {
	if annotate(v.Type) {
		dst = edm.AppendString(dst, name+"@odata.type")
		dst = append(dst, ':')
		dst = edm.AppendString(dst, v.Type.String())
		dst = append(dst, ',')
	}
	dst = edm.AppendString(dst, name)
	dst = append(dst, ':')
	return edm.AppendValue(dst, v)
}

func sortedNames(e *model.Entity) []string {
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// keepTimestamp stores the source's Timestamp as the DateTime property name,
// because the destination assigns its own Timestamp on every write.
func keepTimestamp(e *model.Entity, name string) error {
	if name == "" {
		return nil
	}
	if _, taken := e.Properties[name]; taken {
		return fmt.Errorf("entity (PartitionKey %q, RowKey %q) already has a property %q; choose another -keep-timestamp name", e.PartitionKey, e.RowKey, name)
	}
	if e.Timestamp.IsZero() {
		return fmt.Errorf("entity (PartitionKey %q, RowKey %q) came without a Timestamp to keep", e.PartitionKey, e.RowKey)
	}
	e.Properties[name] = edm.NewDateTime(e.Timestamp)
	return nil
}

// ValidateKeepTimestamp checks a -keep-timestamp property name: a legal
// custom property name, not a system one.
func ValidateKeepTimestamp(name string) error {
	if name == "" {
		return nil
	}
	switch name {
	case model.PartitionKeyName, model.RowKeyName, model.TimestampName:
		return fmt.Errorf("keep-timestamp: %q is a system property", name)
	}
	if err := model.ValidatePropertyName(name); err != nil {
		return fmt.Errorf("keep-timestamp: %q: %w", name, err)
	}
	return nil
}
