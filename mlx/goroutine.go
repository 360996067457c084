package mlx

import "hark/mlx/internal/goid"

// curg keys the calling goroutine's scope stack.
func curg() uintptr { return goid.Current() }
