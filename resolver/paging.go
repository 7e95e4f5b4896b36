package resolver

import (
	"encoding/base64"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
)

// MaxPageSize bounds `first`.
const MaxPageSize = 500

func pageSize(first *int) (int, error) {
	if first == nil {
		return 50, nil
	}
	if *first < 0 || *first > MaxPageSize {
		return 0, capstan.Errorf(capstan.EINVALID, "first must be between 0 and %d, got %d", MaxPageSize, *first)
	}
	return *first, nil
}

func cursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte("c:" + key)) }

// afterKey decodes an `after` cursor into the key to start after.
func afterKey(after *string) (string, error) {
	if after == nil || *after == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(*after)
	if err != nil || len(raw) < 2 || string(raw[:2]) != "c:" {
		return "", capstan.Errorf(capstan.EINVALID, "after %q is not a cursor from this API", *after)
	}
	return string(raw[2:]), nil
}

// pageArgs decodes first and after together.
func pageArgs(first *int, after *string) (int, string, error) {
	n, err := pageSize(first)
	if err != nil {
		return 0, "", err
	}
	start, err := afterKey(after)
	return n, start, err
}

// page is one page of an ordered list.
type page[T any] struct {
	items   []T
	cursors []string
	info    model.PageInfo
	total   int
}

// paginate cuts an in-memory list into the page after the item whose key
// the `after` cursor holds, of size `first`. Keys must be unique.
func paginate[T any](all []T, key func(T) string, first *int, after *string) (page[T], error) {
	n, start, err := pageArgs(first, after)
	if err != nil {
		return page[T]{}, err
	}
	p := page[T]{total: len(all)}
	i := 0
	if start != "" {
		for i < len(all) && key(all[i]) != start {
			i++
		}
		if i == len(all) {
			return page[T]{}, capstan.Errorf(capstan.EINVALID, "after: no item has that cursor any more")
		}
		i++
	}
	p.info.HasPreviousPage = i > 0
	for ; i < len(all) && len(p.items) < n; i++ {
		p.items = append(p.items, all[i])
		p.cursors = append(p.cursors, cursor(key(all[i])))
	}
	p.info.HasNextPage = i < len(all)
	setEnds(&p.info, p.cursors)
	return p, nil
}

func setEnds(info *model.PageInfo, cursors []string) {
	if len(cursors) > 0 {
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[len(cursors)-1]
	}
}

// storePage turns a store page fetched with limit n+1 into edges' cursors
// and page info; key gives each item's cursor key.
func storePage[T any](items []T, n int, after string, key func(T) string) ([]T, []string, *model.PageInfo) {
	info := &model.PageInfo{HasPreviousPage: after != "", HasNextPage: len(items) > n}
	if len(items) > n {
		items = items[:n]
	}
	cursors := make([]string, len(items))
	for i, it := range items {
		cursors[i] = cursor(key(it))
	}
	setEnds(info, cursors)
	return items, cursors, info
}
