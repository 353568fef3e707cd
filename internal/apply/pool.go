package apply

import (
	"context"
	"sync"
)

// forEach calls fn(i) for every i in [0, n), at most limit at a time. Once
// ctx is done no further call starts; forEach returns when the started calls
// have returned.
func forEach(ctx context.Context, n, limit int, fn func(i int)) {
	if limit < 1 {
		limit = 1
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if ctx.Err() != nil {
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
}
