package auth

import "github.com/tablebridge/tablebridge/shared/model"

// keyRange is a table SAS entity range. Azure ("Specifying table access
// ranges") orders entities by PartitionKey then RowKey and bounds them
// inclusively:
//
//	startpk:          PartitionKey >= startpk
//	endpk:            PartitionKey <= endpk
//	startpk, startrk: PartitionKey > startpk || (PartitionKey == startpk && RowKey >= startrk)
//	endpk, endrk:     PartitionKey < endpk   || (PartitionKey == endpk   && RowKey <= endrk)
//
// A row key bound is only meaningful with its partition key bound, which is
// why the parser refuses srk without spk and erk without epk. Presence is
// tracked apart from the value because the empty string is a legal key.
type keyRange struct {
	startPK, startRK, endPK, endRK             string
	hasStartPK, hasStartRK, hasEndPK, hasEndRK bool
}

func (k keyRange) restricted() bool { return k.hasStartPK || k.hasEndPK }

// contains applies the composite comparison with ordinal (byte) string
// order, the order in which Azure sorts keys.
func (k keyRange) contains(pk, rk string) bool {
	if k.hasStartPK {
		if pk < k.startPK {
			return false
		}
		if pk == k.startPK && k.hasStartRK && rk < k.startRK {
			return false
		}
	}
	if k.hasEndPK {
		if pk > k.endPK {
			return false
		}
		if pk == k.endPK && k.hasEndRK && rk > k.endRK {
			return false
		}
	}
	return true
}

// bounds is a per-key superset of the range: the partition keys are bounded
// inclusively, and the row keys only when the range is a single partition,
// where the composite order reduces to a plain row key interval.
func (k keyRange) bounds() model.KeyRange {
	var r model.KeyRange
	if k.hasStartPK {
		r.PartitionKey.Lower = &model.Bound{Value: k.startPK, Inclusive: true}
	}
	if k.hasEndPK {
		r.PartitionKey.Upper = &model.Bound{Value: k.endPK, Inclusive: true}
	}
	if k.hasStartPK && k.hasEndPK && k.startPK == k.endPK {
		if k.hasStartRK {
			r.RowKey.Lower = &model.Bound{Value: k.startRK, Inclusive: true}
		}
		if k.hasEndRK {
			r.RowKey.Upper = &model.Bound{Value: k.endRK, Inclusive: true}
		}
	}
	return r
}
