package engine

// MemoryBudget is the memory a model may take, the figure Load checks a
// model's estimate against (0 when this OS does not say, and no check is
// made); `hark doctor` reports it.
func MemoryBudget() int64 { return memoryAvailable() }
