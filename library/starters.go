package library

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"hark/models/profile"
)

// Starter is one model of the starter shelf, suggested on first run.
type Starter struct {
	Repo      string       `json:"repo"`
	Kind      profile.Kind `json:"kind"`
	ModelType string       `json:"model_type"`
	Params    int64        `json:"params"`
	// Bits is how many bits a weight takes in the repo's files, so the
	// shelf can say about how large a download is before asking the Hub.
	Bits int    `json:"bits"`
	Note string `json:"note"`
	// Bytes is the approximate download: Params × Bits / 8.
	Bytes int64 `json:"bytes"`
}

//go:embed starters.json
var startersJSON []byte

// Starters reads the starter shelf (starters.json, embedded).
func Starters() ([]Starter, error) { return parseStarters(startersJSON) }

func parseStarters(b []byte) ([]Starter, error) {
	var doc struct {
		Models []Starter `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("starters.json: %w", err)
	}
	for i := range doc.Models {
		s := &doc.Models[i]
		if err := ValidRepoID(s.Repo); err != nil {
			return nil, fmt.Errorf("starters.json: model %d: %w", i, err)
		}
		if s.Kind != profile.KindChat && s.Kind != profile.KindSpeech {
			return nil, fmt.Errorf("starters.json: %s: kind %q is not chat or speech", s.Repo, s.Kind)
		}
		if s.Params <= 0 || s.Bits <= 0 || s.Bits > 32 || s.ModelType == "" {
			return nil, fmt.Errorf("starters.json: %s needs model_type, params and bits (1-32)", s.Repo)
		}
		s.Bytes = s.Params * int64(s.Bits) / 8
	}
	return doc.Models, nil
}
