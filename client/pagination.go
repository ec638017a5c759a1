package client

import (
	"context"
	"iter"
)

// Pagination limits of the API: 10 items by default, at most 100
// (docs/decisions/keys-and-limits.md).
const (
	DefaultPageSize = 10
	MaxPageSize     = 100
)

// Page is one page of an offset/limit list.
type Page[T any] struct {
	Items []T
	// Total is the number of items in the whole list when the server says,
	// or -1.
	Total int
}

// PageFunc fetches the page of at most limit items starting at offset.
type PageFunc[T any] func(ctx context.Context, offset, limit int) (Page[T], error)

// Paginate walks an offset/limit list page by page, fetching the next page
// only when the loop needs it; breaking out of the loop stops fetching.
// pageSize is clamped to 1..MaxPageSize (0 means DefaultPageSize). The walk
// ends at a short or empty page, or at Total. A failed fetch yields the zero T
// and the error once and ends the walk.
//
// Items added or removed while walking can shift offsets, as with any
// offset-based list: an item may be seen twice or missed.
func Paginate[T any](ctx context.Context, pageSize int, fetch PageFunc[T]) iter.Seq2[T, error] {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)
	return func(yield func(T, error) bool) {
		offset := 0
		for {
			if err := ctx.Err(); err != nil {
				var zero T
				yield(zero, err)
				return
			}
			page, err := fetch(ctx, offset, pageSize)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			offset += len(page.Items)
			if len(page.Items) < pageSize || (page.Total >= 0 && offset >= page.Total) {
				return
			}
		}
	}
}

// All collects a list walk (ListKeys, ListIssuers, …) into a slice: every
// item, or the first error.
func All[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for it, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}
