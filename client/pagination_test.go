package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
)

// list serves items[offset:offset+limit], like an offset/limit endpoint.
type list struct {
	items     []int
	withTotal bool
	failAt    int // fail the fetch at this offset, -1 never
	calls     []int
}

func (l *list) fetch(_ context.Context, offset, limit int) (client.Page[int], error) {
	l.calls = append(l.calls, offset)
	if offset == l.failAt {
		return client.Page[int]{}, errors.New("boom")
	}
	end := min(offset+limit, len(l.items))
	p := client.Page[int]{Items: l.items[min(offset, end):end], Total: -1}
	if l.withTotal {
		p.Total = len(l.items)
	}
	return p, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestPaginate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		n, size   int
		withTotal bool
		wantCalls []int
	}{
		{"ok/empty", 0, 10, false, []int{0}},
		{"ok/one short page", 7, 10, false, []int{0}},
		{"ok/exact pages without total fetch one empty page", 20, 10, false, []int{0, 10, 20}},
		{"ok/exact pages with total stop at total", 20, 10, true, []int{0, 10}},
		{"ok/three pages", 25, 10, false, []int{0, 10, 20}},
		{"ok/default size", 15, 0, true, []int{0, 10}},
		{"ok/size clamped to 100", 250, 1000, true, []int{0, 100, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := &list{items: seq(tc.n), withTotal: tc.withTotal, failAt: -1}
			var got []int
			for v, err := range client.Paginate(t.Context(), tc.size, l.fetch) {
				require.NoError(t, err)
				got = append(got, v)
			}
			if tc.n > 0 {
				assert.Equal(t, seq(tc.n), got)
			}
			assert.Len(t, got, tc.n)
			assert.Equal(t, tc.wantCalls, l.calls)
		})
	}
}

func TestPaginateBreakStopsFetching(t *testing.T) {
	t.Parallel()
	l := &list{items: seq(100), failAt: -1}
	var got []int
	for v, err := range client.Paginate(t.Context(), 10, l.fetch) {
		require.NoError(t, err)
		got = append(got, v)
		if v == 14 {
			break
		}
	}
	assert.Equal(t, seq(15), got)
	assert.Equal(t, []int{0, 10}, l.calls)
}

func TestPaginateError(t *testing.T) {
	t.Parallel()
	l := &list{items: seq(30), failAt: 10}
	var got []int
	var errs []error
	for v, err := range client.Paginate(t.Context(), 10, l.fetch) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, v)
	}
	assert.Equal(t, seq(10), got)
	require.Len(t, errs, 1)
	assert.EqualError(t, errs[0], "boom")
}

func TestPaginateCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	l := &list{items: seq(30), failAt: -1}
	var errs []error
	n := 0
	for _, err := range client.Paginate(ctx, 10, l.fetch) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n++; n == 10 {
			cancel()
		}
	}
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.Equal(t, []int{0}, l.calls)
}
