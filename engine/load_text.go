package engine

import (
	"errors"
	"runtime/debug"

	"hark/models/chattemplate"
	"hark/models/tokenizer"
)

// loadText reads what Load needs beside the weights: the tokenizer, the
// chat template (nil for a base model) and the generation config, and
// samples src's float tensors for NaN and Inf (scanWeights). Load runs it
// while the weights load; it only reads dir and src.
func loadText(dir string, src tensorSource) (*tokenizer.Tokenizer, *chattemplate.Template, *generationConfig, error) {
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	// Parsing a 150k-token tokenizer leaves tens of MB of garbage, whose
	// pages Go would keep resident under the weights loaded meanwhile:
	// one collection that returns them (tens of ms, on this goroutine)
	// keeps the peak at the weights plus the tokenizer.
	debug.FreeOSMemory()
	tpl, err := chattemplate.FromTokenizerConfig(dir)
	if errors.Is(err, chattemplate.ErrNoTemplate) {
		tpl, err = nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	gen, err := readGenerationConfig(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := scanWeights(src, dir); err != nil {
		return nil, nil, nil, err
	}
	return tok, tpl, gen, nil
}
