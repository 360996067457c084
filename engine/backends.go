package engine

// The engine runs models on every backend Hark ships; linking them here
// means every binary that embeds the engine can select any of them.
import _ "hark/mlx/backends"
