package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestCheckMergedLimits(t *testing.T) {
	t.Parallel()
	entity := func(n int, value edm.Value) *model.Entity {
		p := make(map[string]edm.Value, n)
		for i := range n {
			p[fmt.Sprintf("P%03d", i)] = value
		}
		return &model.Entity{Properties: p}
	}
	bin := func(n int) edm.Value { return edm.NewBinary(make([]byte, n)) }
	cases := []struct {
		name string
		e    *model.Entity
		want error // nil: within the limits
	}{
		{"MaxProperties", entity(model.MaxProperties, edm.NewBoolean(true)), nil},
		{"OneTooMany", entity(model.MaxProperties+1, edm.NewBoolean(true)), store.ErrTooManyProperties},
		// 16 binaries of 64 KiB: 16 * (8 + 2*4 + 4 + 65536) = 1,048,896 bytes,
		// plus 4: just over 1 MiB.
		{"JustOverOneMiB", entity(16, bin(64<<10)), store.ErrEntityTooLarge},
		{"JustUnderOneMiB", entity(16, bin(64<<10-24)), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := store.CheckMergedLimits(c.e)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("CheckMergedLimits = %v; want %v (size %d)", err, c.want, model.EntitySize(c.e))
			}
		})
	}
}
